# shellcheck shell=bash
# Convergence measured the way the theory states it (sourced by quick.sh and paper.sh):
#   * the reference optimum w* of a run's convex objective (`asyncdp reference-optimum`, cached in
#     $OUT_DIR/reference/<problem>/ and reused while the objective is unchanged);
#   * per evaluation, the suboptimality F(ŵ_t) − F(w*) and, when the run records it, ||ŵ_t − w*||²;
#   * least-squares slopes on log-log axes, the slope the step-size schedule predicts over the same window,
#     and the level a curve settles at (its floor);
#   * log-log figures.
# Every number comes from asyncdp's outputs; this file only reads, fits and plots them.

# convergence_reference PROBLEM RUN_DIR: w* of the objective RUN_DIR trained on, into
# $OUT_DIR/reference/PROBLEM (summary.json). The run's own resolved configuration fixes the data, the
# shards and λ, so F is exactly the run's objective.
convergence_reference() {
  local problem=$1 run=$2 out=$OUT_DIR/reference/$1
  [ -f "$run/config.resolved.toml" ] || return 1
  mkdir -p "$OUT_DIR/reference"
  printf '%s\t%s\t%s\n' "reference/$problem" "${run#"$OUT_DIR"/}/config.resolved.toml" "reference-optimum --reuse" \
    >>"$MANIFEST"
  run_asyncdp "$out.log" reference-optimum --config "$run/config.resolved.toml" --out "$out" --reuse --quiet
}

# convergence_reference_config PROBLEM CONFIG [--set k=v]...: w* of the objective a run of CONFIG with
# these overrides trains on, into $OUT_DIR/reference/PROBLEM, computed before the runs so that they can
# record F(ŵ_t) − F(w*) and ||ŵ_t − w*||² themselves (--set eval.reference_optimum=DIR).
convergence_reference_config() {
  local problem=$1 config=$2 out=$OUT_DIR/reference/$1
  shift 2
  mkdir -p "$OUT_DIR/reference"
  printf '%s\t%s\t%s\n' "reference/$problem" "$config" "reference-optimum --reuse $*" >>"$MANIFEST"
  run_asyncdp "$out.log" reference-optimum --config "$config" "$@" --out "$out" --reuse --quiet
}

# subopt_curve RUN_DIR REFERENCE_DIR OUT.dat: "gradients per client<TAB>F(ŵ) − F(w*)<TAB>||ŵ − w*||²" per
# evaluation. Uses metrics.csv's `diag_suboptimality` and `diag_distance_sq` columns when the run records
# them (eval.reference_optimum). Otherwise F(ŵ) is the diag_train_loss column, which is the objective over
# every training row when eval.train_rows covers them and no shard is capped; the distance is then "NA".
# Returns 1 (and writes nothing) when neither is available.
subopt_curve() {
  local run=$1 ref=$2 out=$3 clients f_star records
  [ -f "$run/metrics.csv" ] && [ -f "$ref/summary.json" ] || return 1
  clients=$(clients_of "$run")
  read -r f_star records <<<"$(json_get "$ref/summary.json" evaluated_objective records)"
  local header
  header=$(head -n 1 "$run/metrics.csv")
  if [[ ,$header, != *,diag_suboptimality,* ]]; then
    local rows cap
    rows=$(toml_get "$run/config.resolved.toml" eval train_rows)
    cap=$(toml_get "$run/config.resolved.toml" data rows_per_client)
    [ "${cap:-1}" = 0 ] && [ "${rows:-0}" -ge "$records" ] 2>/dev/null || return 1
  fi
  awk -F, -v n="$clients" -v f="$f_star" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
              print "# gradients_per_client\tsuboptimality\tdistance_sq"; next }
    { sub_opt = ("diag_suboptimality" in col) ? $(col["diag_suboptimality"]) : $(col["diag_train_loss"]) - f
      dist = ("diag_distance_sq" in col) ? $(col["diag_distance_sq"]) : "NA"
      printf "%.10g\t%.6e\t%s\n", $(col["gradients"]) / n, sub_opt, dist }' "$run/metrics.csv" >"$out"
}

