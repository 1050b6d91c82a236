#include "core/accounting/pld/pld_compose.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/log_math.h"
#include "core/error.h"

namespace asyncdp::accounting::pld_detail {
namespace {

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

// Adds a PMF into every other double of a circular buffer (the real or the imaginary parts of complex
// values): grid index k lands at (k - base) mod n. One modulo per PMF, then a wrapping counter.
void Fold(const DiscretePld& d, int64_t base, double* out, size_t n) {
  size_t position = static_cast<size_t>((((d.offset - base) % static_cast<int64_t>(n)) + static_cast<int64_t>(n)) %
                                        static_cast<int64_t>(n));
  for (double mass : d.pmf) {
    out[2 * position] += mass;
    if (++position == n) position = 0;
  }
}

// Powers z^count of a block of Fourier coefficients, by squaring: the bits of `count` outside, the
// coefficients inside, so that the loops vectorise (one coefficient at a time, std::complex's
// multiplication carries a NaN/inf check that keeps it scalar, and that loop was a tenth of a Table 3 run's
// accounting). The coefficients are characteristic-function values, |z| <= 1 and finite, so the check
// never applies. The products of the powers are written out with their fused multiply-adds where the CPU
// has them, so their bits do not depend on how a compiler chooses to contract a complex product (they
// differ from the previous coefficient-at-a-time loop's in the last place: 4e-15 relative in a composed
// epsilon).
// (re, im) hold z on entry; (pr, pi) get z^count.
constexpr size_t kPowerBlock = 256;

// (a + ib) *= (c + id)
inline void MultiplyInPlace(double& a, double& b, double c, double d) {
#if defined(__FMA__)
  const double bd = b * d;
  const double ad = a * d;
  const double re = std::fma(a, c, -bd);
  b = std::fma(b, c, ad);
  a = re;
#else
  const double re = a * c - b * d;
  b = a * d + b * c;
  a = re;
#endif
}

// (a + ib)^2
inline void SquareInPlace(double& a, double& b) {
  const double bb = b * b;
  const double ab = a * b;
#if defined(__FMA__)
  a = std::fma(a, a, -bb);
#else
  a = a * a - bb;
#endif
  b = ab + ab;
}

void PowerBlock(double* re, double* im, double* pr, double* pi, size_t m, int64_t count) {
  for (size_t j = 0; j < m; ++j) {
    pr[j] = 1.0;
    pi[j] = 0.0;
  }
  while (count > 0) {
    if (count & 1) {
      for (size_t j = 0; j < m; ++j) MultiplyInPlace(pr[j], pi[j], re[j], im[j]);
    }
    count >>= 1;
    if (count > 0) {
      for (size_t j = 0; j < m; ++j) SquareInPlace(re[j], im[j]);
    }
  }
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

GroupMgf MgfOf(const DiscretePld& d, double delta_loss) {
  GroupMgf out;
  const auto n = static_cast<int64_t>(d.pmf.size());
  out.top = d.offset + n - 1;
  out.bottom = d.offset;
  for (int k = kLambdaLog2Min; k <= kLambdaLog2Max; ++k) {
    const double lambda = std::ldexp(1.0, k);
    const double step = std::exp(-lambda * delta_loss);
    double weight = 1.0;
    double sum = 0.0;
    for (int64_t i = n - 1; i >= 0 && weight > 0.0; --i, weight *= step) sum += d.pmf[static_cast<size_t>(i)] * weight;
    out.up[static_cast<size_t>(k - kLambdaLog2Min)] = std::log(sum);
    weight = 1.0;
    sum = 0.0;
    for (int64_t i = 0; i < n && weight > 0.0; ++i, weight *= step) sum += d.pmf[static_cast<size_t>(i)] * weight;
    out.down[static_cast<size_t>(k - kLambdaLog2Min)] = std::log(sum);
  }
  return out;
}

void ChooseWindow(Channel& channel, double delta_loss, double tail_mass) {
  // Support bounds in double: count * offset can exceed the int64 range for long schedules.
  double support_lo = 0.0;
  double support_hi = 0.0;
  for (size_t g = 0; g < channel.pmfs.size(); ++g) {
    const auto count = static_cast<double>(channel.counts[g]);
    support_lo += count * static_cast<double>(channel.mgfs[g].bottom);
    support_hi += count * static_cast<double>(channel.mgfs[g].top);
  }
  // sum_g count_g ln M_g(lambda), each M_g summed from its far end (MgfOf).
  auto log_mgf = [&](int k, bool up) {
    const double lambda = std::ldexp(1.0, k);
    double total = 0.0;
    for (size_t g = 0; g < channel.pmfs.size(); ++g) {
      if (channel.counts[g] == 0) continue;
      const GroupMgf& m = channel.mgfs[g];
      const auto i = static_cast<size_t>(k - kLambdaLog2Min);
      total += up ? static_cast<double>(channel.counts[g]) *
                        (m.up[i] + lambda * delta_loss * static_cast<double>(m.top))
                  : static_cast<double>(channel.counts[g]) *
                        (m.down[i] + -lambda * delta_loss * static_cast<double>(m.bottom));
    }
    return total;
  };
  const double log_tail = std::log(0.5 * tail_mass);
  double best_hi = support_hi;
  double best_lo = support_lo;
  for (int k = kLambdaLog2Min; k <= kLambdaLog2Max; ++k) {
    const double lambda = std::ldexp(1.0, k);
    best_hi = std::min(best_hi, (log_mgf(k, true) - log_tail) / (lambda * delta_loss));
    best_lo = std::max(best_lo, (log_mgf(k, false) - log_tail) / (-lambda * delta_loss));
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

Prepared Prepare(const Schedule& schedule, SamplingModel sampling, const PldOptions& options, bool lower_too) {
  ValidateSchedule(schedule);
  if (!(options.tail_mass > 0.0 && options.tail_mass < 1e-6)) {
    throw ConfigError("pld.tail_mass", "must be in (0, 1e-6)");
  }
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
  Prepared out;
  out.tail_mass = options.tail_mass;
  out.directions = DirectionsFor(sampling);
  Schedule groups = CompactSchedule(schedule);
  for (RoundGroup& g : groups) g.sigma = PairSigma(g.sigma, sampling);
  if (groups.empty()) {
    out.empty = true;
    out.discretization = options.value_discretization > 0.0 ? options.value_discretization : 1.0;
    return out;
  }
  if (TotalRounds(groups) > kMaxPldRounds) {
    throw ConfigError("steps", "the PLD accountant composes at most 2^30 (1073741824) rounds, got " +
                                   std::to_string(TotalRounds(groups)) + "; use the rdp accountant");
  }
  const double rounds = static_cast<double>(TotalRounds(groups));
  // Per-round truncation so that all rounds together leave at most tail_mass outside their grids.
  const double round_tail = std::max(options.tail_mass / rounds, 1e-300);
  const bool automatic = options.value_discretization == 0.0;
  out.discretization = automatic ? AutomaticDiscretization(groups, out.directions, options, round_tail)
                                 : options.value_discretization;

  auto build = [&](bool upper) {
    std::vector<Channel> built;
    for (PairKind kind : out.directions) {
      Channel channel;
      channel.upper = upper;
      for (const RoundGroup& g : groups) {
        const PrivacyLossPair pair(kind, g.q, g.sigma);
        const double range = LossRange(pair, round_tail);
        if (range / out.discretization > std::ldexp(1.0, options.max_log2_fft_size)) {
          throw ConfigError("pld.value_discretization",
                            "one round's loss range " + std::to_string(range) + " needs more than 2^" +
                                std::to_string(options.max_log2_fft_size) + " grid points at spacing " +
                                std::to_string(out.discretization) + "; use a coarser discretisation");
        }
        channel.pmfs.push_back(upper ? DiscretizeConnectTheDots(pair, out.discretization, round_tail)
                                     : DiscretizeByPooling(pair, out.discretization, round_tail));
        channel.mgfs.push_back(MgfOf(channel.pmfs.back(), out.discretization));
        channel.counts.push_back(g.count);
      }
      ChooseWindow(channel, out.discretization, options.tail_mass);
      built.push_back(std::move(channel));
    }
    return built;
  };
  auto longest_window = [](const std::vector<Channel>& built) {
    int64_t longest = 1;
    for (const Channel& c : built) longest = std::max(longest, c.window_hi - c.window_lo + 1);
    return longest;
  };
  out.channels = build(true);
  // Very long schedules: coarsen the automatic grid until the composed window fits max_grid_points.
  for (int attempt = 0; automatic && longest_window(out.channels) > options.max_grid_points; ++attempt) {
    if (attempt == 40) {
      throw ConfigError("pld.max_grid_points",
                        "the composed privacy-loss distribution of " + std::to_string(TotalRounds(groups)) +
                            " rounds does not fit " + std::to_string(options.max_grid_points) +
                            " grid points; use the rdp accountant");
    }
    out.discretization *= 1.05 * static_cast<double>(longest_window(out.channels)) /
                          static_cast<double>(options.max_grid_points);
    out.channels = build(true);
  }
  if (lower_too) {
    for (Channel& c : build(false)) out.channels.push_back(std::move(c));
  }
  int log2_size = 1;
  while ((int64_t{1} << log2_size) < longest_window(out.channels)) ++log2_size;
  if (log2_size > options.max_log2_fft_size) {
    throw ConfigError("pld.value_discretization",
                      "the composed PLD needs an FFT of 2^" + std::to_string(log2_size) +
                          " points, above pld.max_log2_fft_size = " + std::to_string(options.max_log2_fft_size) +
                          "; use a coarser discretisation");
  }
  out.log2_size = log2_size;
  return out;
}

std::vector<Complex> Spectrum(const FftPlan& plan, const DiscretePld& a, const DiscretePld* b) {
  const size_t n = plan.size();
  std::vector<Complex> buffer(n);
  double* data = reinterpret_cast<double*>(buffer.data());
  Fold(a, a.offset, data, n);
  if (b != nullptr) Fold(*b, b->offset, data + 1, n);
  plan.Forward(buffer);
  return buffer;
}

// Composes two channels (a, b) in one complex FFT: z = a + i b, so A_k = (Z_k + conj Z_{n-k}) / 2 and
// B_k = (Z_k - conj Z_{n-k}) / (2i).
void Accumulate(const std::vector<Complex>& spectrum, int64_t count_a, int64_t count_b,
                std::vector<Complex>& product_a, std::vector<Complex>& product_b) {
  const size_t n = product_a.size();
  // |z|^count < e^-745 underflows: |z|^2 < exp(-1490 / count).
  const double negligible_a = std::exp(-1490.0 / static_cast<double>(count_a));
  const double negligible_b = count_b >= 0 ? std::exp(-1490.0 / static_cast<double>(count_b)) : 0.0;
  // Per block: each channel's coefficients, their powers (a negligible one, whose power is exactly zero,
  // enters as 0 so that its squares stay out of the subnormals), then the products.
  alignas(64) double a_re[kPowerBlock], a_im[kPowerBlock], a_pr[kPowerBlock], a_pi[kPowerBlock];
  alignas(64) double b_re[kPowerBlock], b_im[kPowerBlock], b_pr[kPowerBlock], b_pi[kPowerBlock];
  for (size_t k0 = 0; k0 < n; k0 += kPowerBlock) {
    const size_t m = std::min(kPowerBlock, n - k0);
    for (size_t j = 0; j < m; ++j) {
      const size_t k = k0 + j;
      const Complex z = spectrum[k];
      const Complex z_mirror = std::conj(spectrum[k == 0 ? 0 : n - k]);
      const Complex a = 0.5 * (z + z_mirror);
      const bool a_zero = std::norm(a) < negligible_a;
      a_re[j] = a_zero ? 0.0 : a.real();
      a_im[j] = a_zero ? 0.0 : a.imag();
      if (count_b >= 0) {
        const Complex b = Complex(0.0, -0.5) * (z - z_mirror);
        const bool b_zero = std::norm(b) < negligible_b;
        b_re[j] = b_zero ? 0.0 : b.real();
        b_im[j] = b_zero ? 0.0 : b.imag();
      }
    }
    // product *= power, on the interleaved doubles (MultiplyInPlace).
    PowerBlock(a_re, a_im, a_pr, a_pi, m, count_a);
    double* pa = reinterpret_cast<double*>(product_a.data() + k0);
    for (size_t j = 0; j < m; ++j) MultiplyInPlace(pa[2 * j], pa[2 * j + 1], a_pr[j], a_pi[j]);
    if (count_b >= 0) {
      PowerBlock(b_re, b_im, b_pr, b_pi, m, count_b);
      double* pb = reinterpret_cast<double*>(product_b.data() + k0);
      for (size_t j = 0; j < m; ++j) MultiplyInPlace(pb[2 * j], pb[2 * j + 1], b_pr[j], b_pi[j]);
    }
  }
}

void Finish(const FftPlan& plan, std::vector<Complex>& product_a, const std::vector<Complex>& product_b,
            const Channel& a, const Channel* b, PldDistribution& out_a, PldDistribution* out_b) {
  const size_t n = plan.size();
  for (size_t k = 0; k < n; ++k) product_a[k] += Complex(0.0, 1.0) * product_b[k];
  std::vector<Complex>& buffer = product_a;
  plan.Inverse(buffer);
  auto unpack = [&](const Channel& channel, bool imaginary, PldDistribution& out) {
    // log of the probability that no round hit +infinity, summed with log1p: 1 - m rounds a mass m below
    // 1e-16 away entirely, and then delta(eps) misses it (an under-report at small delta).
    double log_finite = 0.0;
    for (size_t g = 0; g < channel.pmfs.size(); ++g)
      log_finite += static_cast<double>(channel.counts[g]) * std::log1p(-channel.pmfs[g].infinity_mass);
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
  unpack(a, false, out_a);
  if (b != nullptr) unpack(*b, true, *out_b);
}

}  // namespace asyncdp::accounting::pld_detail
