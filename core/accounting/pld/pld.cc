#include "core/accounting/pld/pld.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <string>

#include "core/accounting/log_math.h"
#include "core/accounting/pld/fft.h"
#include "core/accounting/pld/pld_compose.h"
#include "core/accounting/pld/pld_discretization.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace pld_detail {

// delta(eps) of one composed direction, without slack: infinity_mass + sum over l_i > eps of
// p_i (1 - e^{eps - l_i}) (docs/theory.md, "Privacy-loss distribution"). One expm1 per grid point made
// this loop 42% of a random-allocation calibration at epsilon = 8 (its recursive cross-check asks for
// delta(eps) hundreds of times). The grid is uniform, so for point s + j of a block starting at s, with
// c = l_s - eps > 0,
//   1 - e^{-(j Delta + c)} = (1 - e^{-j Delta}) + e^{-j Delta} (1 - e^{-c}):
// two non-negative terms (no cancellation, so each term keeps a few ulps of relative error, as one expm1
// did), a table of 1 - e^{-j Delta} and e^{-j Delta} per call and one expm1 per block.
constexpr int64_t kDeltaBlock = 128;

double DeltaOf(const PldDistribution& d, double delta_loss, double epsilon) {
  double delta = d.infinity_mass;
  const int64_t n = static_cast<int64_t>(d.pmf.size());
  const auto loss_at = [&](int64_t i) { return static_cast<double>(d.offset + i) * delta_loss; };
  // The first grid point above epsilon (the same test, loss > epsilon, as point by point).
  int64_t first = 0;
  if (std::isfinite(epsilon)) {
    const double guess = std::floor(epsilon / delta_loss) - static_cast<double>(d.offset) - 1.0;
    first = static_cast<int64_t>(std::clamp(guess, 0.0, static_cast<double>(n)));
  } else if (epsilon > 0.0) {
    first = n;
  }
  while (first > 0 && loss_at(first - 1) > epsilon) --first;
  while (first < n && !(loss_at(first) > epsilon)) ++first;
  if (n - first <= 2 * kDeltaBlock) {
    for (int64_t i = first; i < n; ++i)
      delta += d.pmf[static_cast<size_t>(i)] * -std::expm1(epsilon - loss_at(i));
    return delta;
  }
  std::array<double, kDeltaBlock> rest;   // 1 - e^{-j Delta}
  std::array<double, kDeltaBlock> decay;  // e^{-j Delta}
  for (int64_t j = 0; j < kDeltaBlock; ++j) {
    const double x = -static_cast<double>(j) * delta_loss;
    rest[static_cast<size_t>(j)] = -std::expm1(x);
    decay[static_cast<size_t>(j)] = std::exp(x);
  }
  for (int64_t s = first; s < n; s += kDeltaBlock) {
    const double head = -std::expm1(epsilon - loss_at(s));  // 1 - e^{-c}
    const int64_t len = std::min(kDeltaBlock, n - s);
    const double* p = d.pmf.data() + s;
    for (int64_t j = 0; j < len; ++j) {
      delta += p[j] * std::fma(decay[static_cast<size_t>(j)], head, rest[static_cast<size_t>(j)]);
    }
  }
  return delta;
}

}  // namespace pld_detail

