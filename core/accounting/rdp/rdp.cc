#include "core/accounting/rdp/rdp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "core/accounting/log_math.h"
#include "core/accounting/rdp/rdp_integral.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

bool IsInteger(double x) { return x == std::floor(x); }

// MTZ19 (3.3) for integer alpha: A_alpha = sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2 - k) / (2 sigma^2)),
// summed in log space. Returns ln A_alpha = (alpha - 1) * eps(alpha).
double LogAIntegerOrder(double q, double sigma, int64_t alpha) {
  // Terms in log space via the recurrence ln C(a,k) = ln C(a,k-1) + ln((a-k+1)/k), then one
  // log-sum-exp pass (one exp per term).
  const double log_ratio = std::log(q) - std::log1p(-q);  // ln(q / (1 - q))
  const double a = static_cast<double>(alpha);
  const double base = a * std::log1p(-q);  // ln (1-q)^alpha
  std::vector<double> terms(static_cast<size_t>(alpha) + 1);
  double log_binomial = 0.0;
  double peak = -kInf;
  for (int64_t k = 0; k <= alpha; ++k) {
    const double kd = static_cast<double>(k);
    if (k > 0) log_binomial += std::log((a - kd + 1.0) / kd);
    terms[k] = log_binomial + kd * log_ratio + base + (kd * kd - kd) / (2.0 * sigma * sigma);
    peak = std::max(peak, terms[k]);
  }
  double sum = 0.0;
  for (double t : terms) sum += std::exp(t - peak);
  return peak + std::log(sum);
}

// WBK19 Theorem 9 for integer alpha >= 2 with base RDP eps(j) = j * 2 / sigma^2 (Gaussian, sensitivity 2,
// replace-one) and eps(inf) = inf, so min{2, (e^eps(inf) - 1)^j} = 2:
//   ln(1 + q^2 C(a,2) min{4 (e^eps(2) - 1), 2 e^eps(2)} + sum_{j=3}^a 2 q^j C(a,j) e^{(j-1) eps(j)}).
double LogWbkIntegerOrder(double q, double sigma, int64_t alpha) {
  auto base_rdp = [&](double j) { return 2.0 * j / (sigma * sigma); };
  const double log_q = std::log(q);
  const double a = static_cast<double>(alpha);
  const double eps2 = base_rdp(2.0);
  const double log_second = std::min(std::log(4.0) + eps2 + std::log(-std::expm1(-eps2)),  // 4 (e^eps2 - 1)
                                     std::log(2.0) + eps2);
  double log_sum = 0.0;  // the leading 1
  log_sum = LogAddExp(log_sum, 2.0 * log_q + LogBinomial(a, 2.0) + log_second);
  for (int64_t j = 3; j <= alpha; ++j) {
    const double jd = static_cast<double>(j);
    log_sum = LogAddExp(log_sum, std::log(2.0) + jd * log_q + LogBinomial(a, jd) + (jd - 1.0) * base_rdp(jd));
  }
  return log_sum;
}

// Fractional orders of the Poisson-subsampled Gaussian use a quadrature whose cost grows like order /
// sigma (rdp_integral.h); beyond this ratio they are bounded by interpolating the cumulant between the
// neighbouring integer orders instead (an upper bound: ln A_alpha is convex in alpha), so tiny sigmas
// cost no more than the integer orders.
constexpr double kMaxQuadratureOrderOverSigma = 4096.0;

// (alpha - 1) eps(alpha) <= linear interpolation of an integer-order cumulant bound `cumulant(n)` (with
// cumulant(1) = 0) between floor(alpha) and ceil(alpha); exact at integers.
template <typename Cumulant>
double InterpolatedRdp(double order, const Cumulant& cumulant) {
  const double lo = std::floor(order);
  const double hi = std::ceil(order);
  auto at = [&](double a) { return a == 1.0 ? 0.0 : cumulant(static_cast<int64_t>(a)); };
  if (lo == hi) return at(lo) / (order - 1.0);
  const double t = order - lo;
  return ((1.0 - t) * at(lo) + t * at(hi)) / (order - 1.0);
}

// A second-order bound on the add direction of Poisson subsampling for ANY base mechanism pair (mu0, mu1)
// with chi^2(mu1 || mu0) <= e^{1/sigma^2} - 1 (true for the Gaussian and the discrete Gaussian with
// sensitivity / noise = 1 / sigma): with P = (1-q) mu0 + q mu1 and r = mu1/mu0,
//   e^{(alpha-1) D_alpha(mu0 || P)} = E_mu0[(1 - q + q r)^{1-alpha}]
//     <= 1 + (1-alpha) q E[r - 1] + alpha (alpha-1) q^2 / (2 (1-q)^{alpha+1}) E[(r-1)^2]   (Taylor, f'' max)
//      = 1 + alpha (alpha-1) q^2 (e^{1/sigma^2} - 1) / (2 (1-q)^{alpha+1}),
// and, since mu0 / P <= 1 / (1-q), also <= (1-q)^{1-alpha}. Returns the log of the smaller, integer alpha.
double LogAddDirectionBound(double q, double sigma, int64_t alpha) {
  const double a = static_cast<double>(alpha);
  const double log_chi2 = 1.0 / (sigma * sigma) + std::log(-std::expm1(-1.0 / (sigma * sigma)));
  const double second_order = std::log(0.5 * a * (a - 1.0)) + 2.0 * std::log(q) + log_chi2 -
                              (a + 1.0) * std::log1p(-q);
  const double taylor = LogAddExp(0.0, second_order);
  const double trivial = -(a - 1.0) * std::log1p(-q);
  return std::min(taylor, trivial);
}

