# shellcheck shell=bash
# `run_experiments.sh sweep --config FILE.toml --sample-sizes LIST --epsilons LIST [--seeds N] [--jobs N | --mpi P]`:
# the grid the user asks for. For every seed, sample size s and target ε, one DP run in which asyncdp
# derives σ from ε (dp.epsilon = ε, dp.sigma = 0: calibrated by the configured accountant, which also
# halts clients at the budget), plus one non-private run per (s, seed). The sample size `max` asks the
# paper's DP calculator (`asyncdp calc`, §6.2) for (σ, s_max) at that ε; such runs use the calculator's σ
# and keep ε as the budget. Aggregates mean ± std over seeds into sweep.csv, plots accuracy against each
# axis, and writes REPORT.md.

# Tiny (tests): at most 500 rows per client, 5 epochs, 1,000 evaluation rows, 4 evaluations.
sweep_scale() {
  [ "$SCALE" = tiny ] && printf '%s\n' --set data.rows_per_client=500 --set schedule.iterations=0 \
    --set schedule.rounds=0 --set schedule.epochs=5 --set data.eval_rows=1000 --set eval.points=4
  return 0
}

# Splits a comma list into lines after checking each item with the regular expression $2.
sweep_list() {
  local item
  IFS=, read -r -a items <<<"$1"
  [ ${#items[@]} -gt 0 ] || die "$3: empty list"
  for item in "${items[@]}"; do
    [[ $item =~ $2 ]] || die "$3: '$item' is not valid"
    printf '%s\n' "$item"
  done
}

# sweep_calc_max EPS N K DELTA: "s_max<TAB>sigma" from the paper's calculator for target ε (needs
# `asyncdp calc --epsilon`), or nothing when the calculator finds no admissible setting.
sweep_calc_max() {
  local json=$OUT_DIR/data/calc_eps$1.json
  run_asyncdp "$json.log" calc --N "$2" --K "$3" --delta "$4" --epsilon "$1" --mode paper || return 1
  sed -n '/^{/,$p' "$json.log" >"$json"
  json_get "$json" s_max sigma
}

sweep_main() {
  [ -n "$CONFIG_ARG" ] || die "sweep needs --config FILE.toml"
  [ -f "$CONFIG_ARG" ] || die "--config $CONFIG_ARG: no such file"
  [ -n "$SAMPLE_SIZES_ARG" ] || die "sweep needs --sample-sizes (e.g. 1,5,10,26 or 1,5,max)"
  [ -n "$EPSILONS_ARG" ] || die "sweep needs --epsilons (e.g. 0.05,0.1,0.5,1)"
  local config
  config=$(cd "$(dirname "$CONFIG_ARG")" && pwd)/$(basename "$CONFIG_ARG")
  local name
  name=$(basename "${config%.toml}")
  OUT_DIR=${OUT_ARG:-$REPO_DIR/results/sweep/$name}
  local -a sizes epsilons scale threads
  mapfile -t sizes < <(sweep_list "$SAMPLE_SIZES_ARG" '^([1-9][0-9]*|max)$' --sample-sizes)
  mapfile -t epsilons < <(sweep_list "$EPSILONS_ARG" '^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$' --epsilons)
  prepare_out_dir
  mapfile -t scale < <(sweep_scale)
  mapfile -t threads < <(thread_overrides)
  local base_seed
  # The configuration as asyncdp resolves it (validated without DP, whose σ/ε the sweep sets per run).
  local resolved
  resolved=$("$ASYNCDP" train --config "$config" "${scale[@]}" --set dp.enabled=false --print-config 2>&1) ||
    die "asyncdp cannot use $config: $resolved"
  base_seed=$(printf '%s\n' "$resolved" | awk -F' *= *' '$1 == "seed" { print $2; exit }')
  [[ $base_seed =~ ^[0-9]+$ ]] || die "no seed in the resolved configuration of $config"
  local start
  start=$(now_seconds)
  local runs=$OUT_DIR/runs seed s eps j
  log "sweep: ${#sizes[@]} sample sizes x ${#epsilons[@]} epsilons (+ non-DP) x $SEEDS_ARG seeds of $name"

  # Non-private runs first: they also tell us N_c, K and δ for the calculator (`max`).
  for ((j = 0; j < SEEDS_ARG; j++)); do
    seed=$((base_seed + j))
    for s in "${sizes[@]}"; do
      [ "$s" = max ] && continue
      spawn train_run "$runs/nondp_s${s}_seed$seed" "$config" "${scale[@]}" "${threads[@]}" \
        --set dp.enabled=false --set "schedule.sample_size=$s" --set "seed=$seed"
    done
  done
  wait_all || true

  declare -A max_size=() max_sigma=()
  if printf '%s\n' "${sizes[@]}" | grep -qx max; then
    sweep_resolve_max "$config" "$base_seed" "${scale[@]}" || die "could not derive s_max (see above)"
  fi

  for ((j = 0; j < SEEDS_ARG; j++)); do
    seed=$((base_seed + j))
    for s in "${sizes[@]}"; do
      for eps in "${epsilons[@]}"; do
        if [ "$s" = max ]; then
          [ -n "${max_size[$eps]:-}" ] || continue
          spawn train_run "$runs/dp_smax_eps${eps}_seed$seed" "$config" "${scale[@]}" "${threads[@]}" \
            --set dp.enabled=true --set "schedule.sample_size=${max_size[$eps]}" --set "dp.sigma=${max_sigma[$eps]}" \
            --set "dp.epsilon=$eps" --set "seed=$seed"
        else
          spawn train_run "$runs/dp_s${s}_eps${eps}_seed$seed" "$config" "${scale[@]}" "${threads[@]}" \
            --set dp.enabled=true --set "schedule.sample_size=$s" --set dp.sigma=0 --set "dp.epsilon=$eps" \
            --set "seed=$seed"
        fi
      done
    done
  done
  wait_all || true
  local run_seconds
  run_seconds=$(elapsed_since "$start")

  sweep_collect
  sweep_plots
  sweep_report "$name" "$config" "$run_seconds" >"$OUT_DIR/REPORT.md"
  log "sweep: done in $run_seconds s -> $OUT_DIR/REPORT.md"
  [ ! -s "$OUT_DIR/.failed" ]
}

# Fills max_size[ε] / max_sigma[ε] from `asyncdp calc` with N_c, K (realised per-client mean is not what
# the calculator wants: it takes the planned K) and δ of the first non-private run.
sweep_resolve_max() {
  local config=$1 base_seed=$2
  shift 2
  local probe
  probe=$(find "$OUT_DIR/runs" -maxdepth 2 -name summary.json -path '*nondp_*' | head -n 1)
  if [ -z "$probe" ]; then
    probe=$OUT_DIR/runs/probe_seed$base_seed
    train_run "$probe" "$config" "$@" --set dp.enabled=false || return 1
    probe=$probe/summary.json
  fi
  local n delta k eps line
  read -r n delta <<<"$(json_get "$probe" records_per_client delta)"
  k=$(toml_get "$(dirname "$probe")/config.resolved.toml" schedule iterations)
  if [ -z "$k" ] || [ "$k" = 0 ]; then
    k=$(awk -v e="$(toml_get "$(dirname "$probe")/config.resolved.toml" schedule epochs)" -v n="$n" \
      'BEGIN { printf "%.0f", e * n }')
  fi
  for eps in "${epsilons[@]}"; do
    line=$(sweep_calc_max "$eps" "$n" "$k" "$delta") || return 1
    read -r "max_size[$eps]" "max_sigma[$eps]" <<<"$line"
    if ! [[ ${max_size[$eps]} =~ ^[1-9][0-9]*$ ]]; then
      warn "sweep: no admissible s_max for epsilon $eps (N = $n, K = $k, delta = $delta); skipped"
      unset "max_size[$eps]"
    else
      log "sweep: epsilon $eps -> s_max ${max_size[$eps]}, sigma ${max_sigma[$eps]} (asyncdp calc, N = $n, K = $k)"
    fi
  done
}

# sweep_runs.csv (one line per run) and sweep.csv (mean ± std over seeds per (s, ε)).
sweep_collect() {
  local dir
  {
    echo "kind,sample_size,epsilon_target,seed,sigma,test_accuracy,eps_rdp,eps_pld,eps_gdp,eps_proactive,wall_seconds,run"
    for dir in "$OUT_DIR"/runs/*/; do
      dir=${dir%/}
      [ -f "$dir/summary.json" ] || continue
      local run kind target
      run=$(basename "$dir")
      case $run in
        nondp_*) kind=non-DP; target=inf ;;
        dp_smax_*) kind=s_max; target=${run#dp_smax_eps}; target=${target%_seed*} ;;
        dp_*) kind=DP; target=${run#*_eps}; target=${target%_seed*} ;;
        *) continue ;;
      esac
      json_get "$dir/summary.json" sample_size seed sigma test_accuracy epsilon.rdp epsilon.pld epsilon.gdp \
        epsilon.proactive wall_seconds |
        awk -F'\t' -v k="$kind" -v t="$target" -v r="$run" 'BEGIN { OFS = "," }
          { print k, $1, t, $2, $3, $4, $5, $6, $7, $8, $9, r }'
    done
  } >"$OUT_DIR/sweep_runs.csv"
  awk -F, 'NR > 1 {
      key = $1 "," $2 "," $3
      if (!(key in n)) order[++keys] = key
      n[key]++; acc[key] += $6; acc2[key] += $6 * $6; sig[key] += $5; w[key] += $11
      for (c = 7; c <= 10; c++) { if ($c == "null" || $c == "NA") nulls[key, c]++; else eps[key, c] += $c }
    }
    END {
      print "kind,sample_size,epsilon_target,seeds,sigma_mean,accuracy_mean,accuracy_std,eps_rdp_mean,eps_pld_mean,eps_gdp_mean,eps_proactive_mean,wall_seconds_mean"
      for (i = 1; i <= keys; i++) {
        k = order[i]; m = acc[k] / n[k]
        var = n[k] > 1 ? (acc2[k] - n[k] * m * m) / (n[k] - 1) : 0
        if (var < 0) var = 0
        dp = (k !~ /^non-DP/)
        printf "%s,%d,%.6g,%.6f,%.6f", k, n[k], sig[k] / n[k], m, sqrt(var)
        # "inf": no noise; "null": the accountant gave no finite value (e.g. (6) needs sigma^2 > 2)
        for (c = 7; c <= 10; c++) printf ",%s", !dp ? "inf" : (nulls[k, c] ? "null" : sprintf("%.6g", eps[k, c] / n[k]))
        printf ",%.3f\n", w[k] / n[k]
      }
    }' "$OUT_DIR/sweep_runs.csv" | { read -r header; echo "$header"; sort -t, -k1,1 -k3,3g -k2,2n; } >"$OUT_DIR/sweep.csv"
}

sweep_plots() {
  local p=$OUT_DIR/plots specs=() eps s kind
  # Accuracy against the sample size: one curve per ε (and the s_max points), non-DP dashed.
  for eps in $(awk -F, 'NR > 1 && $1 != "non-DP" { print $3 }' "$OUT_DIR/sweep.csv" | sort -g -u); do
    awk -F, -v e="$eps" 'NR > 1 && $1 != "non-DP" && $3 == e { printf "%s\t%s\t%s\n", $2, $6, $7 }' \
      "$OUT_DIR/sweep.csv" | sort -n >"$p/by_s_eps$eps.dat"
    specs+=("epsilon = $eps|$p/by_s_eps$eps.dat")
  done
  awk -F, 'NR > 1 && $1 == "non-DP" { printf "%s\t%s\t%s\n", $2, $6, $7 }' "$OUT_DIR/sweep.csv" | sort -n \
    >"$p/by_s_nondp.dat"
  [ -s "$p/by_s_nondp.dat" ] && specs+=("non-DP|$p/by_s_nondp.dat")
  plot_errorbars "$p/accuracy_vs_sample_size.png" "Final test accuracy vs constant sample size s (mean ± std over seeds)" \
    "sample size s" "test accuracy" 1 "${specs[@]}"
  # Accuracy against ε: one curve per s (s_max as its own curve), non-DP per s as a flat dashed line.
  specs=()
  local lo hi color=0
  lo=$(awk -F, 'NR > 1 && $1 != "non-DP" { print $3 }' "$OUT_DIR/sweep.csv" | sort -g | head -n 1)
  hi=$(awk -F, 'NR > 1 && $1 != "non-DP" { print $3 }' "$OUT_DIR/sweep.csv" | sort -g | tail -n 1)
  for s in $(awk -F, 'NR > 1 && $1 == "DP" { print $2 }' "$OUT_DIR/sweep.csv" | sort -n -u); do
    color=$((color + 1))
    awk -F, -v s="$s" 'NR > 1 && $1 == "DP" && $2 == s { printf "%s\t%s\t%s\n", $3, $6, $7 }' \
      "$OUT_DIR/sweep.csv" | sort -g >"$p/by_eps_s$s.dat"
    specs+=("s = $s|$p/by_eps_s$s.dat|$color")
    awk -F, -v s="$s" -v lo="$lo" -v hi="$hi" 'NR > 1 && $1 == "non-DP" && $2 == s {
        printf "%s\t%s\t%s\n%s\t%s\t%s\n", lo, $6, $7, hi, $6, $7 }' "$OUT_DIR/sweep.csv" >"$p/by_eps_nondp_s$s.dat"
    [ -s "$p/by_eps_nondp_s$s.dat" ] && specs+=("non-DP, s = $s|$p/by_eps_nondp_s$s.dat|$color")
  done
  awk -F, 'NR > 1 && $1 == "s_max" { printf "%s\t%s\t%s\n", $3, $6, $7 }' "$OUT_DIR/sweep.csv" | sort -g \
    >"$p/by_eps_smax.dat"
  [ -s "$p/by_eps_smax.dat" ] && specs+=("s = s_max (calc)|$p/by_eps_smax.dat|$((color + 1))")
  plot_errorbars "$p/accuracy_vs_epsilon.png" "Final test accuracy vs target epsilon (mean ± std over seeds)" \
    "target epsilon (sigma derived by asyncdp)" "test accuracy" 1 "${specs[@]}"
}

# Shape checks on sweep.csv: per ε, is accuracy non-decreasing in s; per s, non-decreasing in ε; is the
# non-DP run the ceiling. A tolerance of one standard deviation (or 0.005) absorbs seed noise.
sweep_checks() {
  awk -F, 'NR > 1 {
      if ($1 == "non-DP") { nondp[$2] = $6; next }
      n++; kind[n] = $1; s[n] = $2; e[n] = $3; a[n] = $6; sd[n] = $7
    }
    function tol(i, j) { t = sd[i] > sd[j] ? sd[i] : sd[j]; return t > 0.005 ? t : 0.005 }
    END {
      print "| check | pairs in order | pairs out of order (with numbers) | verdict |"
      print "|---|---|---|---|"
      ok = 0; bad = ""; tot = 0
      for (i = 1; i <= n; i++) for (j = 1; j <= n; j++)
        if (e[i] == e[j] && s[i] + 0 < s[j] + 0) { tot++; if (a[j] >= a[i] - tol(i, j)) ok++; else bad = bad sprintf("eps %s: s %s %.4f > s %s %.4f; ", e[i], s[i], a[i], s[j], a[j]) }
      printf "| larger s gives better accuracy (same eps) | %d/%d | %s | %s |\n", ok, tot, bad == "" ? "-" : bad, tot == 0 ? "not measured" : (ok == tot ? "**holds**" : "**does not hold**")
      ok = 0; bad = ""; tot = 0
      for (i = 1; i <= n; i++) for (j = 1; j <= n; j++)
        if (kind[i] == "DP" && kind[j] == "DP" && s[i] == s[j] && e[i] + 0 < e[j] + 0) { tot++; if (a[j] >= a[i] - tol(i, j)) ok++; else bad = bad sprintf("s %s: eps %s %.4f > eps %s %.4f; ", s[i], e[i], a[i], e[j], a[j]) }
      printf "| larger eps gives better accuracy (same s) | %d/%d | %s | %s |\n", ok, tot, bad == "" ? "-" : bad, tot == 0 ? "not measured" : (ok == tot ? "**holds**" : "**does not hold**")
      ok = 0; bad = ""; tot = 0
      for (i = 1; i <= n; i++) if (s[i] in nondp) { tot++; if (nondp[s[i]] >= a[i] - (sd[i] > 0.005 ? sd[i] : 0.005)) ok++; else bad = bad sprintf("s %s eps %s: DP %.4f > non-DP %.4f; ", s[i], e[i], a[i], nondp[s[i]]) }
      printf "| non-private is the ceiling (same s) | %d/%d | %s | %s |\n", ok, tot, bad == "" ? "-" : bad, tot == 0 ? "not measured" : (ok == tot ? "**holds**" : "**does not hold**")
    }' "$OUT_DIR/sweep.csv"
}

# How the runs were executed, for the report (the results themselves do not depend on it: every run has its
# own seed and output directory).
sweep_execution() {
  if [ "$MPI_RANKS" -gt 0 ]; then
    printf 'spread over %s MPI ranks with `%s`, one run per rank at a time' "$MPI_RANKS" "$(mpi_launcher)"
  else
    printf '%s run(s) at a time on this machine' "$JOBS"
  fi
}

sweep_report() {
  local name=$1 config=$2 run_seconds=$3
  cat <<EOF
# Sweep: $name

$(report_provenance sweep --config "${config#"$REPO_DIR"/}" --sample-sizes "$SAMPLE_SIZES_ARG" --epsilons "$EPSILONS_ARG" --seeds "$SEEDS_ARG")

Wall time of the runs: **$run_seconds s** ($(sweep_execution)). Base configuration: \`${config#"$REPO_DIR"/}\` (its data, model, K,
clients and accountant); per run only \`schedule.sample_size\`, \`dp.*\` and \`seed\` change (\`manifest.tsv\`).
DP runs set \`dp.epsilon\` = the target and \`dp.sigma = 0\`, so asyncdp calibrates σ with the configured
accountant (\`dp.accountant\`) and halts a client before it would exceed the budget; \`s_max\` runs use the
paper's calculator (\`asyncdp calc --mode paper\`) for σ and s. Non-DP runs: \`dp.enabled = false\` (clipped,
no noise). ε columns are the means over seeds of what each run reports (per client, δ of the run).

## Results (mean ± std over $SEEDS_ARG seed(s))

| kind | s | target ε | seeds | σ | test accuracy | ε RDP | ε PLD | ε GDP | ε (6) | wall s |
|---|---|---|---|---|---|---|---|---|---|---|
$(awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %.5g | **%.4f** ± %.4f | %s | %s | %s | %s | %.1f |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 }' "$OUT_DIR/sweep.csv")

$(image "accuracy vs sample size" "$OUT_DIR/plots/accuracy_vs_sample_size.png")

$(image "accuracy vs epsilon" "$OUT_DIR/plots/accuracy_vs_epsilon.png")

## Shape checks

$(sweep_checks)

Files: \`sweep.csv\` (aggregated), \`sweep_runs.csv\` (every run), \`runs/<run>/\` (configuration, seed, curves).
EOF
  failed_section
}