namespace {

// Smallest eps >= 0 with delta(eps) + slack_sign * slack <= target. Between grid points delta is linear
// in e^eps, so scan the grid from the top and solve inside the first segment that crosses the target. On
// the segment [l - Delta, l] (l the lowest loss counted so far),
//   delta(eps) = fixed + mass - e^{eps - l} * scaled,   scaled = sum p_j e^{l - l_j} <= mass,
// which never overflows however large the losses are.
double EpsilonOf(const ComposedPld::Distribution& d, double delta_loss, double target, double slack_sign) {
  const double fixed = d.infinity_mass + slack_sign * d.slack;
  if (fixed >= target) return kInf;
  const double shrink = std::exp(-delta_loss);
  double mass = 0.0;
  double scaled = 0.0;
  for (int64_t i = static_cast<int64_t>(d.pmf.size()) - 1; i >= 0; --i) {
    const double loss = static_cast<double>(d.offset + i) * delta_loss;
    if (loss <= 0.0) break;
    mass += d.pmf[static_cast<size_t>(i)];
    scaled = scaled * shrink + d.pmf[static_cast<size_t>(i)];
    // e^{lower_end - l}: e^{-Delta} on every segment but the one that reaches 0 (one exp per grid point
    // was a tenth of a Table 3 run's running-epsilon column).
    const double lower_end = std::max(loss - delta_loss, 0.0);
    const double back = loss > delta_loss ? shrink : std::exp(lower_end - loss);
    if (fixed + mass - back * scaled > target) {
      return std::clamp(loss + std::log((fixed + mass - target) / scaled), lower_end, loss);
    }
  }
  return 0.0;
}

// Every channel composed over its groups: two channels per complex FFT, one group's spectrum at a time (a
// schedule may have many groups).
std::vector<PldDistribution> ComposeChannels(const FftPlan& plan,
                                             std::vector<pld_detail::Channel>& channels) {
  using namespace pld_detail;
  std::vector<PldDistribution> composed(channels.size());
  for (size_t c = 0; c < channels.size(); c += 2) {
    Channel& a = channels[c];
    Channel* b = c + 1 < channels.size() ? &channels[c + 1] : nullptr;
    std::vector<Complex> product_a(plan.size(), 1.0);
    std::vector<Complex> product_b(plan.size(), 1.0);
    for (size_t g = 0; g < a.pmfs.size(); ++g) {
      Accumulate(Spectrum(plan, a.pmfs[g], b != nullptr ? &b->pmfs[g] : nullptr), a.counts[g],
                 b != nullptr ? b->counts[g] : -1, product_a, product_b);
    }
    Finish(plan, product_a, product_b, a, b, composed[c], b != nullptr ? &composed[c + 1] : nullptr);
  }
  return composed;
}

}  // namespace

ComposedPld::ComposedPld(const Schedule& schedule, SamplingModel sampling, const PldOptions& options) {
  using namespace pld_detail;
  Prepared prepared = Prepare(schedule, sampling, options, options.compute_lower_bound);
  tail_mass_ = prepared.tail_mass;
  discretization_ = prepared.discretization;
  if (prepared.empty) {
    // No rounds: the loss is 0 with certainty, delta(eps) = 0 for eps >= 0.
    Distribution nothing;
    nothing.pmf = {1.0};
    upper_.assign(prepared.directions.size(), nothing);
    if (options.compute_lower_bound) lower_.assign(prepared.directions.size(), nothing);
    fft_size_ = 1;
    return;
  }
  fft_size_ = int64_t{1} << prepared.log2_size;
  const FftPlan plan(prepared.log2_size);
  std::vector<Channel>& channels = prepared.channels;
  std::vector<Distribution> composed = ComposeChannels(plan, channels);
  for (size_t c = 0; c < channels.size(); ++c) {
    (channels[c].upper ? upper_ : lower_).push_back(std::move(composed[c]));
  }
}

namespace {

std::vector<pld_detail::Channel> ChannelsFor(const std::vector<DiscretePld>& directions, int64_t count,
                                             double delta_loss, double tail_mass) {
  std::vector<pld_detail::Channel> channels;
  for (const DiscretePld& d : directions) {
    pld_detail::Channel channel;
    channel.pmfs = {d};
    channel.mgfs = {pld_detail::MgfOf(d, delta_loss)};
    channel.counts = {count};
    pld_detail::ChooseWindow(channel, delta_loss, tail_mass);
    channels.push_back(std::move(channel));
  }
  return channels;
}

int Log2Covering(const std::vector<pld_detail::Channel>& channels) {
  int64_t longest = 1;
  for (const pld_detail::Channel& c : channels) longest = std::max(longest, c.window_hi - c.window_lo + 1);
  int log2_size = 1;
  while ((int64_t{1} << log2_size) < longest) ++log2_size;
  return log2_size;
}

}  // namespace

