# shellcheck shell=bash
# `run_experiments.sh paper [--full] [--libsvm PATH] [--images DIR]`: the paper's experiments side by side
# with its printed numbers (Section 3.3, Appendices D–E; docs/theory.md §6, §9):
#   (a) utility graphs, Figs 1a–3a (`asyncdp utility-graph`);
#   (b) accuracy vs gradient computations for the constant sample sizes of Tables 3–4 (Figs 1b–3b, 7–9);
#   (c) accuracy for the privacy budgets of Tables 6–7, replaying the printed (σ, s) (Figs 1c–3c, 11–13);
#   (d) Tables 9–11 from `asyncdp calc`, and ε of every printed setting from `asyncdp account`
#       (paper_tables.sh).
# CIFAR-10 (Tables 5, 8, Figs 10, 14) is not available here: its settings are only accounted for.
# The report is paper_report.sh. Settings come from paper_settings.tsv and paper_tables_9_11.tsv.
# shellcheck source=scripts/experiments/convergence.sh
source "$EXP_DIR/convergence.sh"
# shellcheck source=scripts/experiments/paper_tables.sh
source "$EXP_DIR/paper_tables.sh"
# shellcheck source=scripts/experiments/paper_report.sh
source "$EXP_DIR/paper_report.sh"

# Scale of the training runs. The convex runs are cheap and always use the paper's K = 50,000. LeNet also
# runs the paper's K = 360,000 by default: at a tenth of it the largest s of Table 7 get only 17 rounds,
# too few to learn anything, and the figures showed chance-level rows that were no result at all. The
# default scale evaluates on 2,000 test rows; --full on all of them, with more utility-graph draws.
paper_scale() {
  PAPER_CONVEX_K=50000 PAPER_CONVEX_POINTS=25
  PAPER_LENET_K=360000 PAPER_LENET_ROWS=0 PAPER_LENET_EVAL_ROWS=2000 PAPER_LENET_POINTS=20 PAPER_LENET_TRAIN_ROWS=1000
  PAPER_UG_CONVEX_CLIPS=0.025,0.05,0.075,0.1 PAPER_UG_CONVEX_SIGMAS=0:30:2 PAPER_UG_CONVEX_DRAWS=20
  PAPER_UG_LENET_CLIPS=0.025,0.05,0.1 PAPER_UG_LENET_SIGMAS=0,1,2,3,4,6,8,12,16,20,24 PAPER_UG_LENET_DRAWS=5
  PAPER_ROWS_FILTER=all  # all table rows; tiny keeps the first two and the last of each table
  # LeNet's step rule for large s: rows with s above PAPER_LENET_STEP_CAP_S run at η0·cap/s instead of η0
  # (the paper "scales the step size inversely with s_i"). A summed round moves the model by up to η0·s·C
  # per client and the first rounds of all n clients land on the same model; the first-round probes of the
  # report find that this overshoots above s = 543 at Table 4's η0 and C (loss 2.40 → 2.86 at s = 889, 7.79
  # at s = 2159, where the non-DP run died), so above it every row keeps s = 543's first-step bound.
  PAPER_LENET_STEP_CAP_S=543
  case $SCALE in
    full)
      PAPER_LENET_EVAL_ROWS=0 PAPER_UG_LENET_DRAWS=20 PAPER_UG_LENET_SIGMAS=0:24:1 ;;
    tiny)  # LeNet rows ≥ the largest s of the tables (2159): a client cannot sample more records than it holds
      PAPER_CONVEX_K=3000 PAPER_CONVEX_POINTS=5
      PAPER_LENET_K=600 PAPER_LENET_ROWS=2200 PAPER_LENET_EVAL_ROWS=200 PAPER_LENET_POINTS=3 PAPER_LENET_TRAIN_ROWS=100
      PAPER_UG_CONVEX_CLIPS=0.05,0.1 PAPER_UG_CONVEX_SIGMAS=0,10,20 PAPER_UG_CONVEX_DRAWS=2
      PAPER_UG_LENET_CLIPS=0.025,0.1 PAPER_UG_LENET_SIGMAS=0,12,24 PAPER_UG_LENET_DRAWS=2
      PAPER_ROWS_FILTER=ends ;;
  esac
}