# loglog_fit DAT [COLUMN] [FROM]: least-squares slope of log10(y) on log10(x) over the points with
# x >= FROM · (largest x) (default 0.1: the last decade of the run) and y > 0. Prints
# "slope<TAB>points<TAB>x_first<TAB>x_last", or "NA" fields when fewer than 3 points qualify.
loglog_fit() {
  awk -v c="${2:-2}" -v from="${3:-0.1}" '
    !/^#/ { n++; x[n] = $1; y[n] = $c; if ($1 + 0 > m) m = $1 + 0 }
    END {
      for (i = 1; i <= n; i++) {
        if (x[i] + 0 < from * m || x[i] + 0 <= 0 || y[i] == "NA" || y[i] + 0 <= 0) continue
        lx = log(x[i]) / log(10); ly = log(y[i]) / log(10)
        k++; sx += lx; sy += ly; sxx += lx * lx; sxy += lx * ly
        if (k == 1) first = x[i]; last = x[i]
      }
      if (k < 3 || sxx - sx * sx / k <= 0) { print "NA\tNA\tNA\tNA"; exit }
      printf "%.3f\t%d\t%.0f\t%.0f\n", (sxy - sx * sy / k) / (sxx - sx * sx / k), k, first, last
    }' "$1"
}

# curve_floor DAT [COLUMN]: the median of a curve over its last quarter (x >= 3/4 of the largest x): the
# level a curve that levels off settles at.
curve_floor() {
  awk -v c="${2:-2}" '!/^#/ { n++; x[n] = $1; y[n] = $c; if ($1 + 0 > m) m = $1 + 0 }
    END { for (i = 1; i <= n; i++) if (x[i] >= 0.75 * m && y[i] != "NA") v[++k] = y[i] + 0
          if (!k) { print "NA"; exit }
          for (i = 2; i <= k; i++) { t = v[i]; j = i - 1; while (j > 0 && v[j] > t) { v[j + 1] = v[j]; j-- } v[j + 1] = t }
          printf "%.3e", (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }' "$1"
}

# curve_last DAT [COLUMN]: the value at the last evaluation.
curve_last() { awk -v c="${2:-2}" '!/^#/ { v = $c } END { if (v == "") print "NA"; else printf "%.3e", v }' "$1"; }

# schedule_slope RUN_DIR X1 X2: the log-log slope of the run's step size η(t) between t = X1 and X2
# (gradient computations per client). The convergence bounds scale with η(t): E[F − F*] = O(η(t)) for
# η0/(1 + βt) on a strongly convex objective (≈ 1/t once βt ≫ 1) and O(η(t)) up to a log factor for
# η0/(1 + β√t) on a convex one (≈ 1/√t once β√t ≫ 1), so this is the rate the schedule predicts over
# exactly the fitted window — steeper or flatter than the asymptotic −1 / −1/2 while βt or β√t is still
# near 1.
schedule_slope() {
  local run=$1 x1=$2 x2=$3 rule beta
  rule=$(toml_get "$run/config.resolved.toml" schedule step_rule)
  beta=$(toml_get "$run/config.resolved.toml" schedule beta)
  awk -v r="$rule" -v b="$beta" -v a="$x1" -v z="$x2" 'BEGIN {
    if (a == "NA" || z == "NA" || a + 0 <= 0 || z + 0 <= a + 0) { print "NA"; exit }
    if (r == "inverse_linear") { e1 = 1 / (1 + b * a); e2 = 1 / (1 + b * z) }
    else if (r == "inverse_sqrt") { e1 = 1 / (1 + b * sqrt(a)); e2 = 1 / (1 + b * sqrt(z)) }
    else { e1 = 1; e2 = 1 }
    printf "%.3f", log(e2 / e1) / log(z / a) }'
}

# clipped_fraction RUN_DIR: the fraction of per-example gradients clipped, over all clients (clients.csv, a non-private diagnostic).
clipped_fraction() {
  [ -f "$1/clients.csv" ] || { echo NA; return; }
  csv_column "$1/clients.csv" diag_gradients diag_clipped_fraction |
    awk -F, '{ g += $1; c += $1 * $2 } END { if (g > 0) printf "%.3f", c / g; else print "NA" }'
}

# asymptotic_slope RUN_DIR: −1 (η0/(1+βt)), −0.5 (η0/(1+β√t)) or 0 (constant step).
asymptotic_slope() {
  case $(toml_get "$1/config.resolved.toml" schedule step_rule) in
    inverse_linear) echo "-1" ;;
    inverse_sqrt) echo "-0.5" ;;
    *) echo "0" ;;
  esac
}