std::optional<ComposedPld> ComposedPld::FromDiscrete(const std::vector<DiscretePld>& directions,
                                                     int64_t count, double delta_loss, double tail_mass,
                                                     int max_log2_fft_size, PldBound bound) {
  ASYNCDP_CHECK(count >= 1 && delta_loss > 0.0 && !directions.empty());
  std::vector<pld_detail::Channel> channels = ChannelsFor(directions, count, delta_loss, tail_mass);
  for (pld_detail::Channel& c : channels) c.upper = bound == PldBound::kUpper;
  const int log2_size = Log2Covering(channels);
  if (log2_size > max_log2_fft_size) return std::nullopt;
  ComposedPld out;
  out.discretization_ = delta_loss;
  out.tail_mass_ = tail_mass;
  out.fft_size_ = int64_t{1} << log2_size;
  (bound == PldBound::kUpper ? out.upper_ : out.lower_) = ComposeChannels(FftPlan(log2_size), channels);
  return out;
}

double ComposedPld::DeltaUpperOf(size_t direction, double epsilon) const {
  const Distribution& d = upper_.at(direction);
  return std::min(pld_detail::DeltaOf(d, discretization_, epsilon) + d.slack, 1.0);
}

double ComposedPld::EpsilonUpperOf(size_t direction, double delta) const {
  return EpsilonOf(upper_.at(direction), discretization_, delta, +1.0);
}

double ComposedPld::DeltaUpper(double epsilon) const {
  double worst = 0.0;
  for (const Distribution& d : upper_)
    worst = std::max(worst, pld_detail::DeltaOf(d, discretization_, epsilon) + d.slack);
  return std::min(worst, 1.0);
}

double ComposedPld::DeltaLower(double epsilon) const {
  ASYNCDP_CHECK_MSG(!lower_.empty(), "PldOptions::compute_lower_bound was false");
  double worst = 0.0;
  for (const Distribution& d : lower_)
    worst = std::max(worst, pld_detail::DeltaOf(d, discretization_, epsilon) - d.slack);
  return std::clamp(worst, 0.0, 1.0);
}

double ComposedPld::DeltaLowerOf(size_t direction, double epsilon) const {
  const Distribution& d = lower_.at(direction);
  return std::clamp(pld_detail::DeltaOf(d, discretization_, epsilon) - d.slack, 0.0, 1.0);
}

double ComposedPld::EpsilonLowerOf(size_t direction, double delta) const {
  if (delta < std::max(tail_mass_, kMinLowerBoundDelta)) return 0.0;  // as EpsilonLower
  return EpsilonOf(lower_.at(direction), discretization_, delta, -1.0);
}

double ComposedPld::EpsilonUpper(double delta) const {
  double worst = 0.0;
  for (const Distribution& d : upper_) worst = std::max(worst, EpsilonOf(d, discretization_, delta, +1.0));
  return worst;
}

double ComposedPld::EpsilonLower(double delta) const {
  ASYNCDP_CHECK_MSG(!lower_.empty(), "PldOptions::compute_lower_bound was false");
  // Below kMinLowerBoundDelta only the trivial bound: the pooled composition's far tail is not resolved
  // there (it was seen above the true epsilon of 10^5 Gaussian rounds at delta = 1e-10).
  if (delta < std::max(tail_mass_, kMinLowerBoundDelta)) return 0.0;
  double worst = 0.0;
  for (const Distribution& d : lower_) worst = std::max(worst, EpsilonOf(d, discretization_, delta, -1.0));
  return worst;
}

PldEpsilonResult PldEpsilon(const Schedule& schedule, SamplingModel sampling, double delta,
                            const PldOptions& options) {
  if (!(delta > 0.0 && delta < 1.0))
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
  const ComposedPld pld(schedule, sampling, options);
  PldEpsilonResult out;
  out.epsilon_upper = pld.EpsilonUpper(delta);
  out.epsilon_lower = pld.has_lower_bound() ? pld.EpsilonLower(delta) : 0.0;
  out.discretization = pld.discretization();
  out.fft_size = pld.fft_size();
  return out;
}

}  // namespace asyncdp::accounting
