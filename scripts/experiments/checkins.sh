# shellcheck shell=bash
# `run_experiments.sh checkins`: random check-ins (Balle et al. 2020) accounted by random allocation
# (Feldman & Shenfeld 2025; docs/random_allocation.md). Writes OUT_DIR (default results/checkins):
#   (a) epsilon vs m and p0 for check-ins beside Poisson at rate p0/m and one shuffled pass (FMT21), at
#       equal noise, plus the closing table of every bound (sigma in {1,2,4}, m in {100,1000}, E in {1,10});
#   (b) DP-SGD on a9a with one record per client (n = 32,561): check-ins (fixed window; averaged at the
#       fixed window's sigma, which has no bound), Poisson and shuffled DP-SGD at equal epsilon;
#   (c) empty steps of the fixed window against m (1 - p0/m)^n over seeds.
# Every number comes from the asyncdp binary (`account`, `train`); this script only chooses runs.

checkins_scale() {  # the grids of a scale: tiny (tests, seconds) or default (a few minutes on 2 cores)
  if [ "$SCALE" = tiny ]; then
    CK_MS="100 1000"
    CK_P0S="1 0.5"
    CK_EPSILONS="0.05"  # sigma near 3: calibration stays fast (the allocation bounds take seconds at sigma < 1)
    CK_WINDOWS=1
    CK_CLIENTS=4000
    CK_EMPTY_SEEDS="1"
    CK_EMPTY_MS="2000 4000"
  else
    CK_MS="100 300 1000 3000 10000"
    CK_P0S="1 0.5 0.1"
    CK_EPSILONS="1 4"
    CK_WINDOWS=2
    CK_CLIENTS=32561
    CK_EMPTY_SEEDS="1 2 3 4 5"
    CK_EMPTY_MS="16000 32561 65122"
  fi
  CK_BATCH=32
  CK_DELTA=1e-5
  CK_SIGMA=1  # noise multiplier of the sum aggregator in part (a)
}

# account_ra OUT.json ARGS...: one `asyncdp account --sampling random_allocation` (logged beside OUT).
account_ra() {
  local out=$1
  shift
  printf '%s\t%s\t%s\n' "${out#"$OUT_DIR"/}" "account" "--sampling random_allocation $*" >>"$MANIFEST"
  run_asyncdp "$out.log" account --sampling random_allocation "$@" && mv "$out.log" "$out"
}

checkins_part_a() {
  local d=$OUT_DIR/data/account m p0
  mkdir -p "$d"
  for p0 in $CK_P0S; do
    for m in $CK_MS; do
      spawn account_ra "$d/m${m}_p${p0}.json" --steps "$m" --p0 "$p0" --sigma "$CK_SIGMA" --delta 1e-6
    done
  done
  local sigma e
  for sigma in 1 2 4; do
    for m in 100 1000; do
      for e in 1 10; do
        spawn account_ra "$d/table_s${sigma}_m${m}_e${e}.json" --steps "$m" --windows "$e" --sigma "$sigma" --delta 1e-6
      done
    done
  done
  wait_all || true
  # eps_vs_m.csv: m, p0, check-ins (reported bound), Poisson at p0/m (PLD), shuffle (FMT21, one pass of m).
  echo "m,p0,checkin_epsilon,binding_bound,poisson_pld_epsilon,shuffle_fmt21_epsilon" >"$OUT_DIR/eps_vs_m.csv"
  for p0 in $CK_P0S; do
    for m in $CK_MS; do
      local f=$d/m${m}_p${p0}.json
      [ -f "$f" ] || continue
      json_get "$f" random_allocation.epsilon random_allocation.binding_bound poisson.pld.epsilon shuffle.epsilon |
        awk -F'\t' -v m="$m" -v p="$p0" '{ printf "%s,%s,%s,%s,%s,%s\n", m, p, $1, $2, $3, $4 }' >>"$OUT_DIR/eps_vs_m.csv"
    done
  done
}

