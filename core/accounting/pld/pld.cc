#include "core/accounting/pld/pld.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#include "core/accounting/pld/fft.h"
#include "core/accounting/pld/pld_discretization.h"
#include "core/accounting/pld/privacy_loss_pair.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Complex = std::complex<double>;

// One real sequence to compose: every group's PMF for one direction and one bound.
struct Channel {
  std::vector<DiscretePld> pmfs;  // parallel to the compact schedule
  std::vector<int64_t> counts;
  bool upper = true;
  // Output window [window_lo, window_lo + fft_size) and the mass bound outside [window_lo, window_hi].
  int64_t window_lo = 0;
  int64_t window_hi = 0;
  double outside_mass = 0.0;
};

// Both sampling schemes are accounted with the Poisson remove/add pairs. Fixed-size sampling without
// replacement under replace-one neighbours is dominated by ((1-q) P + q P', P) and its reverse, with (P, P')
// the replace-one pair of the base Gaussian: N(0) vs N(2C), i.e. the Poisson structure with the noise
// multiplier halved (Zhu, Dong, Wang 2022, the subsampling-without-replacement proposition; Lebeda et al.
// 2024). The pair (1-q)N(0)+qN(1) vs (1-q)N(0)+qN(-1) used before does NOT dominate: the other records of
// a fixed-size batch differ between "record in" and "record out" (docs/design.md, privacy table).
std::vector<PairKind> DirectionsFor(SamplingModel sampling) {
  if (sampling == SamplingModel::kShuffle) {
    throw ConfigError("sampling",
                      "the PLD accountant needs poisson or fixed-size sampling; reduce shuffled schedules first");
  }
  return {PairKind::kPoissonRemove, PairKind::kPoissonAdd};
}

// The noise multiplier of the Poisson pair that accounts one round (see DirectionsFor).
double PairSigma(double sigma, SamplingModel sampling) {
  return sampling == SamplingModel::kFixedSizeWithoutReplacement ? 0.5 * sigma : sigma;
}

// Chernoff bounds on the composed (finite part of the) PLD: for lambda > 0,
//   mass(S >= t) <= exp(sum_g count_g ln M_g(lambda) - lambda t),  M_g(lambda) = sum_i p_i e^{lambda i
//   Delta},
// and symmetrically below; the best of a geometric grid of lambda is used. Sets the channel's window
// and the bound on the mass outside it.
void ChooseWindow(Channel& channel, double delta_loss, double tail_mass) {
  // Support bounds in double: count * offset can exceed the int64 range for long schedules.
  double support_lo = 0.0;
  double support_hi = 0.0;
  for (size_t g = 0; g < channel.pmfs.size(); ++g) {
    const DiscretePld& d = channel.pmfs[g];
    const auto count = static_cast<double>(channel.counts[g]);
    support_lo += count * static_cast<double>(d.offset);
    support_hi += count * static_cast<double>(d.offset + static_cast<int64_t>(d.pmf.size()) - 1);
  }
  // sum_g count_g ln M_g(lambda), each M_g summed from its far end so the weights e^{lambda (i - end) Delta}
  // stay in (0, 1] and are built by multiplication (one exp per group).
  auto log_mgf = [&](double lambda) {
    double total = 0.0;
    for (size_t g = 0; g < channel.pmfs.size(); ++g) {
      const DiscretePld& d = channel.pmfs[g];
      const auto n = static_cast<int64_t>(d.pmf.size());
      const double step = std::exp(-std::abs(lambda) * delta_loss);
      double weight = 1.0;
      double sum = 0.0;
      if (lambda > 0.0) {
        for (int64_t i = n - 1; i >= 0 && weight > 0.0; --i, weight *= step)
          sum += d.pmf[static_cast<size_t>(i)] * weight;
        total += static_cast<double>(channel.counts[g]) *
                 (std::log(sum) + lambda * delta_loss * static_cast<double>(d.offset + n - 1));
      } else {
        for (int64_t i = 0; i < n && weight > 0.0; ++i, weight *= step)
          sum += d.pmf[static_cast<size_t>(i)] * weight;
        total += static_cast<double>(channel.counts[g]) *
                 (std::log(sum) + lambda * delta_loss * static_cast<double>(d.offset));
      }
    }
    return total;
  };
  const double log_tail = std::log(0.5 * tail_mass);
  double best_hi = support_hi;
  double best_lo = support_lo;
  for (int k = -12; k <= 8; ++k) {
    const double lambda = std::ldexp(1.0, k);
    best_hi = std::min(best_hi, (log_mgf(lambda) - log_tail) / (lambda * delta_loss));
    best_lo = std::max(best_lo, (log_mgf(-lambda) - log_tail) / (-lambda * delta_loss));
  }
  // Grid indices stay far inside int64 (the composed window is at most 2^30 points wide anyway).
  constexpr double kIndexLimit = 0x1p60;
  best_hi = std::clamp(std::ceil(best_hi), -kIndexLimit, kIndexLimit);
  best_lo = std::clamp(std::floor(best_lo), -kIndexLimit, kIndexLimit);
  channel.window_hi = static_cast<int64_t>(best_hi);
  channel.window_lo = static_cast<int64_t>(best_lo);
  if (channel.window_hi < channel.window_lo) channel.window_hi = channel.window_lo;
  channel.outside_mass = (best_hi < support_hi ? 0.5 * tail_mass : 0.0) +
                         (best_lo > support_lo ? 0.5 * tail_mass : 0.0);
}

