# shellcheck shell=bash
# REPORT.md of `run_experiments.sh quick`: runs, the reference optima, suboptimality on log-log axes with
# fitted slopes beside the schedules' rates, the non-convex training curves, and rate checks. Reads what
# quick.sh wrote; computes nothing about models or privacy. Sourced by quick.sh.

QUICK_LABEL_strongly_convex="strongly convex (logistic_l2, λ = 1/N_c, η0/(1+βt))"
QUICK_LABEL_plain_convex="plain convex (logistic, η0/(1+β√t))"
QUICK_LABEL_geometric_median="geometric median (||θ − x||, η0/(1+β√t))"

# The w* table: one row per convex problem.
quick_reference_rows() {
  local problem f
  for problem in "${QUICK_CONVEX[@]}"; do
    f=$OUT_DIR/reference/$problem/summary.json
    if [ ! -f "$f" ]; then
      printf '| %s | not computed (see `reference/%s.log`) ||||||\n' "$problem" "$problem"
      continue
    fi
    json_get "$f" model method objective evaluated_objective gradient_norm iterations records |
      awk -F'\t' -v p="$problem" '{ printf "| %s | %s | %s | %.12g | %.12g | %.2e | %s | %s |\n", p, $1, $2, $3, $4, $5, $6, $7 }'
  done
}

# The slope table: one row per convex run.
quick_rate_rows() {
  local problem kind label
  for problem in "${QUICK_CONVEX[@]}"; do
    for kind in sgd nondp dp; do
      case $kind in
        sgd) label="SGD, s = 1, unclipped" ;;
        nondp) label="non-DP (C as DP, no noise)" ;;
        dp) label="DP" ;;
      esac
      local run=${problem}_$kind
      [ "$(rate_field "$run" fitted_slope)" = NA ] && [ "$(rate_field "$run" final)" = NA ] && continue
      printf '| %s | %s | %s | %s–%s | **%s** | %s | %s | %s | %s | %s |\n' "$problem" "$label" \
        "$(rate_field "$run" asymptotic_slope)" "$(rate_field "$run" window_from)" "$(rate_field "$run" window_to)" \
        "$(rate_field "$run" fitted_slope)" "$(rate_field "$run" schedule_slope)" "$(rate_field "$run" floor)" \
        "$(rate_field "$run" final)" "$(rate_field "$run" distance_slope)" "$(rate_field "$run" clipped_fraction)"
    done
  done
}

# One check row: NAME MEASURED EXPECTED VERDICT.
check_row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }

# less_verdict A B: "holds" when A < B (both numbers), else "does not hold".
less_verdict() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA") print "not measured"
                                   else print (a + 0 < b + 0) ? "**holds**" : "**does not hold**" }'
}

quick_checks() {
  local problem fitted predicted
  for problem in "${QUICK_CONVEX[@]}"; do
    fitted=$(rate_field "${problem}_sgd" fitted_slope)
    predicted=$(rate_field "${problem}_sgd" schedule_slope)
    check_row "$problem, SGD: F − F* falls at the schedule's rate" "slope $fitted" \
      "≤ $predicted + 0.15 (η(t) over the window; asymptotically $(rate_field "${problem}_sgd" asymptotic_slope))" \
      "$(rate_verdict "$fitted" "$predicted")"
  done
  check_row "strongly convex falls faster than plain convex (SGD slopes)" \
    "$(rate_field strongly_convex_sgd fitted_slope) vs $(rate_field plain_convex_sgd fitted_slope)" "strongly < plain" \
    "$(less_verdict "$(rate_field strongly_convex_sgd fitted_slope)" "$(rate_field plain_convex_sgd fitted_slope)")"
  for problem in "${QUICK_CONVEX[@]}"; do
    fitted=$(rate_field "${problem}_nondp" fitted_slope)
    predicted=$(rate_field "${problem}_nondp" schedule_slope)
    check_row "$problem, non-DP with the DP clipping: F − F* falls at the schedule's rate" \
      "slope $fitted, floor $(rate_field "${problem}_nondp" floor)" "≤ $predicted + 0.15" \
      "$(rate_verdict "$fitted" "$predicted")"
  done
  for problem in "${QUICK_CONVEX[@]}"; do
    check_row "$problem, DP levels off above non-DP (noise floor)" \
      "floor $(rate_field "${problem}_dp" floor) vs $(rate_field "${problem}_nondp" floor)" "DP floor > non-DP floor" \
      "$(less_verdict "$(rate_field "${problem}_nondp" floor)" "$(rate_field "${problem}_dp" floor)")"
  done
  local dp nd
  dp=$(curve_floor "$OUT_DIR/plots/lenet_dp.diag_train_loss.dat" 2>/dev/null || echo NA)
  nd=$(curve_floor "$OUT_DIR/plots/lenet_nondp.diag_train_loss.dat" 2>/dev/null || echo NA)
  check_row "LeNet: non-DP training loss below DP's (last quarter)" "$nd vs $dp" "non-DP < DP" "$(less_verdict "$nd" "$dp")"
}