# paper_settings: the rows of paper_settings.tsv in use (tiny: the first two and the last of each table).
paper_settings() {
  awk -F'\t' -v filter="$PAPER_ROWS_FILTER" '
    !/^#/ { n++; row[n] = $0; table[n] = $1; last[$1] = n; if (!($1 in first)) first[$1] = n }
    END { for (i = 1; i <= n; i++) if (filter == "all" || i - first[table[i]] < 2 || i == last[table[i]]) print row[i] }' \
    "$EXP_DIR/paper_settings.tsv"
}

# paper_rows TABLE: "sigma<TAB>s<TAB>eps_printed<TAB>C" of one table's rows in use.
paper_rows() {
  paper_settings | awk -F'\t' -v t="$1" '$1 == t { print $6 "\t" $7 "\t" $8 "\t" $9 }'
}

# The run directory of (problem, σ, s); the same (σ, s) in Tables 3 and 6 (or 4 and 7) is one run.
paper_run_dir() { printf '%s/runs/%s/s%s_sigma%s' "$OUT_DIR" "$1" "$3" "$2"; }

# paper_problem_config PROBLEM: the lead's table configuration of a problem.
paper_problem_config() {
  case $1 in
    strongly_convex) echo "$REPO_DIR/experiments/table3_strongly_convex.toml" ;;
    plain_convex) echo "$REPO_DIR/experiments/table3_plain_convex.toml" ;;
    lenet) echo "$REPO_DIR/experiments/table4_lenet.toml" ;;
  esac
}

# paper_step_overrides PROBLEM S: the step rule's override for one run (LeNet above the cap), or nothing.
paper_step_overrides() {
  [ "$1" = lenet ] && [ "$2" -gt "$PAPER_LENET_STEP_CAP_S" ] || return 0
  local eta0
  eta0=$(toml_get "$(paper_problem_config lenet)" schedule eta0)
  printf '%s\n' --set "schedule.eta0=$(awk -v e="$eta0" -v c="$PAPER_LENET_STEP_CAP_S" -v s="$2" 'BEGIN { printf "%.6g", e * c / s }')"
}

# paper_overrides PROBLEM: data and scale overrides shared by every run of a problem.
paper_overrides() {
  case $1 in
    lenet)
      images_data_overrides
      printf '%s\n' --set "schedule.iterations=$PAPER_LENET_K" --set "data.rows_per_client=$PAPER_LENET_ROWS" \
        --set "data.eval_rows=$PAPER_LENET_EVAL_ROWS" --set "eval.points=$PAPER_LENET_POINTS" \
        --set "eval.train_rows=$PAPER_LENET_TRAIN_ROWS" ;;
    *)
      # The train-loss column over every training row is F(ŵ_t), for the suboptimality curves.
      libsvm_data_overrides
      printf '%s\n' --set "schedule.iterations=$PAPER_CONVEX_K" --set "eval.points=$PAPER_CONVEX_POINTS" \
        --set eval.train_rows=2147483647 ;;
  esac
  thread_overrides
}

# paper_spawn_runs PROBLEM NONDP TABLE...: spawns the DP runs of the tables for PROBLEM (the same (σ, s) in
# two tables is one run) and non-DP runs (clipped, no noise) for the non-private ceiling: NONDP = all gives
# one per distinct s (cheap convex runs), NONDP = a table number one per s of that table and one at the
# largest s of the others (LeNet: every privacy budget of Table 7 gets its own ceiling).
paper_spawn_runs() {
  local problem=$1 nondp=$2
  shift 2
  local config table sigma s eps clip dir largest largest_clip
  local -a step
  config=$(paper_problem_config "$problem")
  [ -f "$config" ] || die "$config is missing (the table configurations are part of the repository)"
  local -a common
  mapfile -t common < <(paper_overrides "$problem")
  declare -A spawned=() nondp_clip=()
  for table in "$@"; do
    largest=0
    while IFS=$'\t' read -r sigma s eps clip; do
      [ "$nondp" = all ] || [ "$nondp" = "$table" ] && nondp_clip[$s]=$clip
      if [ "$s" -gt "$largest" ]; then largest=$s largest_clip=$clip; fi
      dir=$(paper_run_dir "$problem" "$sigma" "$s")
      [ -n "${spawned[$dir]:-}" ] && continue
      spawned[$dir]=1
      mapfile -t step < <(paper_step_overrides "$problem" "$s")
      spawn train_run "$dir" "$config" "${common[@]}" --set dp.enabled=true --set "dp.sigma=$sigma" \
        --set "dp.clip=$clip" --set "schedule.sample_size=$s" "${step[@]}"
    done < <(paper_rows "$table")
    [ "$largest" -gt 0 ] && nondp_clip[$largest]=$largest_clip
  done
  for s in "${!nondp_clip[@]}"; do
    mapfile -t step < <(paper_step_overrides "$problem" "$s")
    spawn train_run "$OUT_DIR/runs/$problem/nondp_s$s" "$config" "${common[@]}" --set dp.enabled=false \
      --set "dp.clip=${nondp_clip[$s]}" --set "schedule.sample_size=$s" "${step[@]}"
  done
}