// (sum_g count_g * offset_g) mod n, without overflow however long the schedule.
int64_t BaseModulo(const Channel& channel, int64_t n) {
  int64_t base = 0;
  for (size_t g = 0; g < channel.pmfs.size(); ++g) {
    const int64_t count = channel.counts[g] % n;
    const int64_t offset = ((channel.pmfs[g].offset % n) + n) % n;
    base = (base + static_cast<int64_t>((static_cast<__int128>(count) * offset) % n)) % n;
  }
  return base;
}

// Adds a PMF into a circular buffer: grid index k lands at (k - base) mod n. One modulo per PMF, then
// a wrapping counter.
void Fold(const DiscretePld& d, int64_t base, std::vector<double>& out) {
  const auto n = static_cast<int64_t>(out.size());
  size_t position = static_cast<size_t>((((d.offset - base) % n) + n) % n);
  for (double mass : d.pmf) {
    out[position] += mass;
    if (++position == out.size()) position = 0;
  }
}

// z^count by squaring; exact zero when |z|^count is below the double range (|z|^2 < `negligible_norm`).
Complex Power(Complex z, int64_t count, double negligible_norm) {
  if (std::norm(z) < negligible_norm) return 0.0;
  Complex result = 1.0;
  while (count > 0) {
    if (count & 1) result *= z;
    count >>= 1;
    if (count > 0) z *= z;
  }
  return result;
}