# Why the checks that do not hold fail, from the same measurements.
quick_check_notes() {
  local problem fitted predicted notes=""
  for problem in "${QUICK_CONVEX[@]}"; do
    fitted=$(rate_field "${problem}_sgd" fitted_slope)
    predicted=$(rate_field "${problem}_sgd" schedule_slope)
    if [ "$(rate_verdict "$fitted" "$predicted")" = "**does not hold**" ]; then
      notes+="* **$problem, SGD**: F − F* fell with slope $fitted where η(t) falls with $predicted over the same"
      notes+=" window: slower than the bound allows on this run (final F − F* = $(rate_field "${problem}_sgd" final)).\n"
    fi
    fitted=$(rate_field "${problem}_nondp" fitted_slope)
    predicted=$(rate_field "${problem}_nondp" schedule_slope)
    if [ "$(rate_verdict "$fitted" "$predicted")" = "**does not hold**" ]; then
      notes+="* **$problem, non-DP with clipping**: $(rate_field "${problem}_nondp" clipped_fraction) of the gradients"
      notes+=" were clipped and F − F* levelled off at $(rate_field "${problem}_nondp" floor) (slope $fitted):"
      notes+=" the clipping bias, not the schedule — the unclipped SGD run on the same objective reached"
      notes+=" $(rate_field "${problem}_sgd" final).\n"
    fi
  done
  [ -n "$notes" ] || { echo "Every rate check holds."; return; }
  printf 'Where a check does not hold:\n\n%b' "$notes"
}

