# shellcheck shell=bash
# `run_experiments.sh audit`: the empirical privacy audit (`asyncdp audit`, docs/audit.md) of a set of
# configurations — Poisson / fixed-size / shuffled batches, 1 round, 10 rounds and a full short run,
# logistic regression and a small MLP, both observer views, the one-run audit — plus two deliberately
# wrong accountants that must come out as VIOLATION. Writes OUT_DIR (default results/audit): runs/ (one
# `asyncdp audit` output folder per configuration), plots/, audit.csv and REPORT.md.

# The audit rows: name | what it checks | expected verdict | asyncdp audit arguments (after --config).
# The base configuration is experiments/audit_logistic.toml (5 clients, N_c = 1,000, T = 10, full batch,
# sigma = sqrt(10): mu = 1).
audit_rows() {
  cat <<'EOF'
poisson_full_T1|Poisson, full batch, 1 round, sigma = 1 (the Gaussian mechanism)|consistent|--set schedule.rounds=1 --set dp.sigma=1
poisson_full_T10|Poisson, full batch, 10 rounds, sigma = sqrt(10)|consistent|
poisson_q0.1_T10|Poisson, q = 0.1, 10 rounds, sigma = 1 (likelihood ratio)|consistent|--set schedule.sample_size=100 --set dp.sigma=1
poisson_short_run|Poisson, q = 0.05, one epoch (20 rounds), L2 logistic, inverse-sqrt steps|consistent|--set schedule.sample_size=50 --set schedule.rounds=0 --set schedule.epochs=1 --set model.kind=logistic_l2 --set schedule.step_rule=inverse_sqrt --set schedule.beta=0.01 --set dp.sigma=1
fixed_q0.1_T10|fixed-size, q = 0.1, 10 rounds, sigma = 1|consistent|--set dp.sampling=fixed_size_without_replacement --set schedule.sample_size=100 --set dp.sigma=1
fixed_q0.5_T1_opposite|fixed-size, q = 0.5, 1 round, sigma = 1, opposite records (replace-one worst case)|consistent|--set dp.sampling=fixed_size_without_replacement --set schedule.sample_size=500 --set schedule.rounds=1 --set dp.sigma=1 --canary opposite
shuffle_2_epochs|shuffle, s = 500 (2 epochs in 4 rounds), sigma = 2|consistent|--set dp.sampling=shuffle --set schedule.sample_size=500 --set schedule.rounds=4 --set dp.sigma=2
mlp_poisson_q0.1_T10|MLP (16 hidden), Poisson, q = 0.1, 10 rounds, sigma = 1|consistent|--set model.kind=mlp --set model.hidden=[16] --set schedule.sample_size=100 --set dp.sigma=1
poisson_full_T10_final_model|as poisson_full_T10, final-model view (other clients' noise too)|consistent|--view final-model
poisson_full_T10_mislabelled|as poisson_full_T10, a mislabelled real record, final-model loss (black box)|consistent|--canary mislabelled --view final-model
poisson_full_T10_one_run|as poisson_full_T10, one-run audit with 1,000 canaries|consistent|--mode one-run --canaries 1000
FAULT_noise_0.7sigma|fault: noise 0.7 sigma accounted as sigma (as poisson_full_T10)|VIOLATION|--test-noise-scale 0.7
FAULT_old_fixed_size_pair|fault: fixed_q0.5_T1_opposite accounted with the old pair (1-q)N(0)+qN(1)|VIOLATION|--set dp.sampling=fixed_size_without_replacement --set schedule.sample_size=500 --set schedule.rounds=1 --set dp.sigma=1 --canary opposite --test-accounted-sampling poisson
EOF
}

# The one-run audit attached to a training run (`asyncdp train --set audit.canaries=m`, docs/audit.md
# "Auditing a training run"): name | what | expected verdict | asyncdp train arguments (after --config).
train_audit_rows() {
  cat <<'EOF'
train_dirac_fixed_full_T10|Dirac canaries, fixed-size full batch (each planted canary replaces a record), 10 rounds, sigma = sqrt(10)|consistent|--set dp.sampling=fixed_size_without_replacement
train_dirac_poisson_s1000_T10|Dirac canaries, Poisson, s = 1000 (client 0: q = 1000 / (1000 + planted)), 10 rounds, sigma = sqrt(10)|consistent|
train_dirac_poisson_s100_T10|Dirac canaries, Poisson, s = 100, 10 rounds, sigma = 1 (likelihood ratio)|consistent|--set schedule.sample_size=100 --set dp.sigma=1
train_dirac_fixed_q0.1_T10|Dirac canaries, fixed-size, q = 0.1, 10 rounds, sigma = 1 (replace-one)|consistent|--set dp.sampling=fixed_size_without_replacement --set schedule.sample_size=100 --set dp.sigma=1
train_mislabelled_fixed_full_T10|mislabelled records, fixed-size full batch, 10 rounds, final model|consistent|--set dp.sampling=fixed_size_without_replacement --set audit.canary=mislabelled
FAULT_train_noise_0.05sigma|fault: noise 0.05 sigma accounted as sigma = 16 (fixed-size full batch, 10 rounds)|VIOLATION|--set dp.sampling=fixed_size_without_replacement --set dp.sigma=16 --set audit.test_noise_scale=0.05
EOF
}

# Canaries of a training-run audit at each scale.
train_audit_canaries() {
  case $SCALE in
    tiny) echo 100 ;;
    *) echo 1000 ;;
  esac
}