void RequireOrder(double order) {
  if (!(order > 1.0) || !std::isfinite(order)) {
    throw ConfigError("rdp.orders", "every Renyi order must be finite and > 1, got " + std::to_string(order));
  }
}

void RequireQSigma(double q, double sigma) { ValidateSchedule({RoundGroup{q, sigma, 1}}, "round"); }

}  // namespace

std::vector<double> DefaultRdpOrders() {
  std::vector<double> orders = {1.01, 1.02, 1.05, 1.25, 1.75, 2.25, 2.75};
  for (int i = 11; i < 110; ++i) orders.push_back(i / 10.0);   // 1.1 .. 10.9
  for (int i = 21; i < 40; i += 2) orders.push_back(i / 2.0);  // 10.5 .. 19.5
  for (int i = 11; i <= 64; ++i) orders.push_back(i);
  for (double a : {72.0, 80.0, 96.0, 112.0, 128.0, 160.0, 192.0, 256.0, 320.0, 384.0, 512.0, 768.0, 1024.0}) {
    orders.push_back(a);
  }
  std::sort(orders.begin(), orders.end());
  return orders;
}

std::vector<double> OpacusRdpOrders() {
  std::vector<double> orders;
  for (int i = 1; i < 100; ++i) orders.push_back(1.0 + i / 10.0);
  for (int i = 12; i < 64; ++i) orders.push_back(i);
  return orders;
}

double PoissonSubsampledGaussianRdp(double q, double sigma, double order) {
  RequireOrder(order);
  RequireQSigma(q, sigma);
  if (q == 1.0) return order / (2.0 * sigma * sigma);  // no subsampling: the Gaussian mechanism
  if (IsInteger(order)) return LogAIntegerOrder(q, sigma, static_cast<int64_t>(order)) / (order - 1.0);
  if (order / sigma > kMaxQuadratureOrderOverSigma) {
    return InterpolatedRdp(order, [&](int64_t n) { return LogAIntegerOrder(q, sigma, n); });
  }
  return LogSubsampledGaussianMoment(q, sigma, order) / (order - 1.0);
}

double DiscreteGaussianPoissonRdp(double q, double sigma, double order) {
  RequireOrder(order);
  RequireQSigma(q, sigma);
  if (q == 1.0) return order / (2.0 * sigma * sigma);
  return InterpolatedRdp(order, [&](int64_t n) {
    return std::max(LogAIntegerOrder(q, sigma, n), LogAddDirectionBound(q, sigma, n));
  });
}

double FixedSizeSubsampledGaussianRdp(double q, double sigma, double order) {
  RequireOrder(order);
  RequireQSigma(q, sigma);
  if (q == 1.0) return 2.0 * order / (sigma * sigma);  // every record in the batch: sensitivity 2C
  // The cumulant c(a) = (a - 1) eps(a) is convex in a with c(1) = 0, so linear interpolation between
  // neighbouring integer orders is an upper bound (WBK19 Section 3.3).
  return InterpolatedRdp(order, [&](int64_t n) { return LogWbkIntegerOrder(q, sigma, n); });
}

double SubsampledGaussianRdp(double q, double sigma, double order, SamplingModel sampling) {
  switch (sampling) {
    case SamplingModel::kPoisson:
      return PoissonSubsampledGaussianRdp(q, sigma, order);
    case SamplingModel::kFixedSizeWithoutReplacement:
      return FixedSizeSubsampledGaussianRdp(q, sigma, order);
    case SamplingModel::kShuffle:
      break;
    case SamplingModel::kRandomAllocation:
      throw ConfigError("sampling", "random allocation has no per-round RDP bound; use the random_allocation "
                                    "accountant");
  }
  throw ConfigError("sampling", "shuffled batches have no per-round RDP bound; reduce the schedule first");
}