// Composes two channels (a, b) in one complex FFT: z = a + i b, so A_k = (Z_k + conj Z_{n-k}) / 2 and
// B_k = (Z_k - conj Z_{n-k}) / (2i). b may be null.
void ComposePair(const FftPlan& plan, Channel& a, Channel* b, ComposedPld::Distribution& out_a,
                 ComposedPld::Distribution* out_b) {
  const size_t n = plan.size();
  std::vector<Complex> product_a(n, 1.0);
  std::vector<Complex> product_b(n, 1.0);
  std::vector<Complex> buffer(n);
  std::vector<double> real_a(n);
  std::vector<double> real_b(n);
  // log of the probability that no round hit +infinity, summed with log1p: 1 - m rounds a mass m below
  // 1e-16 away entirely, and then delta(eps) misses it (an under-report at small delta).
  double log_finite_a = 0.0;
  double log_finite_b = 0.0;
  for (size_t g = 0; g < a.pmfs.size(); ++g) {
    std::fill(real_a.begin(), real_a.end(), 0.0);
    std::fill(real_b.begin(), real_b.end(), 0.0);
    Fold(a.pmfs[g], a.pmfs[g].offset, real_a);
    log_finite_a += static_cast<double>(a.counts[g]) * std::log1p(-a.pmfs[g].infinity_mass);
    if (b != nullptr) {
      Fold(b->pmfs[g], b->pmfs[g].offset, real_b);
      log_finite_b += static_cast<double>(b->counts[g]) * std::log1p(-b->pmfs[g].infinity_mass);
    }
    for (size_t k = 0; k < n; ++k) buffer[k] = Complex(real_a[k], real_b[k]);
    plan.Forward(buffer);
    // |z|^count < e^-745 underflows: |z|^2 < exp(-1490 / count).
    const double negligible_a = std::exp(-1490.0 / static_cast<double>(a.counts[g]));
    const double negligible_b = b != nullptr ? std::exp(-1490.0 / static_cast<double>(b->counts[g])) : 0.0;
    for (size_t k = 0; k < n; ++k) {
      const Complex z = buffer[k];
      const Complex z_mirror = std::conj(buffer[k == 0 ? 0 : n - k]);
      product_a[k] *= Power(0.5 * (z + z_mirror), a.counts[g], negligible_a);
      if (b != nullptr)
        product_b[k] *= Power(Complex(0.0, -0.5) * (z - z_mirror), b->counts[g], negligible_b);
    }
  }
  for (size_t k = 0; k < n; ++k) buffer[k] = product_a[k] + Complex(0.0, 1.0) * product_b[k];
  plan.Inverse(buffer);
  auto unpack = [&](Channel& channel, bool imaginary, double log_finite, ComposedPld::Distribution& out) {
    // buffer[p] holds the mass of composed indices congruent to base + p (mod n), base = sum count*offset.
    const auto size = static_cast<int64_t>(n);
    const int64_t base = BaseModulo(channel, size);
    out.offset = channel.window_lo;
    out.pmf.resize(n);
    size_t p = static_cast<size_t>(((((channel.window_lo % size) - base) % size) + size) % size);
    double most_negative = 0.0;
    for (size_t k = 0; k < n; ++k) {
      double mass = imaginary ? buffer[p].imag() : buffer[p].real();
      most_negative = std::min(most_negative, mass);
      if (channel.upper) mass = std::max(mass, 0.0);  // FFT round-off below zero only lowers delta
      out.pmf[k] = mass;
      if (++p == n) p = 0;
    }
    out.infinity_mass = -std::expm1(log_finite);
    // The FFT's round-off moves every composed mass by about the same absolute amount, which the most
    // negative "mass" (a true mass is >= 0) measures. delta(eps) sums up to n masses, so it is off by up to
    // n times that; charged (x10) to the upper bound and taken off the lower one. Without it both were
    // wrong at small delta: the pooled lower bound exceeded the true epsilon of 10^5 Gaussian rounds at
    // delta = 1e-10, and the upper bound rested on masses at the round-off level below ~1e-13.
    const double round_off = 10.0 * static_cast<double>(n) * -most_negative;
    out.slack = channel.outside_mass + round_off;
  };
  unpack(a, false, log_finite_a, out_a);
  if (b != nullptr) unpack(*b, true, log_finite_b, *out_b);
}

// delta(eps) of one composed direction, without slack.
double DeltaOf(const ComposedPld::Distribution& d, double delta_loss, double epsilon) {
  double delta = d.infinity_mass;
  for (size_t i = 0; i < d.pmf.size(); ++i) {
    const double loss = static_cast<double>(d.offset + static_cast<int64_t>(i)) * delta_loss;
    if (loss > epsilon) delta += d.pmf[i] * -std::expm1(epsilon - loss);
  }
  return delta;
}

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
    const double lower_end = std::max(loss - delta_loss, 0.0);
    if (fixed + mass - std::exp(lower_end - loss) * scaled > target) {
      return std::clamp(loss + std::log((fixed + mass - target) / scaled), lower_end, loss);
    }
  }
  return 0.0;
}

// Width of one round's loss grid: the losses at the `tail` quantiles of P, clamped to +-700 nats.
double LossRange(const PrivacyLossPair& pair, double tail) {
  return std::min(pair.Loss(pair.PUpperQuantileBound(tail)), 700.0) -
         std::max(pair.Loss(pair.PLowerQuantileBound(tail)), -700.0);
}