checkins_table_md() {  # the closing table: every bound per (sigma, m, E) beside Poisson at 1/m
  echo "| σ | m | E | Rényi remove (α) | AM-GM add | decomp. remove | decomp. add | recursive remove | recursive add | **reported** (binding) | Poisson 1/m PLD | Poisson 1/m RDP | s |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  local sigma m e
  for sigma in 1 2 4; do
    for m in 100 1000; do
      for e in 1 10; do
        local f=$OUT_DIR/data/account/table_s${sigma}_m${m}_e${e}.json
        [ -f "$f" ] || { echo "| $sigma | $m | $e | failed |||||||||"; continue; }
        json_flat "$f" | awk -F'\t' -v s="$sigma" -v m="$m" -v e="$e" '
          { v[$1] = $2 }
          function x(i) {
            if (v["random_allocation.bounds." i ".applicable"] == "false") return "n/a"
            if (v["random_allocation.bounds." i ".epsilon"] == "null") return "∞"
            return sprintf("%.3f", v["random_allocation.bounds." i ".epsilon"])
          }
          END {
            printf "| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | **%.3f** (%s %s) | %.3f | %.3f | %.2f |\n", s, m, e,
                   x(0), v["random_allocation.bounds.0.order"], x(1), x(2), x(3), x(4), x(5),
                   v["random_allocation.epsilon"], v["random_allocation.binding_bound"],
                   v["random_allocation.binding_direction"], v["poisson.pld.epsilon"], v["poisson.rdp.epsilon"],
                   v["random_allocation.seconds"]
          }'
      done
    done
  done
}

# Part (b): one a9a record per client. Check-ins run m = n steps per window, b steps per model update;
# Poisson and shuffled DP-SGD run one client holding all n records (a record is a user either way) with
# batches of b (expected b for Poisson) and the same number of model updates, averaged updates.
checkins_part_b() {
  local runs=$OUT_DIR/runs eps n=$CK_CLIENTS
  local rounds=$((n * CK_WINDOWS / CK_BATCH))
  local -a data=(--set "data.train=$LIBSVM_TRAIN" --set "data.test=$LIBSVM_TEST"
    --set data.features=123 --set model.kind=logistic --set dp.clip=1 --set "dp.delta=$CK_DELTA"
    --set schedule.step_rule=constant --set schedule.eta0=0.5 --set eval.points=4)
  local -a checkin=(--set protocol.participation=check_in --set "clients.count=$n" --set "checkin.steps=$n"
    --set "checkin.windows=$CK_WINDOWS" --set "checkin.batch_steps=$CK_BATCH")
  local -a central=(--set protocol.participation=async_rounds --set clients.count=1 --set "data.rows_per_client=$n" --set "schedule.sample_size=$CK_BATCH"
    --set "schedule.rounds=$rounds" --set schedule.divide_round_update_by_sample_size=true --set protocol.tau=0)
  local cfg=$REPO_DIR/experiments/checkins_a9a.toml
  for eps in $CK_EPSILONS; do
    spawn train_run "$runs/fixed_eps$eps" "$cfg" "${data[@]}" "${checkin[@]}" --set checkin.variant=fixed_window \
      --set "dp.epsilon=$eps"
    spawn train_run "$runs/poisson_eps$eps" "$cfg" "${data[@]}" "${central[@]}" --set dp.sampling=poisson \
      --set "dp.epsilon=$eps"
    spawn train_run "$runs/shuffle_eps$eps" "$cfg" "${data[@]}" "${central[@]}" --set dp.sampling=shuffle \
      --set "dp.epsilon=$eps"
  done
  spawn train_run "$runs/nondp_fixed" "$cfg" "${data[@]}" "${checkin[@]}" --set checkin.variant=fixed_window \
    --set dp.enabled=false
  wait_all || true
  # Averaged updates (Alg. 2) have no bound: run at the fixed window's calibrated sigma, labelled so.
  for eps in $CK_EPSILONS; do
    local sigma
    sigma=$(json_get "$runs/fixed_eps$eps/summary.json" sigma)
    [ "$sigma" != NA ] || continue
    spawn train_run "$runs/averaged_sigma_of_eps$eps" "$cfg" "${data[@]}" "${checkin[@]}" \
      --set checkin.variant=averaged --set "dp.sigma=$sigma"
  done
  wait_all || true
  echo "run,target_epsilon,epsilon,bound,sigma,test_accuracy,dummy_updates,empty_steps,model_updates,records_used" \
    >"$OUT_DIR/utility.csv"
  local name
  for eps in $CK_EPSILONS; do
    for name in fixed_eps$eps averaged_sigma_of_eps$eps poisson_eps$eps shuffle_eps$eps; do
      local f=$runs/$name/summary.json
      [ -f "$f" ] || { echo "$name,$eps,failed,,,,,,," >>"$OUT_DIR/utility.csv"; continue; }
      json_flat "$f" | awk -F'\t' -v run="$name" -v t="$eps" '
        { v[$1] = $2 }
        END {
          if ("checkin.variant" in v) {
            e = v["privacy.epsilon"]; b = v["privacy.bound"]
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", run, t, e, b, v["sigma"], v["test_accuracy"],
                   v["checkin.dummy_updates"], v["checkin.empty_steps"], v["checkin.model_updates"], v["checkin.records_used"]
          } else {
            printf "%s,%s,%s,%s,%s,%s,0,0,%s,\n", run, t, v["epsilon.pld"], "upper_bound (pld)", v["sigma"],
                   v["test_accuracy"], v["global_rounds"]
          }
        }' >>"$OUT_DIR/utility.csv"
    done
  done
}