# audit_invoke COMMAND NAME ARGS...: one `asyncdp COMMAND` (`audit`, or `train` with its audit) of the audit
# configuration into runs/NAME, recorded in the manifest; exit code 3 (VIOLATION) is a result, not a failure.
audit_invoke() {
  local command=$1 name=$2
  shift 2
  local dir=$OUT_DIR/runs/$name
  local -a invocation=("$command")
  [ "$command" = train ] && invocation+=(--quiet)  # a training run's progress would fill its log
  printf '%s\t%s\t%s\n' "runs/$name" "$REPO_DIR/experiments/audit_logistic.toml" "$*" >>"$MANIFEST"
  local rc=0
  "$ASYNCDP" "${invocation[@]}" --config "$REPO_DIR/experiments/audit_logistic.toml" "$@" --out "$dir" >"$dir.log" 2>&1 ||
    rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
    warn "asyncdp $command ($name) failed (exit $rc); last lines of $dir.log:"
    tail -n 5 "$dir.log" >&2
    echo "$command $name" >>"$OUT_DIR/.failed"
  fi
}

# train_audit_run NAME ARGS...: one `asyncdp train` with its audit.
train_audit_run() { audit_invoke train "$@"; }

# One table row per training-run audit, from runs/NAME/summary.json.
train_audit_table() {
  echo "| config | what | ε RDP | ε PLD | ε_lower (95%) | ratio ε_lower / PLD | canaries (planted) | N_c (without) | correct / guesses | verdict | expected | test accuracy | wall s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  local name what expected rest
  while IFS='|' read -r name what expected rest; do
    local json=$OUT_DIR/runs/$name/summary.json
    if [ ! -f "$json" ]; then
      echo "| $name | failed: see \`runs/$name.log\` ||||||||||||"
      continue
    fi
    json_flat "$json" | awk -F'\t' -v name="$name" -v what="$what" -v expected="$expected" '
      { v[$1] = $2 }
      function g(k) { return (k in v) ? v[k] : "NA" }
      function f(x) { return (x == "NA" || x == "null" || x == "") ? "–" : sprintf("%.3g", x) }
      END {
        pld = g("audit.reported.pld.epsilon"); low = g("audit.eps_lower.epsilon")
        ratio = (pld + 0 > 0) ? sprintf("%.3g", low / pld) : "–"
        mark = (g("audit.verdict") == expected) ? "" : " **UNEXPECTED**"
        printf "| %s | %s | %s | %s | **%s** | %s | %s (%s) | %s (%s) | %s / %s | %s%s | %s | %s | %.1f |\n", name, what,
               f(g("audit.reported.rdp.epsilon")), f(pld), f(low), ratio, g("audit.one_run.canaries"),
               g("audit.one_run.planted"), g("audit.audited.records"), g("audit.audited.records_without_canaries"),
               g("audit.one_run.correct"), g("audit.one_run.guesses"), g("audit.verdict"), mark, expected,
               f(g("test_accuracy")), g("wall_seconds")
      }'
  done < <(train_audit_rows)
}

# Runs per side of a multi-run audit at each scale.
audit_runs() {
  case $SCALE in
    tiny) echo 50 ;;
    *) echo 2000 ;;
  esac
}

# audit_run NAME ARGS...: one multi-run `asyncdp audit`.
audit_run() { audit_invoke audit "$@"; }

