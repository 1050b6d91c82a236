# shellcheck shell=bash
# gnuplot figures in the style of the paper's: PNG, labelled axes, a legend, a title. Every figure's
# gnuplot script is kept beside the PNG (FIG.gp, with its data files, which must sit in the same folder)
# so that `cd plots && gnuplot FIG.gp` re-renders it.
# Sourced by run_experiments.sh. Without gnuplot the .gp files are still written and the PNG is skipped.

# The common preamble: terminal, size, fonts, grid, and the legend below the plot (never over a curve),
# for $1 entries whose longest label has $2 characters (up to four entries per row).
gnuplot_preamble() {
  local cols=$((880 / ($2 * 8 + 80)))
  [ "$cols" -gt 4 ] && cols=4
  [ "$cols" -lt 1 ] && cols=1
  local rows=$((($1 + cols - 1) / cols))
  cat <<EOF
set terminal pngcairo size 960,$((600 + 24 * rows)) font "sans,11" noenhanced
set grid back lc rgb "#dddddd"
set key below horizontal box samplen 3 spacing 1.1 height 0.5 maxcols $cols
set bmargin $((5 + rows + rows / 2))
set border lw 1.2
EOF
}

render_plot() {  # render_plot FIG.gp FIG.png
  if ! have_gnuplot; then
    warn "gnuplot not found: $2 not rendered ($1 kept)"
    return 0
  fi
  (cd "$(dirname "$1")" && gnuplot "$(basename "$1")") 2>"$1.log" ||
    { warn "gnuplot failed on $1 (no $2):"; cat "$1.log" >&2; return 0; }
  rm -f "$1.log"
}

# metrics_curve RUN_DIR OUT.dat: "gradient computations per client<TAB>test accuracy" from metrics.csv.
# metrics.csv counts gradients over all clients; the paper's figures count a client's own (K per client).
metrics_curve() {
  local clients
  clients=$(json_count "$1/summary.json" rounds_per_client)
  [ "$clients" -gt 0 ] || clients=1
  csv_column "$1/metrics.csv" gradients test_accuracy |
    awk -F, -v n="$clients" 'BEGIN { print "# gradients_per_client\ttest_accuracy" }
                             { printf "%.10g\t%s\n", $1 / n, $2 }' >"$2"
}

# curve_style LABEL COLOR INDEX: the gnuplot line style of one curve. A label starting with "non-DP" is
# dashed (the ceiling), black unless COLOR (a gnuplot colour index) pairs it with a DP curve; other curves
# are solid in colour COLOR, or INDEX (the curve's position) when COLOR is empty.
curve_style() {
  local color=${2:-}
  if [[ $1 == non-DP* ]]; then
    if [ -n "$color" ]; then printf 'dt 2 lw 2 pt 6 ps 0.8 lc %s' "$color"; else printf 'dt 2 lw 2 pt 6 ps 0.8 lc rgb "black"'; fi
  else
    printf 'lw 2 pt 7 ps 0.6 lc %s' "${color:-$3}"
  fi
}

# plot_series PNG TITLE XLABEL YLABEL EXTRA USING WITH LABEL|FILE[|COLOR]...: the shared body of the
# plots below. EXTRA is extra gnuplot commands (axes), USING the columns, WITH the plot style.
plot_series() {
  local png=$1 title=$2 xlabel=$3 ylabel=$4 extra=$5 using=$6 with=$7
  shift 7
  local gp=${png%.png}.gp spec label rest file color plots="" sep="" index=0 longest=1
  for spec in "$@"; do
    index=$((index + 1))
    label=${spec%%|*}
    [ ${#label} -gt "$longest" ] && longest=${#label}
    rest=${spec#*|}
    file=$(basename "${rest%%|*}")
    color=""
    if [[ $rest == *"|"* ]]; then color=${rest#*|}; fi
    plots+="$sep\"$file\" using $using with $with $(curve_style "$label" "$color" "$index") title \"$label\""
    sep=$', \\\n     '
  done
  {
    gnuplot_preamble "$#" "$longest"
    printf 'set output "%s"\nset title "%s"\nset xlabel "%s"\nset ylabel "%s"\n' "$(basename "$png")" "$title" \
      "$xlabel" "$ylabel"
    [ -n "$extra" ] && printf '%s\n' "$extra"
    printf 'plot %s\n' "$plots"
  } >"$gp"
  render_plot "$gp" "$png"
}

# plot_curves PNG TITLE XLABEL YLABEL LABEL|FILE[|COLOR]...: one line per data file (columns 1:2).
plot_curves() {
  plot_series "$1" "$2" "$3" "$4" "set autoscale xfixmax" "1:2" linespoints "${@:5}"
}

# plot_errorbars PNG TITLE XLABEL YLABEL LOGX LABEL|FILE[|COLOR]...: columns 1:2:3 (x, mean, std) with
# error bars; LOGX = 1 for a logarithmic x axis.
plot_errorbars() {
  local extra=""
  [ "$5" = 1 ] && extra="set logscale x"
  plot_series "$1" "$2" "$3" "$4" "$extra" "1:2:3" yerrorlines "${@:6}"
}

# plot_utility PNG TITLE CSV THRESHOLD: utility graph (Figs 1a-3a, 4-6): accuracy fraction F(w*+n)/F(w*)
# against sigma, one curve per clipping constant C (error bars: std over the draws), the threshold line.
# Writes one data file per C beside the PNG.
plot_utility() {
  local png=$1 title=$2 csv=$3 threshold=$4
  local dir base clip acc specs=()
  dir=$(dirname "$png")
  base=$(basename "${png%.png}")
  for clip in $(csv_column "$csv" clip | awk '!seen[$1]++'); do
    csv_column "$csv" clip sigma mean_fraction std_fraction base_accuracy |
      awk -F, -v c="$clip" 'BEGIN { print "# sigma\tmean_fraction\tstd_fraction\tbase_accuracy" }
                            $1 == c { printf "%s\t%s\t%s\t%s\n", $2, $3, $4, $5 }' >"$dir/$base.C$clip.dat"
    acc=$(awk '!/^#/ { printf "%.3f", $4; exit }' "$dir/$base.C$clip.dat")
    specs+=("C = $clip (F(w*) = $acc)|$dir/$base.C$clip.dat")
  done
  plot_series "$png" "$title" "noise multiplier sigma (noise N(0, C^2 sigma^2 I) added to w*)" \
    "accuracy fraction F(w* + noise) / F(w*)" \
    "set yrange [0:1.05]"$'\n'"set arrow from graph 0, first $threshold to graph 1, first $threshold nohead dt 3 lw 1.5 lc rgb \"gray40\""$'\n'"set label \"threshold $threshold\" at graph 0.01, first $threshold offset 0,0.6 tc rgb \"gray40\"" \
    "1:2:3" yerrorlines "${specs[@]}"
}
