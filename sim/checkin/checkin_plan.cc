#include "sim/checkin/checkin_plan.h"

#include <cmath>

#include "core/random.h"

namespace asyncdp::sim::checkin {

int64_t CheckInStep(const CheckInOptions& o, int64_t client, int64_t window) {
  RandomStream stream(StreamKey{o.seed, static_cast<uint32_t>(client), static_cast<uint32_t>(window),
                                StreamPurpose::kCheckIn});
  if (!(stream.NextUniform() < o.participation)) return -1;
  if (o.variant == Variant::kSlidingWindow) {
    return client + static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(o.window_length)));
  }
  return static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(o.steps)));
}

WindowCheckIns DrawWindowCheckIns(const CheckInOptions& o, int64_t window) {
  WindowCheckIns w;
  w.offsets.assign(static_cast<size_t>(o.steps) + 1, 0);
  std::vector<int64_t> step_of(static_cast<size_t>(o.clients), -1);
  for (int64_t j = 0; j < o.clients; ++j) {
    int64_t step = CheckInStep(o, j, window);
    if (step < 0) continue;
    ++w.participating;
    step -= o.warmup;
    if (step < 0 || step >= o.steps) {
      ++w.out_of_range;
      continue;
    }
    step_of[static_cast<size_t>(j)] = step;
    ++w.offsets[static_cast<size_t>(step) + 1];
  }
  for (int64_t i = 0; i < o.steps; ++i) w.offsets[static_cast<size_t>(i) + 1] += w.offsets[static_cast<size_t>(i)];
  w.members.resize(static_cast<size_t>(w.offsets.back()));
  std::vector<int64_t> fill(w.offsets.begin(), w.offsets.end() - 1);
  for (int64_t j = 0; j < o.clients; ++j) {
    const int64_t step = step_of[static_cast<size_t>(j)];
    if (step >= 0) w.members[static_cast<size_t>(fill[static_cast<size_t>(step)]++)] = static_cast<int32_t>(j);
  }
  return w;
}

double ExpectedEmptySteps(int64_t n, int64_t m, double p0) {
  const double md = static_cast<double>(m);
  return md * std::exp(static_cast<double>(n) * std::log1p(-p0 / md));
}

double EmptyStepsVariance(int64_t n, int64_t m, double p0) {
  // Var(sum of indicators) = m a (1 - a) + m (m - 1) (b - a^2), a = (1 - p0/m)^n, b = (1 - 2 p0/m)^n.
  const double md = static_cast<double>(m);
  const double nd = static_cast<double>(n);
  const double a = std::exp(nd * std::log1p(-p0 / md));
  const double b = m >= 2 ? std::exp(nd * std::log1p(-2.0 * p0 / md)) : 0.0;
  return md * a * (1.0 - a) + md * (md - 1.0) * (b - a * a);
}

}  // namespace asyncdp::sim::checkin
