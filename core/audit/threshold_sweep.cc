#include "core/audit/threshold_sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace asyncdp::audit {
namespace {

std::vector<double> SortedDescending(std::span<const double> scores) {
  std::vector<double> sorted(scores.begin(), scores.end());
  for (const double s : sorted) ASYNCDP_CHECK_MSG(std::isfinite(s), "audit scores must be finite");
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  return sorted;
}

}  // namespace

std::vector<ThresholdCounts> SweepThresholds(std::span<const double> in_scores,
                                             std::span<const double> out_scores) {
  const std::vector<double> in = SortedDescending(in_scores);
  const std::vector<double> out = SortedDescending(out_scores);
  std::vector<ThresholdCounts> sweep;
  sweep.reserve(in.size() + out.size() + 1);
  sweep.push_back({std::numeric_limits<double>::infinity(), 0, 0});
  size_t i = 0;
  size_t o = 0;
  // Merge the two descending lists; each distinct value becomes one threshold that admits every score
  // equal to it.
  while (i < in.size() || o < out.size()) {
    const double next_in = i < in.size() ? in[i] : -std::numeric_limits<double>::infinity();
    const double next_out = o < out.size() ? out[o] : -std::numeric_limits<double>::infinity();
    const double t = std::max(next_in, next_out);
    while (i < in.size() && in[i] == t) ++i;
    while (o < out.size() && out[o] == t) ++o;
    sweep.push_back({t, static_cast<int64_t>(i), static_cast<int64_t>(o)});
  }
  return sweep;
}

ThresholdCounts CountAtThreshold(std::span<const double> in_scores, std::span<const double> out_scores,
                                 double threshold) {
  ThresholdCounts counts{threshold, 0, 0};
  for (const double s : in_scores) counts.true_positives += s >= threshold;
  for (const double s : out_scores) counts.false_positives += s >= threshold;
  return counts;
}

std::vector<RocPoint> RocCurve(std::span<const double> in_scores, std::span<const double> out_scores) {
  ASYNCDP_CHECK(!in_scores.empty() && !out_scores.empty());
  const auto sweep = SweepThresholds(in_scores, out_scores);
  const double n_in = static_cast<double>(in_scores.size());
  const double n_out = static_cast<double>(out_scores.size());
  std::vector<RocPoint> curve;
  curve.reserve(sweep.size());
  for (const ThresholdCounts& c : sweep) {
    curve.push_back({c.threshold, c.false_positives / n_out, c.true_positives / n_in});
  }
  return curve;
}

double RocArea(std::span<const double> in_scores, std::span<const double> out_scores) {
  const auto curve = RocCurve(in_scores, out_scores);
  double area = 0.0;
  for (size_t j = 1; j < curve.size(); ++j) {
    area += 0.5 * (curve[j].true_positive_rate + curve[j - 1].true_positive_rate) *
            (curve[j].false_positive_rate - curve[j - 1].false_positive_rate);
  }
  return area;
}

std::vector<int64_t> Histogram(std::span<const double> scores, double lo, double hi, int bins) {
  ASYNCDP_CHECK(bins >= 1 && lo < hi && std::isfinite(lo) && std::isfinite(hi));
  std::vector<int64_t> counts(bins, 0);
  const double width = (hi - lo) / bins;
  for (const double s : scores) {
    const double position = std::floor((s - lo) / width);
    const int bin = position < 0 ? 0 : position >= bins ? bins - 1 : static_cast<int>(position);
    ++counts[bin];
  }
  return counts;
}

}  // namespace asyncdp::audit