# The evidence for LeNet's step cap: the largest s of TABLE summed at the configuration's η0 (no cap), DP
# and non-DP, into runs/lenet/uncapped/.
paper_spawn_uncapped() {
  local table=$1 sigma s eps clip config
  config=$(paper_problem_config lenet)
  IFS=$'\t' read -r sigma s eps clip < <(paper_rows "$table" | sort -t$'\t' -k2,2n | tail -n 1)
  [ -n "$s" ] && [ "$s" -gt "$PAPER_LENET_STEP_CAP_S" ] || return 0
  local -a common
  mapfile -t common < <(paper_overrides lenet)
  spawn train_run "$OUT_DIR/runs/lenet/uncapped/s${s}_sigma$sigma" "$config" "${common[@]}" --set dp.enabled=true \
    --set "dp.sigma=$sigma" --set "dp.clip=$clip" --set "schedule.sample_size=$s"
  spawn train_run "$OUT_DIR/runs/lenet/uncapped/nondp_s$s" "$config" "${common[@]}" --set dp.enabled=false \
    --set "dp.clip=$clip" --set "schedule.sample_size=$s"
}

# The round update's other reading (spec §2.5): the configurations sum the s_i clipped gradients at step
# η(t_i) (schedule.divide_round_update_by_sample_size = false, the spec's default); these runs divide the
# update by s_i instead, at the largest s of each table, DP and non-DP, into runs/PROBLEM/divide/.
paper_spawn_other_reading() {
  local problem=$1 table sigma s eps clip config
  shift
  config=$(paper_problem_config "$problem")
  local -a common
  mapfile -t common < <(paper_overrides "$problem")
  common+=(--set schedule.divide_round_update_by_sample_size=true)
  for table in "$@"; do
    IFS=$'\t' read -r sigma s eps clip < <(paper_rows "$table" | sort -t$'\t' -k2,2n | tail -n 1)
    [ -n "$s" ] || continue
    spawn train_run "$OUT_DIR/runs/$problem/divide/s${s}_sigma$sigma" "$config" "${common[@]}" --set dp.enabled=true \
      --set "dp.sigma=$sigma" --set "dp.clip=$clip" --set "schedule.sample_size=$s"
    spawn train_run "$OUT_DIR/runs/$problem/divide/nondp_s$s" "$config" "${common[@]}" --set dp.enabled=false \
      --set "dp.clip=$clip" --set "schedule.sample_size=$s"
  done
}

# First-round probes: one round per client, no noise, for every s of the tables (and s = 1, which barely
# moves the initial model) under both readings: the training loss after the first global round says
# whether that round's step already overshoots. Into runs/PROBLEM/probe/{sum,divide}_sS.
paper_spawn_first_round_probes() {
  local problem=$1 config reading s
  shift
  config=$(paper_problem_config "$problem")
  local -a common
  mapfile -t common < <(paper_overrides "$problem")
  for reading in sum divide; do
    local divide=false
    [ "$reading" = divide ] && divide=true
    for s in 1 $(for t in "$@"; do paper_rows "$t"; done | cut -f2 | sort -n -u); do
      spawn train_run "$OUT_DIR/runs/$problem/probe/${reading}_s$s" "$config" "${common[@]}" --set dp.enabled=false \
        --set "schedule.sample_size=$s" --set schedule.rounds=1 --set eval.points=1 \
        --set "schedule.divide_round_update_by_sample_size=$divide"
    done
  done
}

# (a) one utility graph per problem: w* from the problem's table configuration (clipping, no noise).
paper_spawn_utility() {
  local problem=$1 clips=$2 sigmas=$3 draws=$4
  local -a common
  mapfile -t common < <(paper_overrides "$problem")
  printf '%s\t%s\t%s\n' "utility/$problem" "$(paper_problem_config "$problem")" \
    "${common[*]} --clips $clips --sigmas $sigmas --draws $draws" >>"$MANIFEST"
  mkdir -p "$OUT_DIR/utility"
  spawn run_asyncdp "$OUT_DIR/utility/$problem.log" utility-graph --config "$(paper_problem_config "$problem")" \
    "${common[@]}" --clips "$clips" --sigmas "$sigmas" --draws "$draws" --out "$OUT_DIR/utility/$problem" --quiet
}