# audit_fields NAME EXPECTED: one CSV line of audit.csv from runs/NAME/audit.json.
AUDIT_CSV_HEADER="run,mode,view,sampling,statistic,q,rounds,sigma,delta,eps_rdp,eps_pld,eps_gdp,eps_lower,\
gdp_counts,gdp_fit,ratio_lower,ratio_gdp_counts,verdict,expected,trainings,wall_seconds"
audit_fields() {
  local json=$OUT_DIR/runs/$1/audit.json
  [ -f "$json" ] || { echo "$1,failed"; return; }
  local q
  q=$(awk -F' = ' '/^sample_size = / { s = $2 } /^rows_per_client = / { n = $2 } END { if (n) printf "%.4g", s / n }' \
    "$OUT_DIR/runs/$1/config.resolved.toml")
  json_flat "$json" | awk -F'\t' -v run="$1" -v q="$q" -v expected="$2" '
    { v[$1] = $2 }
    function g(k) { return (k in v) ? v[k] : "NA" }
    END {
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", run, g("audit.mode"), g("audit.view"),
             g("audited.sampling"), g("audit.statistic"), q, g("audited.rounds"), g("audited.sigma"), g("audited.delta"),
             g("reported.rdp.epsilon"), g("reported.pld.epsilon"), g("reported.gdp.epsilon"), g("eps_lower.epsilon"),
             g("multi_run.gdp_counts.epsilon"), g("multi_run.gdp_fit.epsilon"), g("ratio.eps_lower_over_pld"),
             g("ratio.gdp_counts_over_pld"), g("verdict"), expected, g("trainings"), g("wall_seconds")
    }'
}

# audit_plot NAME: the two score histograms and the ROC curve of a multi-run audit: plots/NAME.gp (renders
# on its own), added to plots/audit_all.gp, which renders every figure in one gnuplot call.
audit_plot() {
  local dir=$OUT_DIR/runs/$1 p=$OUT_DIR/plots
  [ -f "$dir/histogram.csv" ] || return 0
  cp "$dir/histogram.csv" "$p/$1.histogram.csv"
  cp "$dir/roc.csv" "$p/$1.roc.csv"
  cat >"$p/$1.gp" <<EOF
set terminal pngcairo size 1200,500 font "sans,11" noenhanced
set output "$1.png"
set datafile separator ","
set multiplot layout 1,2 title "audit $1: scores with and without the canary, and the ROC curve"
set grid back lc rgb "#dddddd"
set key top left box
set xlabel "score (higher = canary looks present)"
set ylabel "runs"
set style fill transparent solid 0.45 noborder
plot "$1.histogram.csv" skip 1 using ((\$1+\$2)/2):4:(\$2-\$1) with boxes lc rgb "#1f77b4" title "without canary", \\
     "$1.histogram.csv" skip 1 using ((\$1+\$2)/2):3:(\$2-\$1) with boxes lc rgb "#d62728" title "with canary"
set xlabel "false positive rate"
set ylabel "true positive rate"
set xrange [0:1]
set yrange [0:1]
set key bottom right box
plot "$1.roc.csv" skip 2 using 2:3 with lines lw 2 lc rgb "#2ca02c" title "ROC", x with lines dt 2 lc rgb "gray" title "chance"
unset multiplot
EOF
  printf 'reset\nload "%s.gp"\n' "$1" >>"$p/audit_all.gp"
}

audit_table() {
  echo "| config | what | reported ε RDP | ε PLD | ε GDP (approx.) | ε_lower (95%) | ε GDP-counts | ratio ε_lower / PLD | ratio GDP-counts / PLD | verdict | expected | trainings | wall s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  local name what expected rest
  while IFS='|' read -r name what expected rest; do
    local line
    line=$(grep "^$name," "$OUT_DIR/audit.csv" || true)
    if [ -z "$line" ] || [[ $line == *,failed ]]; then
      echo "| $name | failed: see \`runs/$name.log\` ||||||||||||"
      continue
    fi
    echo "$line" | awk -F, -v what="$what" '
      function f(x) { return (x == "NA" || x == "null" || x == "") ? "–" : sprintf("%.3g", x) }
      {
        mark = ($18 == $19) ? "" : " **UNEXPECTED**"
        printf "| %s | %s | %s | %s | %s | **%s** | %s | %s | %s | %s%s | %s | %s | %.1f |\n", $1, what, f($10), f($11),
               f($12), f($13), f($14), f($16), f($17), $18, mark, $19, $20, $21
      }'
  done < <(audit_rows)
}