std::vector<double> SubsampledGaussianRdpCurve(double q, double sigma, std::span<const double> orders,
                                               SamplingModel sampling) {
  RequireQSigma(q, sigma);
  for (double a : orders) RequireOrder(a);
  std::vector<double> curve(orders.size());
  if (sampling != SamplingModel::kPoisson || q == 1.0) {
    for (size_t k = 0; k < orders.size(); ++k)
      curve[k] = SubsampledGaussianRdp(q, sigma, orders[k], sampling);
    return curve;
  }
  double max_fractional = 0.0;
  for (double a : orders) {
    if (!IsInteger(a)) max_fractional = std::max(max_fractional, a);
  }
  if (max_fractional / sigma > kMaxQuadratureOrderOverSigma) {
    for (size_t k = 0; k < orders.size(); ++k) curve[k] = PoissonSubsampledGaussianRdp(q, sigma, orders[k]);
    return curve;
  }
  std::optional<SubsampledGaussianMoments> moments;
  if (max_fractional > 1.0) moments.emplace(q, sigma, max_fractional);
  for (size_t k = 0; k < orders.size(); ++k) {
    const double a = orders[k];
    const double log_moment =
        IsInteger(a) ? LogAIntegerOrder(q, sigma, static_cast<int64_t>(a)) : moments->LogMoment(a);
    curve[k] = log_moment / (a - 1.0);
  }
  return curve;
}

std::vector<double> DiscreteGaussianRdpCurve(double q, double sigma, std::span<const double> orders,
                                             SamplingModel sampling) {
  RequireQSigma(q, sigma);
  for (double a : orders) RequireOrder(a);
  // Fixed-size: WBK19 Theorem 9 holds for any base mechanism, and the discrete Gaussian's RDP is at most
  // the Gaussian's, so the Gaussian curve is an upper bound.
  if (sampling != SamplingModel::kPoisson) return SubsampledGaussianRdpCurve(q, sigma, orders, sampling);
  std::vector<double> curve(orders.size());
  for (size_t k = 0; k < orders.size(); ++k) curve[k] = DiscreteGaussianPoissonRdp(q, sigma, orders[k]);
  return curve;
}

std::vector<double> ScheduleRdp(const Schedule& schedule, SamplingModel sampling,
                                std::span<const double> orders) {
  ValidateSchedule(schedule);
  std::vector<double> total(orders.size(), 0.0);
  for (const RoundGroup& g : CompactSchedule(schedule)) {
    const std::vector<double> curve = SubsampledGaussianRdpCurve(g.q, g.sigma, orders, sampling);
    for (size_t k = 0; k < orders.size(); ++k) total[k] += static_cast<double>(g.count) * curve[k];
  }
  return total;
}

std::vector<double> RdpConversionOffsets(std::span<const double> orders, double delta) {
  if (!(delta > 0.0 && delta < 1.0))
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(delta));
  std::vector<double> offsets(orders.size());
  for (size_t k = 0; k < orders.size(); ++k) {
    const double a = orders[k];
    offsets[k] = std::log1p(-1.0 / a) - (std::log(delta) + std::log(a)) / (a - 1.0);
  }
  return offsets;
}

RdpConversion RdpToEpsilon(std::span<const double> orders, std::span<const double> rdp, double delta) {
  ASYNCDP_CHECK(orders.size() == rdp.size() && !orders.empty());
  const std::vector<double> offsets = RdpConversionOffsets(orders, delta);
  RdpConversion best{kInf, orders[0]};
  bool released_nothing = true;
  for (size_t k = 0; k < orders.size(); ++k) {
    released_nothing = released_nothing && rdp[k] == 0.0;
    if (rdp[k] + offsets[k] < best.epsilon) best = {rdp[k] + offsets[k], orders[k]};
  }
  best.epsilon = released_nothing ? 0.0 : std::max(best.epsilon, 0.0);
  return best;
}

RdpConversion RdpToEpsilonClassic(std::span<const double> orders, std::span<const double> rdp, double delta) {
  ASYNCDP_CHECK(orders.size() == rdp.size() && !orders.empty());
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "must be in (0, 1)");
  RdpConversion best{kInf, orders[0]};
  for (size_t k = 0; k < orders.size(); ++k) {
    const double eps = rdp[k] + std::log(1.0 / delta) / (orders[k] - 1.0);
    if (eps < best.epsilon) best = {eps, orders[k]};
  }
  return best;
}

double RdpToDelta(std::span<const double> orders, std::span<const double> rdp, double epsilon) {
  ASYNCDP_CHECK(orders.size() == rdp.size() && !orders.empty());
  double log_delta = 0.0;  // delta <= 1 always
  for (size_t k = 0; k < orders.size(); ++k) {
    const double a = orders[k];
    const double value = (a - 1.0) * (rdp[k] - epsilon) + (a - 1.0) * std::log1p(-1.0 / a) - std::log(a);
    log_delta = std::min(log_delta, value);
  }
  return std::exp(log_delta);
}

RdpConversion RdpEpsilon(const Schedule& schedule, SamplingModel sampling, double delta,
                         const RdpOptions& options) {
  if (options.orders.empty()) throw ConfigError("rdp.orders", "must not be empty");
  for (double a : options.orders) RequireOrder(a);
  const std::vector<double> rdp = ScheduleRdp(schedule, sampling, options.orders);
  return RdpToEpsilon(options.orders, rdp, delta);
}

}  // namespace asyncdp::accounting