checkins_part_c() {
  local runs=$OUT_DIR/runs/empty m p0 seed
  local -a data=(--set "data.train=$LIBSVM_TRAIN" --set "data.test=$LIBSVM_TEST"
    --set data.features=123 --set model.kind=logistic --set dp.enabled=false --set eval.points=0 --set data.eval_rows=100
    --set protocol.participation=check_in --set "clients.count=$CK_CLIENTS")
  for m in $CK_EMPTY_MS; do
    for p0 in 1 0.5; do
      for seed in $CK_EMPTY_SEEDS; do
        spawn train_run "$runs/m${m}_p${p0}_seed$seed" "$REPO_DIR/experiments/checkins_a9a.toml" "${data[@]}" \
          --set "checkin.steps=$m" --set "checkin.p0=$p0" --set "seed=$seed"
      done
    done
  done
  wait_all || true
  echo "m,p0,seed,empty_steps,expected,sd,z" >"$OUT_DIR/empty_steps.csv"
  for m in $CK_EMPTY_MS; do
    for p0 in 1 0.5; do
      for seed in $CK_EMPTY_SEEDS; do
        local f=$runs/m${m}_p${p0}_seed$seed/summary.json
        [ -f "$f" ] || continue
        json_get "$f" checkin.empty_steps checkin.expected_empty_steps checkin.empty_steps_sd |
          awk -F'\t' -v m="$m" -v p="$p0" -v s="$seed" '{ printf "%s,%s,%s,%s,%.2f,%.2f,%.2f\n", m, p, s, $1, $2, $3, ($1 - $2) / $3 }' \
            >>"$OUT_DIR/empty_steps.csv"
      done
    done
  done
}