audit_main() {
  OUT_DIR=${OUT_ARG:-$REPO_DIR/results/audit}
  prepare_out_dir
  resolve_libsvm "$LIBSVM_ARG"
  local -a libsvm
  mapfile -t libsvm < <(libsvm_data_overrides)
  local runs start
  runs=$(audit_runs)
  start=$(now_seconds)
  log "audit: $(audit_rows | wc -l) configurations on $LIBSVM_NAME, $runs runs per side (multi-run)"
  local name what expected args
  while IFS='|' read -r name what expected args; do
    log "audit: $name ($what)"
    local -a extra=()
    read -r -a extra <<<"$args"
    # Each audit runs its trainings in parallel on all cores (--jobs 0); the audits run one after another.
    audit_run "$name" "${libsvm[@]}" --runs "$runs" --jobs "${JOBS_ARG:-0}" --quiet "${extra[@]}"
  done < <(audit_rows)
  local canaries
  canaries=$(train_audit_canaries)
  while IFS='|' read -r name what expected args; do
    log "audit: $name ($what; one training run, $canaries canaries)"
    local -a extra=()
    read -r -a extra <<<"$args"
    train_audit_run "$name" "${libsvm[@]}" --set audit.canaries="$canaries" "${extra[@]}"
  done < <(train_audit_rows)
  echo "$AUDIT_CSV_HEADER" >"$OUT_DIR/audit.csv"
  : >"$OUT_DIR/plots/audit_all.gp"
  while IFS='|' read -r name what expected args; do
    audit_fields "$name" "$expected" >>"$OUT_DIR/audit.csv"
    audit_plot "$name"
  done < <(audit_rows)
  render_plot "$OUT_DIR/plots/audit_all.gp" "the audit figures"
  audit_report "$runs" "$(elapsed_since "$start")" >"$OUT_DIR/REPORT.md"
  log "audit: done in $(elapsed_since "$start") s -> $OUT_DIR/REPORT.md"
  [ ! -s "$OUT_DIR/.failed" ] || return 1
  # A verdict other than the expected one (marked UNEXPECTED in the table) fails the script, except at the
  # tiny scale, whose 50 runs a side are too few to resolve the FAULT rows.
  if awk -F, 'NR > 1 && $18 != $19 { bad = 1 } END { exit !bad }' "$OUT_DIR/audit.csv" ||
    grep -q UNEXPECTED "$OUT_DIR/REPORT.md"; then
    warn "audit: a verdict differs from the expected one (UNEXPECTED in REPORT.md)"
    [ "$SCALE" = tiny ] || return 1
  fi
}

audit_report() {
  local runs=$1 seconds=$2
  cat <<EOF
# Empirical privacy audit of asyncdp

Generated by \`./run_experiments.sh audit\` on $(date -u '+%Y-%m-%d %H:%M UTC') with $("$ASYNCDP" --version 2>/dev/null)
($(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo "uncommitted tree")), $(nproc) cores, scale \`$SCALE\`.
Every output folder under \`runs/\` holds \`config.resolved.toml\` (the full configuration including the
seed) and \`audit.json\`; \`manifest.tsv\` lists the \`asyncdp audit\` arguments of every row.

Each row is one \`asyncdp audit\` of client 0 (docs/audit.md): $runs trainings with a Dirac gradient canary
in the client's data and $runs without (multi-run rows), each through the real client/server protocol on the
virtual runtime with its own seed, data $LIBSVM_NAME ($LIBSVM_ORIGIN). The white-box observer sees every
(i, U) the client sends. **ε_lower** is the assumption-free lower bound at the run's δ (95% confidence);
the **verdict** is the assumption-free test of the whole reported δ(ε) profile (VIOLATION iff refuted; a
correct report is flagged with probability ≤ 5% per row). **GDP-counts** is Nasr et al.'s (2023) tighter
conversion, which assumes a Gaussian trade-off curve (exact for full-batch rows, CLT-approximate for
subsampled ones): it measures how tight the accountant is, never the verdict. The reported ε are client
0's at the same δ under the neighbour relation of the sampler run (add/remove for Poisson, replace-one for
fixed-size and shuffle). The two FAULT rows make the report wrong on purpose (\`--test-noise-scale\`,
\`--test-accounted-sampling\`) and must be flagged.

## Audits

$(audit_table)

## One-run audits attached to training runs

Each row is one \`asyncdp train --set audit.canaries=$(train_audit_canaries)\` (Steinke, Nasr & Jagielski 2023):
the canaries are planted in client 0's data, each with probability ½ from the run's seed, and are part of
the data the run trains on and accounts (Poisson: added, N_c grows; fixed-size: each replaces a record).
The verdict is VIOLATION iff the one-run ε_lower exceeds an upper-bound accountant's ε for client 0. One
run cannot certify much more than ln(r / ln(1/β)) with r guesses, so these rows are far from tight by design
and the fault they catch is gross (0.05σ added where σ is accounted).

$(train_audit_table)

Total $seconds s. Per-row outputs: \`runs/NAME/audit.json\` (every bound with its assumptions, the resolved
configuration), \`scores.csv\` (every run's seed and score), \`histogram.csv\`, \`roc.csv\`; all rows in
\`audit.csv\`.

## Score distributions and ROC curves

EOF
  local name what expected args
  while IFS='|' read -r name what expected args; do
    [ -f "$OUT_DIR/plots/$name.png" ] && image "$name" "$OUT_DIR/plots/$name.png"
  done < <(audit_rows)
  failed_section
}