# rate_verdict FITTED PREDICTED: a bound only caps the rate, so a curve that falls at least as fast as the
# schedule predicts (within 0.15) meets it.
rate_verdict() {
  awk -v f="$1" -v p="$2" 'BEGIN {
    if (f == "NA" || p == "NA") { print "not measured"; exit }
    print (f + 0 <= p + 0.15) ? "**holds**" : "**does not hold**" }'
}

# plot_loglog PNG TITLE XLABEL YLABEL COLUMN LABEL|FILE|COLOR|DASH...: log-log lines (y <= 0 skipped),
# COLOR a gnuplot colour index, DASH a dash type (1 solid, 2 dashed, 3 dotted).
plot_loglog() {
  local png=$1 title=$2 xlabel=$3 ylabel=$4 column=$5
  shift 5
  local gp=${png%.png}.gp spec label file color dash plots="" sep="" longest=1 rest
  for spec in "$@"; do
    IFS='|' read -r label file color dash <<<"$spec"
    [ -f "$file" ] || continue
    [ ${#label} -gt "$longest" ] && longest=${#label}
    plots+="$sep\"$(basename "$file")\" using 1:(\$$column > 0 ? \$$column : 1/0) with lines lw 2 lc $color dt $dash title \"$label\""
    sep=$', \\\n     '
  done
  [ -n "$plots" ] || return 0
  {
    gnuplot_preamble "$#" "$longest"
    printf 'set output "%s"\nset title "%s"\nset xlabel "%s"\nset ylabel "%s"\n' "$(basename "$png")" "$title" \
      "$xlabel" "$ylabel"
    printf 'set logscale xy\nset format y "%%.0e"\nset datafile missing "NA"\n'
    printf 'plot %s\n' "$plots"
  } >"$gp"
  render_plot "$gp" "$png"
}

# plot_metric PNG TITLE XLABEL YLABEL COLUMN LOGY LABEL|RUN_DIR|COLOR|DASH...: one metrics.csv column
# against gradient computations per client (log x; LOGY = 1 for a log y axis). Writes RUN.COLUMN.dat
# beside the PNG; a run whose metrics lack the column is left out.
plot_metric() {
  local png=$1 title=$2 xlabel=$3 ylabel=$4 column=$5 logy=$6
  shift 6
  local dir spec label run color dash clients dat specs=()
  dir=$(dirname "$png")
  for spec in "$@"; do
    IFS='|' read -r label run color dash <<<"$spec"
    [ -f "$run/metrics.csv" ] || continue
    [[ ,$(head -n 1 "$run/metrics.csv"), == *,$column,* ]] || continue
    clients=$(clients_of "$run")
    dat=$dir/$(basename "$run").$column.dat
    csv_column "$run/metrics.csv" gradients "$column" |
      awk -F, -v n="$clients" 'BEGIN { print "# gradients_per_client\tvalue" } { printf "%.10g\t%s\n", $1 / n, $2 }' >"$dat"
    specs+=("$label|$dat|$color|$dash")
  done
  [ ${#specs[@]} -gt 0 ] || return 1
  if [ "$logy" = 1 ]; then
    plot_loglog "$png" "$title" "$xlabel" "$ylabel" 2 "${specs[@]}"
  else
    local gp=${png%.png}.gp plots="" sep="" longest=1
    for spec in "${specs[@]}"; do
      IFS='|' read -r label dat color dash <<<"$spec"
      [ ${#label} -gt "$longest" ] && longest=${#label}
      plots+="$sep\"$(basename "$dat")\" using 1:2 with linespoints lw 2 pt 7 ps 0.5 lc $color dt $dash title \"$label\""
      sep=$', \\\n     '
    done
    {
      gnuplot_preamble "${#specs[@]}" "$longest"
      printf 'set output "%s"\nset title "%s"\nset xlabel "%s"\nset ylabel "%s"\nset logscale x\n' \
        "$(basename "$png")" "$title" "$xlabel" "$ylabel"
      printf 'plot %s\n' "$plots"
    } >"$gp"
    render_plot "$gp" "$png"
  fi
}