checkins_plots() {
  local p=$OUT_DIR/plots p0
  # (a) epsilon vs m
  for p0 in $CK_P0S; do
    awk -F, -v p="$p0" 'NR > 1 && $2 == p && $3 != "" { print $1, $3 }' "$OUT_DIR/eps_vs_m.csv" >"$p/checkin_p$p0.dat"
  done
  awk -F, 'NR > 1 && $2 == 1 { print $1, $5 }' "$OUT_DIR/eps_vs_m.csv" >"$p/poisson.dat"
  awk -F, 'NR > 1 && $2 == 1 && $6 != "" && $6 != "null" { print $1, $6 }' "$OUT_DIR/eps_vs_m.csv" >"$p/shuffle.dat"
  {
    gnuplot_preamble 5 40
    echo "set output 'eps_vs_m.png'"
    echo "set title 'One window, sigma = $CK_SIGMA (sum aggregator), delta = 1e-6'"
    echo "set logscale xy; set xlabel 'steps per window m'; set ylabel 'epsilon (upper bound)'"
    printf "plot "
    for p0 in $CK_P0S; do printf "'checkin_p%s.dat' w lp lw 2 t 'check-ins, p0 = %s (random allocation)', " "$p0" "$p0"; done
    echo "'poisson.dat' w lp lw 2 dt 2 t 'Poisson at rate 1/m (PLD)', 'shuffle.dat' w lp lw 2 dt 3 t 'shuffle, one pass of m records (FMT21, sensitivity 2C)'"
  } >"$p/eps_vs_m.gp"
  render_plot "$p/eps_vs_m.gp" "$p/eps_vs_m.png"
  # (b) accuracy vs epsilon
  local kind
  for kind in fixed averaged poisson shuffle; do
    awk -F, -v k="$kind" 'NR > 1 && index($1, k) == 1 && $6 != "" { print $2, $6 }' "$OUT_DIR/utility.csv" >"$p/util_$kind.dat"
  done
  {
    gnuplot_preamble 4 45
    echo "set output 'utility.png'"
    echo "set title 'DP-SGD on a9a, one record per client (n = $CK_CLIENTS), equal target epsilon (delta = $CK_DELTA)'"
    echo "set xlabel 'target epsilon'; set ylabel 'test accuracy'; set xrange [0:*]"
    echo "plot 'util_fixed.dat' w lp lw 2 t 'check-ins, fixed window (Alg. 1)', 'util_averaged.dat' w lp lw 2 t 'check-ins, averaged (Alg. 2): NO BOUND, same sigma', 'util_poisson.dat' w lp lw 2 t 'Poisson DP-SGD', 'util_shuffle.dat' w lp lw 2 t 'shuffled DP-SGD (one Gaussian per epoch)'"
  } >"$p/utility.gp"
  render_plot "$p/utility.gp" "$p/utility.png"
  # (c) empty steps: observed against expected
  awk -F, 'NR > 1 { print $5, $4 }' "$OUT_DIR/empty_steps.csv" >"$p/empty.dat"
  {
    gnuplot_preamble 2 40
    echo "set output 'empty_steps.png'"
    echo "set title 'Empty steps of the fixed window: observed vs m (1 - p0/m)^n (n = $CK_CLIENTS)'"
    echo "set xlabel 'expected empty steps'; set ylabel 'observed empty steps'; set logscale xy"
    echo "plot 'empty.dat' w p pt 7 ps 1.2 t 'runs (seeds x m x p0)', x w l dt 2 t 'y = x'"
  } >"$p/empty_steps.gp"
  render_plot "$p/empty_steps.gp" "$p/empty_steps.png"
}

