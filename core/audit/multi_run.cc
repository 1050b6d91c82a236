#include "core/audit/multi_run.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/audit/clopper_pearson.h"
#include "core/audit/gaussian_dp.h"
#include "core/audit/gaussian_fit.h"
#include "core/audit/threshold_sweep.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::audit {
namespace {

void CheckCounts(int64_t tp, int64_t n_in, int64_t fp, int64_t n_out, double delta, double alpha) {
  ASYNCDP_CHECK(n_in >= 1 && n_out >= 1 && tp >= 0 && tp <= n_in && fp >= 0 && fp <= n_out);
  ASYNCDP_CHECK(delta >= 0.0 && delta < 1.0 && alpha > 0.0 && alpha < 1.0);
}

// ln((a - delta) / b), or 0 when the numerator is not positive: a bound below 0 says nothing.
double LogRatioBound(double a, double b, double delta) {
  if (a - delta <= 0.0) return 0.0;
  return std::max(0.0, std::log((a - delta) / b));
}

void CheckScores(std::span<const double> scores, const char* side) {
  for (size_t r = 0; r < scores.size(); ++r) {
    if (!std::isfinite(scores[r])) {
      throw InputError("audit", std::string(side) + "-run " + std::to_string(r) +
                                    " has a non-finite score (" + std::to_string(scores[r]) +
                                    "); a diverged run cannot be scored");
    }
  }
}

// Clopper–Pearson bounds per count, computed once each on first use: a sweep over n thresholds asks for
// the same tp / fp counts many times.
class LazyBounds {
 public:
  LazyBounds(int64_t trials, double alpha, bool upper)
      : trials_(trials), alpha_(alpha), upper_(upper), values_(trials + 1, -1.0) {}
  double operator()(int64_t successes) {
    double& v = values_[successes];
    if (v < 0.0) {
      v = upper_ ? ClopperPearsonUpper(successes, trials_, alpha_)
                 : ClopperPearsonLower(successes, trials_, alpha_);
    }
    return v;
  }

 private:
  int64_t trials_;
  double alpha_;
  bool upper_;
  std::vector<double> values_;
};

// The definition bound from Clopper–Pearson bounds (tpr_lo, fpr_hi); *complement says which inequality.
double DefinitionEpsilon(double tpr_lower, double fpr_upper, double delta, bool* complement) {
  // TPR <= e^eps FPR + delta, and TNR <= e^eps FNR + delta with TNR_lo = 1 - FPR_hi, FNR_hi = 1 - TPR_lo.
  const double direct = LogRatioBound(tpr_lower, fpr_upper, delta);
  const double reverse = tpr_lower < 1.0 ? LogRatioBound(1.0 - fpr_upper, 1.0 - tpr_lower, delta) : 0.0;
  if (complement != nullptr) *complement = reverse > direct;
  return std::max(direct, reverse);
}

// +inf (the test that never says IN) until a threshold does better.
struct SelectedThresholds {
  double definition = std::numeric_limits<double>::infinity();
  double gdp = std::numeric_limits<double>::infinity();
  double profile = std::numeric_limits<double>::infinity();
};

// On the selection runs: the threshold maximising the definition bound, the equal-error-rate threshold,
// and (with a profile) the threshold maximising the profile margin. Ties keep the higher threshold.
SelectedThresholds SelectThresholds(std::span<const double> in, std::span<const double> out, double delta,
                                    double alpha, std::span<const ProfilePoint> profile) {
  const auto n_in = static_cast<int64_t>(in.size());
  const auto n_out = static_cast<int64_t>(out.size());
  const auto sweep = SweepThresholds(in, out);
  LazyBounds tpr_lower(n_in, alpha / 2, /*upper=*/false);
  LazyBounds fpr_upper(n_out, alpha / 2, /*upper=*/true);
  SelectedThresholds best;
  double best_definition = -1.0;
  double best_gap = std::numeric_limits<double>::infinity();
  double best_margin = -std::numeric_limits<double>::infinity();
  for (const ThresholdCounts& c : sweep) {
    const double tl = tpr_lower(c.true_positives);
    const double fh = fpr_upper(c.false_positives);
    const double eps = DefinitionEpsilon(tl, fh, delta, nullptr);
    if (eps > best_definition) {
      best_definition = eps;
      best.definition = c.threshold;
    }
    // GDP: under its assumption every threshold refutes the same mu in expectation, so the threshold
    // is the one whose estimate varies least — the equal-error-rate point, where FPR = FNR (the
    // variance of Phi^{-1}(FPR) + Phi^{-1}(FNR) is near its minimum there). Maximising the noisy
    // estimate over thresholds instead would pick tails that the evaluation runs do not confirm.
    const double gap = std::abs(static_cast<double>(c.false_positives) / static_cast<double>(n_out) -
                                (1.0 - static_cast<double>(c.true_positives) / static_cast<double>(n_in)));
    if (gap < best_gap) {
      best_gap = gap;
      best.gdp = c.threshold;
    }
    if (!profile.empty()) {
      const double margin = RefuteProfile(profile, fh, 1.0 - tl).log_margin;
      if (margin > best_margin) {
        best_margin = margin;
        best.profile = c.threshold;
      }
    }
  }
  return best;
}

}  // namespace

