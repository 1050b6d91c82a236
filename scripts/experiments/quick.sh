# shellcheck shell=bash
# `run_experiments.sh quick` (the default): how fast DP-SGD converges on a strongly convex, two plain
# convex and a non-convex objective, measured the way the theory states it. Convex problems (the LIBSVM
# data, or the Fashion-MNIST binary task): the suboptimality F(ŵ_t) − F(w*) against a reference optimum,
# on log-log axes with fitted slopes beside the rates the step-size schedules predict; LeNet on
# Fashion-MNIST: training loss (and the full-gradient norm when the run records it). Writes OUT_DIR
# (default results/quick): runs/, reference/ (w*, cached), plots/, runs.csv, curves.csv, rates.csv,
# REPORT.md.
# shellcheck source=scripts/experiments/convergence.sh
source "$EXP_DIR/convergence.sh"

QUICK_CONVEX=(strongly_convex plain_convex geometric_median)

# The --set overrides of a scale: tiny (tests, seconds), default (≤ 3 minutes on 2 cores). The convex runs
# evaluate often (log-log fits need points in every decade) and compute the training loss on every
# training row, so that the diag_train_loss column is F(ŵ_t) itself.
quick_scale_convex() {
  printf '%s\n' --set eval.train_rows=2147483647 --set eval.points=100
  [ "$SCALE" = tiny ] && printf '%s\n' --set schedule.iterations=3000 --set eval.points=8
  return 0
}
quick_scale_lenet() {
  [ "$SCALE" = tiny ] && printf '%s\n' --set data.rows_per_client=300 --set schedule.iterations=600 \
    --set schedule.sample_size=60 --set data.eval_rows=200 --set eval.points=3 --set eval.train_rows=100
  return 0
}

# The three runs of a convex problem: DP (the paper's C, σ, s), non-DP (same clipping, no noise: the
# paper's baseline) and plain SGD (non-DP, s = 1, no clipping: what the schedules' rate bounds describe).
QUICK_SGD=(--set dp.enabled=false --set dp.clip=1e6 --set schedule.sample_size=1)

quick_main() {
  OUT_DIR=${OUT_ARG:-$REPO_DIR/results/quick}
  prepare_out_dir
  resolve_libsvm "$LIBSVM_ARG"
  resolve_images "$IMAGES_ARG"
  local start
  start=$(now_seconds)
  local -a libsvm lenet_data convex_scale lenet_scale threads
  mapfile -t libsvm < <(libsvm_data_overrides)
  mapfile -t lenet_data < <(images_data_overrides)
  mapfile -t convex_scale < <(quick_scale_convex)
  mapfile -t lenet_scale < <(quick_scale_lenet)
  mapfile -t threads < <(thread_overrides)
  local runs=$OUT_DIR/runs cfg=$REPO_DIR/experiments
  log "quick: strongly convex, plain convex, geometric median ($LIBSVM_NAME) and LeNet ($IMAGES_NAME)"
  # LeNet first: the longest runs start first, the convex ones fill the other job slot.
  spawn train_run "$runs/lenet_dp" "$cfg/quick_lenet.toml" "${lenet_data[@]}" "${lenet_scale[@]}" "${threads[@]}" \
    --set eval.gradient_norm=true
  spawn train_run "$runs/lenet_nondp" "$cfg/quick_lenet.toml" "${lenet_data[@]}" "${lenet_scale[@]}" \
    "${threads[@]}" --set eval.gradient_norm=true --set dp.enabled=false
  local problem
  for problem in "${QUICK_CONVEX[@]}"; do
    # w* of the objective first (cached across invocations), so that each run records F(ŵ_t) − F(w*) and
    # ||ŵ_t − w*||² at every evaluation itself.
    local -a common=("$cfg/quick_$problem.toml" "${libsvm[@]}" "${convex_scale[@]}" "${threads[@]}")
    local -a reference=()
    if convergence_reference_config "$problem" "${common[@]}"; then
      reference=(--set "eval.reference_optimum=$OUT_DIR/reference/$problem")
    else
      echo "reference-optimum $problem" >>"$OUT_DIR/.failed"
    fi
    spawn train_run "$runs/${problem}_dp" "${common[@]}" "${reference[@]}"
    spawn train_run "$runs/${problem}_nondp" "${common[@]}" "${reference[@]}" --set dp.enabled=false
    spawn train_run "$runs/${problem}_sgd" "${common[@]}" "${reference[@]}" "${QUICK_SGD[@]}"
  done
  wait_all || true
  local run_seconds
  run_seconds=$(elapsed_since "$start")

  local order=() dirs=() name
  for problem in "${QUICK_CONVEX[@]}"; do order+=("${problem}_dp" "${problem}_nondp" "${problem}_sgd"); done
  order+=(lenet_dp lenet_nondp)
  for name in "${order[@]}"; do dirs+=("$runs/$name"); done
  runs_csv "${dirs[@]}" >"$OUT_DIR/runs.csv"
  quick_curves "${order[@]}"
  quick_rates >"$OUT_DIR/rates.csv"
  quick_plots
  quick_report "$run_seconds" "$(elapsed_since "$TOTAL_START")" >"$OUT_DIR/REPORT.md"
  log "quick: done in $(elapsed_since "$start") s -> $OUT_DIR/REPORT.md"
  [ ! -s "$OUT_DIR/.failed" ]
}