checkins_report() {
  {
    echo "# Random check-ins: privacy by random allocation, utility on a9a"
    echo
    report_provenance checkins
    echo
    echo "Neighbours: add/remove of one client (one record). Every ε is an upper bound at the δ shown, with its"
    echo "theorem in \`data/account/*.json\` or the run's \`summary.json\` (docs/random_allocation.md). Check-ins with"
    echo "one client per step (Alg. 1) are accounted as random allocation of the Gaussian randomizer with noise"
    echo "multiplier σ/2 (sensitivity 2C between two clients' clipped gradients); averaged updates (Alg. 2) have"
    echo "**no bound** and are never given an ε."
    echo
    echo "## (a) ε against m and p0 at equal noise (σ = $CK_SIGMA, sum aggregator, δ = 1e-6, one window)"
    echo
    echo "| m | p0 | check-ins ε (binding bound) | Poisson at p0/m, PLD | shuffle, one pass of m (FMT21) |"
    echo "|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %.4g (%s) | %.4g | %s |\n", $1, $2, $3, $4, $5, ($6 == "null" || $6 == "" ? "no bound" : sprintf("%.4g", $6)) }' \
      "$OUT_DIR/eps_vs_m.csv"
    echo
    echo "![epsilon vs m](plots/eps_vs_m.png)"
    echo
    echo "Shuffling is one pass of m records through the Gaussian local randomizer (sensitivity 2C, replace-one);"
    echo "FMT21 gives no amplification until the local ε0 is below ln(m/(16 ln(2/δ))), so at σ = $CK_SIGMA it"
    echo "reports the unamplified Gaussian ε."
    echo
    echo "### Every bound (δ = 1e-6, k = 1, p0 = 1) beside Poisson at rate 1/m over mE rounds"
    echo
    checkins_table_md
    echo
    echo "n/a: outside the theorem (Thm. 4.3 bounds one window). s: wall seconds of the allocation bounds."
    echo
    echo "## (b) DP-SGD on a9a, one record per client (n = $CK_CLIENTS), equal ε (δ = $CK_DELTA)"
    echo
    echo "Check-ins: m = n steps per window, $CK_WINDOWS window(s), p0 = 1, b = $CK_BATCH steps per model update."
    echo "Poisson / shuffled DP-SGD: batches of (expected) $CK_BATCH records, the same number of model updates"
    echo "(n E / b), accounted by PLD (shuffle: one full-batch Gaussian of sensitivity 2C per epoch)."
    echo
    echo "| run | target ε | ε (bound) | σ | test accuracy | dummy updates | empty steps | model updates |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { e = ($3 == "null" || $3 == "") ? "no bound" : sprintf("%.4g", $3)
                      printf "| %s | %s | %s (%s) | %.4g | **%.4f** | %s | %s | %s |\n", $1, $2, e, $4, $5, $6, $7, $8, $9 }' \
      "$OUT_DIR/utility.csv"
    if [ -f "$OUT_DIR/runs/nondp_fixed/summary.json" ]; then
      echo
      echo "Non-private fixed window (no noise): test accuracy $(json_get "$OUT_DIR/runs/nondp_fixed/summary.json" test_accuracy)."
    fi
    echo
    echo "![utility](plots/utility.png)"
    echo
    echo "## (c) Empty steps of the fixed window against m (1 − p0/m)^n"
    echo
    echo "| m | p0 | seed | empty steps | expected | sd | z |"
    echo "|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$OUT_DIR/empty_steps.csv"
    echo
    echo "![empty steps](plots/empty_steps.png)"
  } >"$OUT_DIR/REPORT.md"
}

checkins_main() {
  OUT_DIR=${OUT_ARG:-$REPO_DIR/results/checkins}
  prepare_out_dir
  checkins_scale
  resolve_libsvm "$LIBSVM_ARG"  # the repository's datasets/ first (a9a ships with it)
  [ -n "$LIBSVM_TEST" ] || die "checkins needs a LIBSVM test file beside $LIBSVM_TRAIN"
  local start
  start=$(now_seconds)
  log "checkins (a): epsilon vs m and p0, and the closing table"
  checkins_part_a
  log "checkins (b): DP-SGD on a9a, one record per client"
  checkins_part_b
  log "checkins (c): empty steps against their expectation"
  checkins_part_c
  checkins_plots
  checkins_report
  log "checkins done in $(elapsed_since "$start") s: $OUT_DIR/REPORT.md"
}