void MultiRunAuditOptions::Validate() const {
  if (!(delta >= 0.0 && delta < 1.0)) throw ConfigError("audit.delta", "must be in [0, 1)");
  if (!(confidence > 0.0 && confidence < 1.0)) throw ConfigError("audit.confidence", "must be in (0, 1)");
  if (!(selection_fraction > 0.0 && selection_fraction < 1.0)) {
    throw ConfigError("audit.selection_fraction", "must be in (0, 1)");
  }
  for (size_t j = 0; j < reported_profile.size(); ++j) {
    const ProfilePoint& p = reported_profile[j];
    if (!(p.epsilon >= 0.0 && std::isfinite(p.epsilon) && p.delta >= 0.0 && p.delta <= 1.0)) {
      throw InputError("audit.reported_profile[" + std::to_string(j) + "]",
                       "needs a finite epsilon >= 0 and delta in [0, 1]");
    }
  }
}

ThresholdBound DefinitionBound(int64_t true_positives, int64_t in_runs, int64_t false_positives,
                               int64_t out_runs, double delta, double alpha) {
  CheckCounts(true_positives, in_runs, false_positives, out_runs, delta, alpha);
  ThresholdBound b;
  b.true_positives = true_positives;
  b.false_positives = false_positives;
  b.tpr_lower = ClopperPearsonLower(true_positives, in_runs, alpha / 2);
  b.fpr_upper = ClopperPearsonUpper(false_positives, out_runs, alpha / 2);
  b.epsilon = DefinitionEpsilon(b.tpr_lower, b.fpr_upper, delta, &b.complement);
  return b;
}

ThresholdBound GdpCountsBound(int64_t true_positives, int64_t in_runs, int64_t false_positives,
                              int64_t out_runs, double delta, double alpha) {
  CheckCounts(true_positives, in_runs, false_positives, out_runs, delta, alpha);
  ASYNCDP_CHECK(delta > 0.0);
  ThresholdBound b;
  b.true_positives = true_positives;
  b.false_positives = false_positives;
  b.tpr_lower = ClopperPearsonLower(true_positives, in_runs, alpha / 2);
  b.fpr_upper = ClopperPearsonUpper(false_positives, out_runs, alpha / 2);
  // FNR_hi = 1 - TPR_lo. Clopper–Pearson upper bounds are > 0, so mu_lower is finite.
  b.mu_lower = GdpMuRefuted(b.fpr_upper, 1.0 - b.tpr_lower);
  b.epsilon = GdpEpsilon(b.mu_lower, delta);
  return b;
}