paper_main() {
  OUT_DIR=${OUT_ARG:-$REPO_DIR/results/paper}
  prepare_out_dir
  rm -rf "$OUT_DIR/utility"
  resolve_libsvm "$LIBSVM_ARG"
  resolve_images "$IMAGES_ARG"
  paper_scale
  local start
  start=$(now_seconds)
  log "paper: (d) Tables 9-11 and the accountants' epsilon for every printed setting"
  paper_tables || warn "paper: some calculator/accountant calls failed (see $OUT_DIR/data/*.log)"
  log "paper: (a) utility graphs, (b) Tables 3-4 sample sizes, (c) Tables 6-7 budgets, $JOBS job(s)"
  # Longest first: LeNet runs and its utility graph, then the convex ones fill the free slots.
  paper_spawn_runs lenet 7 4 7
  paper_spawn_utility lenet "$PAPER_UG_LENET_CLIPS" "$PAPER_UG_LENET_SIGMAS" "$PAPER_UG_LENET_DRAWS"
  paper_spawn_other_reading lenet 4 7
  paper_spawn_uncapped 7
  paper_spawn_first_round_probes lenet 4 7
  local problem
  for problem in strongly_convex plain_convex; do
    paper_spawn_runs "$problem" all 3 6
    paper_spawn_utility "$problem" "$PAPER_UG_CONVEX_CLIPS" "$PAPER_UG_CONVEX_SIGMAS" "$PAPER_UG_CONVEX_DRAWS"
    paper_spawn_other_reading "$problem" 3 6
  done
  wait_all || true
  # w* of the two convex objectives (cached in reference/), from a non-DP run's resolved configuration.
  local s3
  s3=$(paper_rows 3 | cut -f2 | sort -n | tail -n 1)
  for problem in strongly_convex plain_convex; do
    convergence_reference "$problem" "$OUT_DIR/runs/$problem/nondp_s$s3" ||
      echo "reference-optimum $problem" >>"$OUT_DIR/.failed"
  done
  local run_seconds
  run_seconds=$(elapsed_since "$start")
  paper_figures
  paper_convergence
  paper_report "$run_seconds" >"$OUT_DIR/REPORT.md"
  log "paper: done in $(elapsed_since "$start") s -> $OUT_DIR/REPORT.md"
  [ ! -s "$OUT_DIR/.failed" ]
}

# Curve data files and PNGs of (a)–(c); runs.csv with every run's final numbers.
paper_figures() {
  local p=$OUT_DIR/plots problem dir
  local -a all_dirs=()
  for dir in "$OUT_DIR"/runs/*/*/; do
    dir=${dir%/}
    [ -f "$dir/metrics.csv" ] || continue
    all_dirs+=("$dir")
    metrics_curve "$dir" "$p/$(basename "$(dirname "$dir")")_$(basename "$dir").dat"
  done
  {
    echo "problem,$RUN_FIELDS_HEADER"
    for dir in "${all_dirs[@]}"; do
      printf '%s,' "$(basename "$(dirname "$dir")")"
      run_fields "$dir" | tr '\t' ','
    done
  } >"$OUT_DIR/runs.csv"

  local fig_a fig_b fig_c title
  for problem in strongly_convex plain_convex lenet; do
    case $problem in
      strongly_convex) fig_a=fig1a fig_b=fig1b fig_c=fig1c title="strongly convex, $LIBSVM_NAME" ;;
      plain_convex) fig_a=fig2a fig_b=fig2b fig_c=fig2c title="plain convex, $LIBSVM_NAME" ;;
      lenet) fig_a=fig3a fig_b=fig3b fig_c=fig3c title="non-convex LeNet-5, $IMAGES_NAME" ;;
    esac
    if [ -f "$OUT_DIR/utility/$problem/utility_graph.csv" ]; then
      plot_utility "$p/${fig_a}_utility_$problem.png" "Utility graph ($title): accuracy of w* + noise relative to w*" \
        "$OUT_DIR/utility/$problem/utility_graph.csv" 0.9
    fi
    local table_b=3 table_c=6
    [ "$problem" = lenet ] && table_b=4 table_c=7
    paper_curve_figure "$problem" "$table_b" "$p/${fig_b}_sample_sizes_$problem.png" \
      "Different constant sample sizes s, Table $table_b setting ($title)" s
    paper_curve_figure "$problem" "$table_c" "$p/${fig_c}_budgets_$problem.png" \
      "Different privacy budgets, Table $table_c setting ($title)" eps
  done
}

