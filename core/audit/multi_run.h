// The multi-run audit: N training runs with the canary ("in") and N without ("out"), one score per run
// (higher = the canary looks present), turned into lower bounds on the epsilon of the record-level
// guarantee at a given delta. Three bounds and a test of the reported privacy profile, each at confidence
// `confidence`, each labelled with what it assumes (docs/audit.md):
//
// 1. `definition` — no assumption beyond independent runs. For any test with rates (TPR, FPR), an
//    (eps, delta)-DP mechanism satisfies TPR <= e^eps FPR + delta and, for the complementary event with
//    the roles of the inputs swapped, TNR <= e^eps FNR + delta (Kairouz et al. 2015; used for auditing by
//    Jagielski, Ullman & Oprea 2020 and Nasr et al. 2021). With one-sided Clopper–Pearson bounds
//    TPR_lo and FPR_hi, each at level alpha/2 (so both hold together with probability >= 1 - alpha), and
//    TNR_lo = 1 - FPR_hi, FNR_hi = 1 - TPR_lo from the same two events,
//
//      eps >= max( ln((TPR_lo - delta) / FPR_hi),  ln((TNR_lo - delta) / FNR_hi) ).
//
// 2. `gdp_counts` — Nasr et al. 2023 ("Tight auditing of differentially private machine learning"):
//    the same two Clopper–Pearson events give FPR_hi and FNR_hi, which refute every mu-GDP claim with
//    mu < mu_lo = -Phi^{-1}(FPR_hi) - Phi^{-1}(FNR_hi) (core/audit/gaussian_dp.h); eps = the (eps, delta)
//    of mu_lo-GDP. ASSUMPTION: the mechanism's trade-off curve is a Gaussian one, G_mu for some mu —
//    exact for the Gaussian mechanism and full-batch DP-SGD with a worst-case canary, approximate for
//    subsampled DP-SGD over many steps (the central limit theorem of Dong, Roth & Su 2022). Without it,
//    mu_lo is still a valid lower bound on the GDP parameter, but eps(mu_lo) need not bound the true eps:
//    for randomised response (bounded privacy loss) it lands far above the truth (tests/core/audit).
//
// 3. `gdp_fit` — mu from the score distributions: the standardised mean difference
//    (mean_in - mean_out) / s_pooled with its exact lower confidence bound from the noncentral t
//    distribution (core/audit/gaussian_fit.h), all runs used (no threshold). ASSUMPTIONS: the scores are
//    Gaussian with equal variances in and out (then the likelihood-ratio test between them is exactly a
//    mu-GDP test — true for the sum statistic of a Dirac canary in full-batch training) and the trade-off
//    assumption of 2. `variance_ratio` lets the reader check the equal-variance assumption.
//
// 4. `profile` (only when the caller passes the reported privacy profile, delta(eps) at several eps):
//    the assumption-free refutation test of core/audit/profile_check.h — the audit's VIOLATION test. It
//    is graded at two thresholds chosen on the held-out runs (the margin-maximising one and the
//    equal-error-rate one), each with its Clopper–Pearson bounds at alpha/4 per rate, so a refutation at
//    either keeps the stated confidence (Bonferroni over the two).
//
// Threshold selection (1, 2 and 4): the threshold is chosen on held-out runs — the first
// floor(selection_fraction * n) runs of each side — and the bound is evaluated on the remaining runs, so
// the data that pick the threshold never grade it (choosing the best of many thresholds on the same
// runs would bias the bound upward). 1 takes the threshold that maximises its own criterion on the
// held-out runs; 2 takes the held-out runs' equal-error-rate threshold (FPR = FNR), where a Gaussian
// trade-off's estimate varies least; 4 tries both (above).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/audit/profile_check.h"

namespace asyncdp::audit {

struct MultiRunAuditOptions {
  // The delta at which epsilon is bounded: the delta of the reported (eps, delta) guarantee. [0, 1).
  double delta = 1e-5;
  // 1 - alpha: each bound holds with at least this probability over the runs' randomness. (0, 1).
  double confidence = 0.95;
  // Fraction of each side's runs used only to choose the thresholds. (0, 1). More held-out runs pick a
  // better threshold; fewer leave more runs to tighten the Clopper–Pearson intervals. 0.25 by default:
  // on the Gaussian pairs of tests/core/audit it gave larger bounds than 0.1, 0.2, 0.33 or 0.5
  // (docs/audit.md).
  double selection_fraction = 0.25;
  // The reported privacy profile to test (e.g. the PLD accountant's delta(eps) on a grid of eps); empty:
  // no profile test. Points must have eps >= 0 finite and delta in [0, 1].
  std::vector<ProfilePoint> reported_profile;

  // Throws ConfigError / InputError naming the field if a value is out of range.
  void Validate() const;
};

// A bound from a threshold test's counts on the evaluation runs.
struct ThresholdBound {
  double epsilon = 0.0;  // the lower bound (>= 0)
  double threshold = 0.0;
  int64_t true_positives = 0;   // in-runs with score >= threshold (evaluation runs only)
  int64_t false_positives = 0;  // out-runs with score >= threshold
  double tpr_lower = 0.0;       // Clopper–Pearson at alpha/2
  double fpr_upper = 1.0;       // Clopper–Pearson at alpha/2
  // `definition` only: true when the complementary inequality (TNR vs FNR) attains the maximum.
  bool complement = false;
  // `gdp_counts` only: the refuted GDP parameter.
  double mu_lower = 0.0;
};

struct GdpFit {
  double epsilon = 0.0;  // eps of mu_lower-GDP at delta
  double mu_hat = 0.0;
  double mu_lower = 0.0;
  double variance_ratio = 1.0;  // var(in-scores) / var(out-scores); 1 under the assumption
};

struct MultiRunAuditResult {
  int64_t selection_in = 0;  // runs per side that chose the threshold
  int64_t selection_out = 0;
  int64_t evaluation_in = 0;  // runs per side that graded it
  int64_t evaluation_out = 0;
  ThresholdBound definition;  // assumption-free
  ThresholdBound gdp_counts;  // assumes a Gaussian trade-off curve
  GdpFit gdp_fit;             // assumes Gaussian equal-variance scores and a Gaussian trade-off
  // Assumption-free test of options.reported_profile (`refuted` = VIOLATION); unset without a profile.
  bool profile_checked = false;
  ProfileRefutation profile;
  double profile_threshold = 0.0;
  double roc_area = 0.5;  // over all runs; a diagnostic, no confidence
};

// The definition bound of one threshold's counts: tp of n_in, fp of n_out, at level alpha split alpha/2
// per Clopper–Pearson bound. Pure; exposed for tests and for callers with a threshold fixed in advance.
ThresholdBound DefinitionBound(int64_t true_positives, int64_t in_runs, int64_t false_positives,
                               int64_t out_runs, double delta, double alpha);

// The gdp_counts bound of one threshold's counts (mu_lower and its eps at delta), the same alpha split.
ThresholdBound GdpCountsBound(int64_t true_positives, int64_t in_runs, int64_t false_positives,
                              int64_t out_runs, double delta, double alpha);

// The whole audit. Each side needs >= 2 runs (>= 1 to select, >= 1 to evaluate); scores must be finite
// (InputError otherwise: a diverged run cannot be scored).
MultiRunAuditResult MultiRunAudit(std::span<const double> in_scores, std::span<const double> out_scores,
                                  const MultiRunAuditOptions& options);

}  // namespace asyncdp::audit