# Curve files: plots/RUN.dat (accuracy), plots/RUN.subopt.dat (convex), and curves.csv with every
# evaluation of every run (suboptimality "NA" for LeNet).
quick_curves() {
  local p=$OUT_DIR/plots name problem
  echo "run,gradients_per_client,test_accuracy,suboptimality,distance_sq" >"$OUT_DIR/curves.csv"
  for name in "$@"; do
    [ -f "$OUT_DIR/runs/$name/metrics.csv" ] || continue
    metrics_curve "$OUT_DIR/runs/$name" "$p/$name.dat"
    problem=${name%_*}
    if [ "$problem" != lenet ]; then
      subopt_curve "$OUT_DIR/runs/$name" "$OUT_DIR/reference/$problem" "$p/$name.subopt.dat" || rm -f "$p/$name.subopt.dat"
    fi
    awk -v r="$name" -v s="$p/$name.subopt.dat" '
      BEGIN { while ((getline line < s) > 0) if (line !~ /^#/) { split(line, f, "\t"); so[++m] = f[2]; d[m] = f[3] } }
      !/^#/ { n++; printf "%s,%s,%s,%s,%s\n", r, $1, $2, (n in so) ? so[n] : "NA", (n in d) ? d[n] : "NA" }' \
      "$p/$name.dat" >>"$OUT_DIR/curves.csv"
  done
}

# rates.csv: per convex run, the fitted slope of F − F* over the last decade of the run, the slope the
# schedule predicts over the same window, its asymptotic rate, the floor, the final value, and the same
# for ||ŵ − w*||² where recorded.
quick_rates() {
  echo "run,fitted_slope,points,window_from,window_to,schedule_slope,asymptotic_slope,floor,final,distance_slope,clipped_fraction"
  local problem kind dat fit slope points x1 x2
  for problem in "${QUICK_CONVEX[@]}"; do
    for kind in sgd nondp dp; do
      dat=$OUT_DIR/plots/${problem}_$kind.subopt.dat
      [ -f "$dat" ] || continue
      fit=$(loglog_fit "$dat" 2 0.1)
      IFS=$'\t' read -r slope points x1 x2 <<<"$fit"
      local dist_slope
      dist_slope=$(loglog_fit "$dat" 3 0.1 | cut -f1)
      printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "${problem}_$kind" "$slope" "$points" "$x1" "$x2" \
        "$(schedule_slope "$OUT_DIR/runs/${problem}_$kind" "$x1" "$x2")" \
        "$(asymptotic_slope "$OUT_DIR/runs/${problem}_$kind")" "$(curve_floor "$dat")" "$(curve_last "$dat")" \
        "$dist_slope" "$(clipped_fraction "$OUT_DIR/runs/${problem}_$kind")"
    done
  done
}

# rate_field RUN COLUMN: one field of rates.csv ("NA" when absent).
rate_field() {
  awk -F, -v r="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                               $1 == r { print $(col[c]); found = 1 } END { if (!found) print "NA" }' "$OUT_DIR/rates.csv"
}

# Whether the strongly convex runs record ||ŵ_t − w*||² (the metrics.csv column distance_sq).
quick_has_distance() {
  awk '!/^#/ && $3 != "NA" { found = 1 } END { exit !found }' "$OUT_DIR/plots/strongly_convex_sgd.subopt.dat" 2>/dev/null
}

quick_plots() {
  local p=$OUT_DIR/plots x="number of gradient computations per client"
  plot_loglog "$p/suboptimality.png" "Suboptimality F(w_t) - F(w*) on $LIBSVM_NAME (log-log)" "$x" \
    "F(w_t) - F(w*)  (training objective)" 2 \
    "strongly convex, DP|$p/strongly_convex_dp.subopt.dat|1|1" \
    "strongly convex, non-DP (clipped)|$p/strongly_convex_nondp.subopt.dat|1|2" \
    "strongly convex, SGD (s = 1, unclipped)|$p/strongly_convex_sgd.subopt.dat|1|3" \
    "plain convex, DP|$p/plain_convex_dp.subopt.dat|2|1" \
    "plain convex, non-DP (clipped)|$p/plain_convex_nondp.subopt.dat|2|2" \
    "plain convex, SGD (s = 1, unclipped)|$p/plain_convex_sgd.subopt.dat|2|3" \
    "geometric median, DP|$p/geometric_median_dp.subopt.dat|3|1" \
    "geometric median, non-DP|$p/geometric_median_nondp.subopt.dat|3|2" \
    "geometric median, SGD (s = 1)|$p/geometric_median_sgd.subopt.dat|3|3"
  if quick_has_distance; then
    plot_loglog "$p/distance.png" "Distance to the optimum, strongly convex (log-log)" "$x" "||w_t - w*||^2" 3 \
      "DP|$p/strongly_convex_dp.subopt.dat|1|1" "non-DP (clipped)|$p/strongly_convex_nondp.subopt.dat|1|2" \
      "SGD (s = 1, unclipped)|$p/strongly_convex_sgd.subopt.dat|1|3"
  fi
  plot_curves "$p/convex_accuracy.png" "Test accuracy, strongly vs plain convex DP-SGD on $LIBSVM_NAME" "$x" \
    "test accuracy" "strongly convex, DP|$p/strongly_convex_dp.dat|1" "non-DP strongly convex|$p/strongly_convex_nondp.dat|1" \
    "plain convex, DP|$p/plain_convex_dp.dat|2" "non-DP plain convex|$p/plain_convex_nondp.dat|2"
  plot_metric "$p/lenet_train_loss.png" "Non-convex DP-SGD: LeNet-5 training loss on $IMAGES_NAME" "$x" \
    "training loss (cross-entropy)" diag_train_loss 0 "LeNet-5, DP|$OUT_DIR/runs/lenet_dp|1|1" \
    "LeNet-5, non-DP|$OUT_DIR/runs/lenet_nondp|7|2" || true
  plot_metric "$p/lenet_gradient_norm.png" "LeNet-5: norm of the full training gradient" "$x" \
    "||grad F(w_t)||" diag_gradient_norm 1 "LeNet-5, DP|$OUT_DIR/runs/lenet_dp|1|1" \
    "LeNet-5, non-DP|$OUT_DIR/runs/lenet_nondp|7|2" || true
  plot_curves "$p/lenet.png" "Non-convex DP-SGD: LeNet-5 test accuracy on $IMAGES_NAME (Table 4 setting, shortened)" \
    "$x" "test accuracy" "LeNet-5, DP|$p/lenet_dp.dat" "non-DP LeNet-5|$p/lenet_nondp.dat"
}

# shellcheck source=scripts/experiments/quick_report.sh
source "$EXP_DIR/quick_report.sh"