# paper_curve_figure PROBLEM TABLE PNG TITLE s|eps: one curve per table row plus the non-DP curve.
paper_curve_figure() {
  local problem=$1 table=$2 png=$3 title=$4 by=$5 p=$OUT_DIR/plots
  local -a specs=()
  local sigma s eps clip dat label
  while IFS=$'\t' read -r sigma s eps clip; do
    dat=$p/${problem}_s${s}_sigma$sigma.dat
    [ -f "$dat" ] || continue
    if [ "$by" = s ]; then label="s = $s"; else label="eps = $eps (sigma = $sigma, s = $s)"; fi
    specs+=("$label|$dat")
  done < <(paper_rows "$table")
  # Non-DP curves: at this table's largest s and, for the budget tables, also at the sample-size table's
  # largest s (the paper draws one non-DP curve per figure; both show how s alone changes the ceiling).
  local first_table=3 sizes
  [ "$problem" = lenet ] && first_table=4
  sizes=$( { paper_rows "$first_table" | awk -F'\t' '$2 + 0 > m { m = $2 + 0 } END { print m }'
             paper_rows "$table" | awk -F'\t' '$2 + 0 > m { m = $2 + 0 } END { print m }'; } | sort -n -u)
  local grey=""
  for s in $sizes; do
    dat=$p/${problem}_nondp_s$s.dat
    [ -f "$dat" ] || continue
    specs+=("non-DP (s = $s)|$dat$grey")
    grey='|rgb "#888888"'  # a second non-DP curve in grey, the first in black
  done
  [ ${#specs[@]} -gt 0 ] || return 0
  plot_curves "$png" "$title" "number of gradient computations per client" "test accuracy" "${specs[@]}"
}

# (e) Convergence of the convex runs: F(ŵ_t) − F(w*) per run (plots/<problem>_<run>.subopt.dat), the
# log-log fits in rates.csv, and the figure for the largest s of Table 3.
paper_convergence() {
  local p=$OUT_DIR/plots problem dir name fit slope points x1 x2
  echo "problem,run,fitted_slope,points,window_from,window_to,schedule_slope,asymptotic_slope,floor,final,clipped_fraction" \
    >"$OUT_DIR/rates.csv"
  for problem in strongly_convex plain_convex; do
    for dir in "$OUT_DIR"/runs/$problem/*/; do
      dir=${dir%/}
      name=$(basename "$dir")
      subopt_curve "$dir" "$OUT_DIR/reference/$problem" "$p/${problem}_$name.subopt.dat" || continue
      IFS=$'\t' read -r slope points x1 x2 <<<"$(loglog_fit "$p/${problem}_$name.subopt.dat" 2 0.1)"
      printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$problem" "$name" "$slope" "$points" "$x1" "$x2" \
        "$(schedule_slope "$dir" "$x1" "$x2")" "$(asymptotic_slope "$dir")" "$(curve_floor "$p/${problem}_$name.subopt.dat")" \
        "$(curve_last "$p/${problem}_$name.subopt.dat")" "$(clipped_fraction "$dir")" >>"$OUT_DIR/rates.csv"
    done
  done
  local sigma s
  IFS=$'\t' read -r sigma s _ _ < <(paper_rows 3 | sort -t$'\t' -k2,2n | tail -n 1)
  plot_loglog "$p/fig_e_suboptimality.png" "Suboptimality F(w_t) - F(w*), Table 3 setting (s = $s), $LIBSVM_NAME" \
    "number of gradient computations per client" "F(w_t) - F(w*)  (training objective)" 2 \
    "strongly convex, DP (sigma = $sigma)|$p/strongly_convex_s${s}_sigma$sigma.subopt.dat|1|1" \
    "strongly convex, non-DP|$p/strongly_convex_nondp_s$s.subopt.dat|1|2" \
    "plain convex, DP (sigma = $sigma)|$p/plain_convex_s${s}_sigma$sigma.subopt.dat|2|1" \
    "plain convex, non-DP|$p/plain_convex_nondp_s$s.subopt.dat|2|2"
}