// Automatic grid spacing: relative_discretization times a per-round spread of the loss, the rms over
// rounds of min(standard deviation, interquartile range / 1.349), and the smaller over directions. The
// standard deviation alone is dominated by the heavy tail of small-q, small-sigma rounds, while the bulk
// (width ~q) must also be resolved: the pooled lower bound has to round a bulk narrower than Delta down
// by up to Delta (a first-order error), and both bounds err to second order in Delta / spread otherwise.
double AutomaticDiscretization(const Schedule& groups, const std::vector<PairKind>& directions,
                               const PldOptions& options, double round_tail) {
  // One round's grid stays below 2^17 points: extremely heavy-tailed rounds (sigma < 0.5 with q ~ 1e-4)
  // would otherwise need millions of points per round; their bracket then widens instead.
  constexpr double kMaxRoundGridPoints = 131072.0;
  // Rounds whose loss is (numerically) zero, e.g. sigma = 1e300, still need a grid: 1e-10 nats is far
  // below any epsilon worth reporting.
  constexpr double kMinSpacing = 1e-10;
  double widest_range = 0.0;
  double spacing = kInf;
  for (PairKind kind : directions) {
    double squares = 0.0;
    double rounds = 0.0;
    for (const RoundGroup& g : groups) {
      const PrivacyLossPair pair(kind, g.q, g.sigma);
      double mean = 0.0;
      double variance = 0.0;
      pair.LossMoments(mean, variance);
      const double iqr = pair.LossQuantile(0.75) - pair.LossQuantile(0.25);
      // min(standard deviation, IQR / 1.349) (1.349 = IQR of N(0, 1)); an overflowing variance (sigma
      // -> 0: losses of 10^12 nats) leaves the IQR.
      double spread = iqr / 1.349;
      if (std::sqrt(variance) < spread) spread = std::sqrt(variance);
      widest_range = std::max(widest_range, LossRange(pair, round_tail));
      if (std::isfinite(spread)) squares += static_cast<double>(g.count) * spread * spread;
      rounds += static_cast<double>(g.count);
    }
    const double rms = std::sqrt(squares / rounds);
    if (rms > 0.0 && std::isfinite(rms)) spacing = std::min(spacing, options.relative_discretization * rms);
  }
  if (!std::isfinite(spacing)) spacing = kMinSpacing;
  return std::max({spacing, widest_range / kMaxRoundGridPoints, kMinSpacing});
}

}  // namespace

