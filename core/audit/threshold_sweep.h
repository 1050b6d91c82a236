// Threshold tests on audit scores. A run's score is higher when the canary looks present; the test
// "guess IN iff score >= t" has, on in-runs (canary present) and out-runs (canary absent),
//
//   TP(t) = #{in-scores >= t},  FP(t) = #{out-scores >= t},  FN = n_in - TP,  TN = n_out - FP.
//
// Every distinct threshold that can change the counts is a distinct score value; SweepThresholds lists
// them (plus +inf, the test that never says IN) with their counts in O(n log n). The ROC curve and the
// score histograms for the audit's plots come from the same sweep.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace asyncdp::audit {

struct ThresholdCounts {
  double threshold = 0.0;  // guess IN iff score >= threshold
  int64_t true_positives = 0;
  int64_t false_positives = 0;
};

// All distinct score values of in ∪ out as thresholds, in decreasing order, preceded by +inf (0, 0);
// the last entry (the smallest score) has TP = n_in, FP = n_out. Scores must be finite.
std::vector<ThresholdCounts> SweepThresholds(std::span<const double> in_scores,
                                             std::span<const double> out_scores);

// The counts of one threshold.
ThresholdCounts CountAtThreshold(std::span<const double> in_scores, std::span<const double> out_scores,
                                 double threshold);

struct RocPoint {
  double threshold = 0.0;
  double false_positive_rate = 0.0;
  double true_positive_rate = 0.0;
};

// The empirical ROC curve (one point per sweep threshold, FPR increasing) and its area (trapezoids; equals
// P[in > out] + P[in = out] / 2). Diagnostics for the plots — no confidence attached.
std::vector<RocPoint> RocCurve(std::span<const double> in_scores, std::span<const double> out_scores);
double RocArea(std::span<const double> in_scores, std::span<const double> out_scores);

// Counts of scores in `bins` equal-width bins over [lo, hi] (values outside go to the end bins).
std::vector<int64_t> Histogram(std::span<const double> scores, double lo, double hi, int bins);

}  // namespace asyncdp::audit