MultiRunAuditResult MultiRunAudit(std::span<const double> in_scores, std::span<const double> out_scores,
                                  const MultiRunAuditOptions& options) {
  options.Validate();
  if (in_scores.size() < 2 || out_scores.size() < 2) {
    throw InputError("audit", "the multi-run audit needs at least 2 runs with and 2 without the canary");
  }
  CheckScores(in_scores, "in");
  CheckScores(out_scores, "out");
  const double alpha = 1.0 - options.confidence;
  const double delta = options.delta;

  MultiRunAuditResult result;
  auto split = [&](std::span<const double> scores) {
    const auto n = static_cast<int64_t>(scores.size());
    const int64_t select = std::clamp<int64_t>(
        static_cast<int64_t>(std::floor(options.selection_fraction * static_cast<double>(n))), 1, n - 1);
    return select;
  };
  result.selection_in = split(in_scores);
  result.selection_out = split(out_scores);
  result.evaluation_in = static_cast<int64_t>(in_scores.size()) - result.selection_in;
  result.evaluation_out = static_cast<int64_t>(out_scores.size()) - result.selection_out;
  const auto select_in = in_scores.first(result.selection_in);
  const auto select_out = out_scores.first(result.selection_out);
  const auto eval_in = in_scores.subspan(result.selection_in);
  const auto eval_out = out_scores.subspan(result.selection_out);

  const SelectedThresholds chosen =
      SelectThresholds(select_in, select_out, delta, alpha, options.reported_profile);
  // 1. The definition bound, graded on the evaluation runs.
  const ThresholdCounts c1 = CountAtThreshold(eval_in, eval_out, chosen.definition);
  result.definition = DefinitionBound(c1.true_positives, result.evaluation_in, c1.false_positives,
                                      result.evaluation_out, delta, alpha);
  result.definition.threshold = chosen.definition;
  // 2. and 3. need delta > 0 (a mu-GDP mechanism with mu > 0 is (eps, 0)-DP for no finite eps).
  if (delta > 0.0) {
    const ThresholdCounts c2 = CountAtThreshold(eval_in, eval_out, chosen.gdp);
    result.gdp_counts = GdpCountsBound(c2.true_positives, result.evaluation_in, c2.false_positives,
                                       result.evaluation_out, delta, alpha);
    result.gdp_counts.threshold = chosen.gdp;
    const GaussianFitBound fit = FitGaussianScores(in_scores, out_scores, alpha);
    result.gdp_fit = {GdpEpsilon(fit.mu_lower, delta), fit.mu_hat, fit.mu_lower, fit.variance_ratio};
  }
  // 4. The profile test, graded on the evaluation runs at two held-out choices — the threshold that
  // maximised the margin on the held-out runs (best for lopsided trade-offs, e.g. subsampling) and the
  // equal-error-rate one (robust for symmetric ones) — each at alpha/2 (Bonferroni), so "refuted" keeps
  // the stated confidence.
  if (!options.reported_profile.empty()) {
    result.profile_checked = true;
    bool first = true;
    for (const double threshold : {chosen.profile, chosen.gdp}) {
      const ThresholdCounts c = CountAtThreshold(eval_in, eval_out, threshold);
      const double fpr_upper = ClopperPearsonUpper(c.false_positives, result.evaluation_out, alpha / 4);
      const double tpr_lower = ClopperPearsonLower(c.true_positives, result.evaluation_in, alpha / 4);
      const ProfileRefutation r = RefuteProfile(options.reported_profile, fpr_upper, 1.0 - tpr_lower);
      if (first || r.log_margin > result.profile.log_margin) {
        result.profile = r;
        result.profile_threshold = threshold;
      }
      first = false;
    }
  }
  result.roc_area = RocArea(in_scores, out_scores);
  return result;
}

}  // namespace asyncdp::audit