ComposedPld::ComposedPld(const Schedule& schedule, SamplingModel sampling, const PldOptions& options) {
  ValidateSchedule(schedule);
  if (!(options.tail_mass > 0.0 && options.tail_mass < 1e-6)) {
    throw ConfigError("pld.tail_mass", "must be in (0, 1e-6)");
  }
  tail_mass_ = options.tail_mass;
  if (options.value_discretization < 0.0 || !std::isfinite(options.value_discretization)) {
    throw ConfigError("pld.value_discretization", "must be >= 0 (0 = automatic)");
  }
  if (!(options.relative_discretization > 0.0 && options.relative_discretization <= 1.0)) {
    throw ConfigError("pld.relative_discretization", "must be in (0, 1]");
  }
  if (options.max_log2_fft_size < 6 || options.max_log2_fft_size > 30) {
    throw ConfigError("pld.max_log2_fft_size", "must be in [6, 30]");
  }
  if (options.max_grid_points < 64 || options.max_grid_points > (int64_t{1} << options.max_log2_fft_size)) {
    throw ConfigError("pld.max_grid_points", "must be in [64, 2^max_log2_fft_size]");
  }
  const std::vector<PairKind> directions = DirectionsFor(sampling);
  Schedule groups = CompactSchedule(schedule);
  for (RoundGroup& g : groups) g.sigma = PairSigma(g.sigma, sampling);
  if (groups.empty()) {
    // No rounds: the loss is 0 with certainty, delta(eps) = 0 for eps >= 0.
    discretization_ = options.value_discretization > 0.0 ? options.value_discretization : 1.0;
    Distribution nothing;
    nothing.pmf = {1.0};
    upper_.assign(directions.size(), nothing);
    if (options.compute_lower_bound) lower_.assign(directions.size(), nothing);
    fft_size_ = 1;
    return;
  }
  if (TotalRounds(groups) > kMaxPldRounds) {
    throw ConfigError("steps", "the PLD accountant composes at most 2^30 (1073741824) rounds, got " +
                                   std::to_string(TotalRounds(groups)) + "; use the rdp accountant");
  }
  const double rounds = static_cast<double>(TotalRounds(groups));
  // Per-round truncation so that all rounds together leave at most tail_mass outside their grids.
  const double round_tail = std::max(options.tail_mass / rounds, 1e-300);
  const bool automatic = options.value_discretization == 0.0;
  discretization_ = automatic ? AutomaticDiscretization(groups, directions, options, round_tail)
                              : options.value_discretization;

  auto build = [&](bool upper) {
    std::vector<Channel> built;
    for (PairKind kind : directions) {
      Channel channel;
      channel.upper = upper;
      for (const RoundGroup& g : groups) {
        const PrivacyLossPair pair(kind, g.q, g.sigma);
        const double range = LossRange(pair, round_tail);
        if (range / discretization_ > std::ldexp(1.0, options.max_log2_fft_size)) {
          throw ConfigError("pld.value_discretization",
                            "one round's loss range " + std::to_string(range) + " needs more than 2^" +
                                std::to_string(options.max_log2_fft_size) + " grid points at spacing " +
                                std::to_string(discretization_) + "; use a coarser discretisation");
        }
        channel.pmfs.push_back(upper ? DiscretizeConnectTheDots(pair, discretization_, round_tail)
                                     : DiscretizeByPooling(pair, discretization_, round_tail));
        channel.counts.push_back(g.count);
      }
      ChooseWindow(channel, discretization_, options.tail_mass);
      built.push_back(std::move(channel));
    }
    return built;
  };
  auto longest_window = [](const std::vector<Channel>& built) {
    int64_t longest = 1;
    for (const Channel& c : built) longest = std::max(longest, c.window_hi - c.window_lo + 1);
    return longest;
  };
  std::vector<Channel> channels = build(true);
  // Very long schedules: coarsen the automatic grid until the composed window fits max_grid_points.
  for (int attempt = 0; automatic && longest_window(channels) > options.max_grid_points; ++attempt) {
    if (attempt == 40) {
      throw ConfigError("pld.max_grid_points",
                        "the composed privacy-loss distribution of " + std::to_string(TotalRounds(groups)) +
                            " rounds does not fit " + std::to_string(options.max_grid_points) +
                            " grid points; use the rdp accountant");
    }
    discretization_ *=
        1.05 * static_cast<double>(longest_window(channels)) / static_cast<double>(options.max_grid_points);
    channels = build(true);
  }
  if (options.compute_lower_bound) {
    for (Channel& c : build(false)) channels.push_back(std::move(c));
  }
  int log2_size = 1;
  while ((int64_t{1} << log2_size) < longest_window(channels)) ++log2_size;
  if (log2_size > options.max_log2_fft_size) {
    throw ConfigError("pld.value_discretization",
                      "the composed PLD needs an FFT of 2^" + std::to_string(log2_size) +
                          " points, above pld.max_log2_fft_size = " +
                          std::to_string(options.max_log2_fft_size) + "; use a coarser discretisation");
  }
  fft_size_ = int64_t{1} << log2_size;
  const FftPlan plan(log2_size);
  std::vector<Distribution> composed(channels.size());
  for (size_t c = 0; c < channels.size(); c += 2) {
    const bool paired = c + 1 < channels.size();
    ComposePair(plan, channels[c], paired ? &channels[c + 1] : nullptr, composed[c],
                paired ? &composed[c + 1] : nullptr);
  }
  for (size_t c = 0; c < channels.size(); ++c) {
    (channels[c].upper ? upper_ : lower_).push_back(std::move(composed[c]));
  }
}

double ComposedPld::DeltaUpper(double epsilon) const {
  double worst = 0.0;
  for (const Distribution& d : upper_)
    worst = std::max(worst, DeltaOf(d, discretization_, epsilon) + d.slack);
  return std::min(worst, 1.0);
}

double ComposedPld::DeltaLower(double epsilon) const {
  ASYNCDP_CHECK_MSG(!lower_.empty(), "PldOptions::compute_lower_bound was false");
  double worst = 0.0;
  for (const Distribution& d : lower_)
    worst = std::max(worst, DeltaOf(d, discretization_, epsilon) - d.slack);
  return std::clamp(worst, 0.0, 1.0);
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