quick_report() {
  local run_seconds=$1 total_seconds=$2 runs=$OUT_DIR/runs p=$OUT_DIR/plots
  local dirs=() problem kind
  for problem in "${QUICK_CONVEX[@]}"; do
    for kind in dp nondp sgd; do dirs+=("$runs/${problem}_$kind"); done
  done
  dirs+=("$runs/lenet_dp" "$runs/lenet_nondp")
  local distance_note
  if quick_has_distance; then
    distance_note="$(image "distance to w*, strongly convex" "$p/distance.png")"
  else
    distance_note="||ŵ_t − w*||² needs the model at every evaluation; this build's metrics.csv does not record it
(no \`distance_sq\` column), so the distance column of \`curves.csv\` is NA. Strong convexity bounds it by
the suboptimality: ||ŵ − w*||² ≤ 2 (F(ŵ) − F*)/λ."
  fi
  cat <<EOF
# Quick comparison: how fast DP-SGD converges on strongly convex, plain convex and non-convex objectives

$(report_provenance quick)

Wall time: **$run_seconds s** for the runs and reference optima below (**$total_seconds s** including set-up and
plotting).

Data: convex problems on **$LIBSVM_NAME** ($LIBSVM_ORIGIN); LeNet-5 on **$IMAGES_NAME** ($IMAGES_ORIGIN).
5 clients, 1-asynchronous rounds (Υ = k ≥ i − 1), Poisson sampling, virtual runtime (deterministic from the
seed). Each convex problem runs three times: **DP** (the paper's Table 3 σ, C and s = 26), **non-DP** (the
same clipping C, no noise: the paper's non-private baseline) and **SGD** (non-DP, s = 1, no clipping: the
algorithm the schedules' rate bounds are about). Configurations: \`experiments/quick_strongly_convex.toml\`,
\`experiments/quick_plain_convex.toml\`, \`experiments/quick_geometric_median.toml\`,
\`experiments/quick_lenet.toml\`; \`manifest.tsv\` lists every override.

## Runs

ε is per client (record-level DP of its local data set), for δ = 1/N_c: RDP and PLD (with its lower bound)
are upper bounds under Poisson sampling and add/remove neighbours; GDP is the central-limit approximation;
ε (6) is the paper's relation σ = sqrt(2(ε + ln(1/δ))/ε), a guarantee only where Theorem 3.1/B.4 holds
(see each run's \`summary.json\`, \`privacy.proactive\`). K/client and T/client are realised means. The
geometric median is unsupervised: it has no test accuracy.

$(runs_table "${dirs[@]}")

## Reference optima

w* of each convex objective F(w) = (1/N) Σ_r f(w; x_r) over every client's rows, with f exactly the
per-example loss the model clips and evaluates (regulariser included), solved without noise or clipping to
a gradient norm below 1e-10 (\`asyncdp reference-optimum\`: truncated Newton for logistic regression,
Weiszfeld's iteration for the geometric median; cached in \`reference/\`). F(w*) as evaluated is F at w*
rounded to float through the model's evaluation: suboptimality is taken against it, so float rounding cancels.

| problem | model | method | F(w*) | F(w*) as evaluated | ‖∇F(w*)‖ | iterations | N |
|---|---|---|---|---|---|---|---|
$(quick_reference_rows)

## Convergence rates (convex)

$(image "suboptimality, log-log" "$p/suboptimality.png")

Fits are least squares of log10(F − F*) on log10(t) over the last decade of each run (t = gradient
computations per client). The bounds scale with the step size: E[F − F*] = O(η(t)) for η0/(1+βt) on a
strongly convex objective (≈ 1/t once βt ≫ 1) and O(η(t)) up to a log factor for η0/(1+β√t) on a convex one
(≈ 1/√t once β√t ≫ 1); "schedule" is the log-log slope of η(t) over exactly the fitted window, the rate the
schedule predicts there. "floor" is the median over the last quarter of the run: where a curve levels off.

| problem | run | asymptotic rate | window (t) | fitted slope | schedule | floor | final | slope of ‖ŵ − w*‖² | clipped |
|---|---|---|---|---|---|---|---|---|---|
$(quick_rate_rows)

$distance_note

What the floors are ("clipped" is the fraction of per-example gradients clipped, from \`clients.csv\`):
when some but not all gradients are clipped, as for logistic regression at C = 0.1, DP-SGD follows the
clipped gradients even without noise, which vanish at a different point than ∇F: F − F* then levels off
at that clipping bias (the non-DP floor) instead of falling to 0. The geometric median's gradients are unit
vectors, all clipped by the same factor, so clipping only rescales the step. The DP runs level off higher,
at the noise floor (DP floor above the non-DP one), which falls only as η(t) shrinks the noise.

Data: \`rates.csv\` (the table), \`curves.csv\` (every evaluation: accuracy, F − F*, distance),
\`plots/*.subopt.dat\`.

## Non-convex (LeNet-5)

Non-convex SGD bounds control the gradient norm (min_t E‖∇F(ŵ_t)‖²), not the loss; the training loss is
the objective itself.

$(image "LeNet training loss" "$p/lenet_train_loss.png")

$(if [ -f "$p/lenet_gradient_norm.png" ]; then image "LeNet gradient norm" "$p/lenet_gradient_norm.png"; else
    echo "The full-gradient norm ‖∇F(ŵ_t)‖ needs the model at every evaluation; this build's metrics.csv does"
    echo "not record it (no \`diag_gradient_norm\` column), so only the training loss is shown."
  fi)

$(image "LeNet test accuracy" "$p/lenet.png")

## Test accuracy (for reference)

$(image "accuracy vs gradient computations, convex" "$p/convex_accuracy.png")

## Checks

Rates, not accuracies. A bound caps the rate, so a slope at least as steep as the schedule's (within
0.15) meets it.

| check | measured | expected | verdict |
|---|---|---|---|
$(quick_checks)

$(quick_check_notes)

The paper's full figures are reproduced by \`./run_experiments.sh paper\`; a grid of your own by
\`./run_experiments.sh sweep\`.
EOF
  failed_section
}
