#include "core/accounting/shuffle/clones.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/accounting/gaussian_mechanism.h"
#include "core/accounting/log_math.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {

double LogBinomialPmf(int64_t n, int64_t k, double log_p, double log_q) {
  const double dn = static_cast<double>(n);
  const double dk = static_cast<double>(k);
  return std::lgamma(dn + 1.0) - std::lgamma(dk + 1.0) - std::lgamma(dn - dk + 1.0) + dk * log_p +
         (dn - dk) * log_q;
}

// H_kappa(P_c || Q_c) for c clones: P_c(a) = w b(a-1) + (1-w) b(a), Q_c(a) = (1-w) b(a-1) + w b(a),
// b = Binomial(c, 1/2), w = e^eps0 / (e^eps0 + 1), a = 0..c+1. P/Q increases in a and exceeds kappa
// exactly for a > a_star = (c+1)(w(1+kappa) - 1) / ((1+kappa)(2w - 1)); every such term is positive.
// Terms further than 8 sqrt(c) + 1 from c/2 are not visited; their P-mass is at most the Hoeffding bound
// exp(-2 t^2 / c) per tail (t the distance beyond c/2 + 1), which is added.
double ConditionalHockeyStick(int64_t c, double w, double kappa) {
  const double dc = static_cast<double>(c);
  const double a_star = (dc + 1.0) * (w * (1.0 + kappa) - 1.0) / ((1.0 + kappa) * (2.0 * w - 1.0));
  if (a_star >= dc + 1.0) return 0.0;
  const double reach = 8.0 * std::sqrt(dc) + 1.0;
  const int64_t first = std::max<int64_t>(static_cast<int64_t>(std::floor(a_star)) + 1,
                                          static_cast<int64_t>(std::floor(0.5 * dc - reach)));
  const int64_t start = std::max<int64_t>(first, 0);
  const int64_t last = std::min<int64_t>(c + 1, static_cast<int64_t>(std::ceil(0.5 * dc + reach)) + 1);
  double omitted = 0.0;
  if (start > std::max<int64_t>(static_cast<int64_t>(std::floor(a_star)) + 1, 0) && c > 0) {
    const double t = 0.5 * dc - static_cast<double>(start);
    omitted += t > 0.0 ? std::exp(-2.0 * t * t / dc) : 1.0;
  }
  if (last < c + 1 && c > 0) {
    const double t = static_cast<double>(last) - 1.0 - 0.5 * dc;
    omitted += t > 0.0 ? std::exp(-2.0 * t * t / dc) : 1.0;
  }
  // b(a) for a = start - 1 .. last, built from one lgamma value by the ratio b(a+1)/b(a) = (c-a)/(a+1).
  const double log_half = -std::log(2.0);
  auto b_at = [&](int64_t a) {
    return a < 0 || a > c ? 0.0 : std::exp(LogBinomialPmf(c, a, log_half, log_half));
  };
  double b_prev = b_at(start - 1);
  double b_cur = b_at(start);
  double sum = 0.0;
  for (int64_t a = start; a <= last; ++a) {
    const double p = w * b_prev + (1.0 - w) * b_cur;
    const double q = (1.0 - w) * b_prev + w * b_cur;
    sum += std::max(0.0, p - kappa * q);
    b_prev = b_cur;
    b_cur = (a + 1 <= c && a >= 0) ? b_cur * static_cast<double>(c - a) / static_cast<double>(a + 1)
                                   : b_at(a + 1);
  }
  return std::min(1.0, sum + omitted);
}

}  // namespace

double ShuffleNumericalDelta(int64_t n, double local_epsilon, double epsilon) {
  ASYNCDP_CHECK(n >= 1 && local_epsilon > 0.0 && epsilon >= 0.0);
  if (epsilon >= local_epsilon) return 0.0;  // the shuffled output is at least as private as one report
  const double kappa = std::exp(epsilon);
  const double w = 1.0 / (1.0 + std::exp(-local_epsilon));
  const int64_t trials = n - 1;
  if (trials == 0) return ConditionalHockeyStick(0, w, kappa);
  // C ~ Binomial(n - 1, p), p = e^-eps0: visit c outward from the mode; the pmf is log-concave, so past the
  // point where we stop, the remaining tail is at most pmf(c) r / (1 - r) with r the current ratio.
  const double p = std::exp(-local_epsilon);
  const double log_p = -local_epsilon;
  const double log_q = std::log1p(-p);
  const int64_t mode = std::clamp<int64_t>(static_cast<int64_t>(std::floor((trials + 1) * p)), 0, trials);
  const double pmf_mode = std::exp(LogBinomialPmf(trials, mode, log_p, log_q));
  double delta = pmf_mode * ConditionalHockeyStick(mode, w, kappa);
  for (int direction : {+1, -1}) {
    double pmf = pmf_mode;
    for (int64_t c = mode;;) {
      const int64_t next = c + direction;
      if (next < 0 || next > trials) break;
      // pmf(next) / pmf(c)
      const double ratio = direction > 0
                               ? static_cast<double>(trials - c) / static_cast<double>(c + 1) * p / (1.0 - p)
                               : static_cast<double>(c) / static_cast<double>(trials - c + 1) * (1.0 - p) / p;
      if (pmf < 1e-30 && ratio < 1.0) {
        delta += pmf * ratio / (1.0 - ratio);  // the unvisited tail, charged in full
        break;
      }
      pmf *= ratio;
      c = next;
      delta += pmf * ConditionalHockeyStick(c, w, kappa);
    }
  }
  return std::min(1.0, delta);
}

double ShuffleNumericalEpsilon(int64_t n, double local_epsilon, double delta) {
  ASYNCDP_CHECK(delta > 0.0 && delta < 1.0);
  if (ShuffleNumericalDelta(n, local_epsilon, 0.0) <= delta) return 0.0;
  double lo = 0.0;
  double hi = local_epsilon;  // delta(eps0) = 0
  for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (ShuffleNumericalDelta(n, local_epsilon, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

double ShuffleClosedFormEpsilon(int64_t n, double local_epsilon, double delta) {
  ASYNCDP_CHECK(n >= 1 && local_epsilon > 0.0 && delta > 0.0 && delta < 1.0);
  const double dn = static_cast<double>(n);
  if (local_epsilon > std::log(dn / (16.0 * std::log(2.0 / delta)))) return kInf;
  const double a = 8.0 * std::sqrt(std::exp(local_epsilon) * std::log(4.0 / delta) / dn);
  const double c = 8.0 * std::exp(local_epsilon) / dn;
  const double e1 = std::log1p(a + c);
  return std::log1p(-std::expm1(-local_epsilon) / (1.0 + std::exp(-local_epsilon - e1)) * (a + c));
}

ShuffleGaussianEpsilon ShuffledGaussianEpsilon(int64_t n, double sigma, double local_sensitivity,
                                               double delta) {
  ASYNCDP_CHECK(n >= 1 && sigma > 0.0 && local_sensitivity > 0.0 && delta > 0.0 && delta < 1.0);
  const double s = sigma / local_sensitivity;
  ShuffleGaussianEpsilon out;
  out.no_amplification = GaussianEpsilon(delta, s);
  out.numerical = out.no_amplification;
  out.closed_form = kInf;
  const double dn = static_cast<double>(n);
  // Split delta = delta_shuffle + (e^eps + 1)(1 + e^eps0 / 2) n delta0: a share r goes to the local
  // randomizers; eps0 and eps depend on delta0, so iterate a few times and keep only verified splits.
  for (double share : {0.05, 0.25}) {
    const double delta_shuffle = (1.0 - share) * delta;
    double eps = out.no_amplification;
    double eps0 = out.no_amplification;
    for (int iteration = 0; iteration < 5; ++iteration) {
      const double delta0 = share * delta / ((std::exp(eps) + 1.0) * (1.0 + std::exp(eps0) / 2.0) * dn);
      // Tiny sigma: e^eps overflows and delta0 underflows to 0; no split of delta is left to try.
      if (!(delta0 > 0.0)) break;
      const double next_eps0 = GaussianEpsilon(delta0, s);
      if (!(next_eps0 > 0.0)) break;
      const double numerical = ShuffleNumericalEpsilon(n, next_eps0, delta_shuffle);
      const double closed = ShuffleClosedFormEpsilon(n, next_eps0, delta_shuffle);
      const double charged = (std::exp(numerical) + 1.0) * (1.0 + std::exp(next_eps0) / 2.0) * dn * delta0;
      if (delta_shuffle + charged <= delta && numerical < out.numerical) {
        out.numerical = numerical;
        out.local_epsilon = next_eps0;
        out.local_delta = delta0;
      }
      const double charged_closed = (std::exp(closed) + 1.0) * (1.0 + std::exp(next_eps0) / 2.0) * dn * delta0;
      if (std::isfinite(closed) && delta_shuffle + charged_closed <= delta) {
        out.closed_form = std::min(out.closed_form, closed);
      }
      const bool converged = std::abs(numerical - eps) < 1e-4 && std::abs(next_eps0 - eps0) < 1e-4;
      eps = numerical;
      eps0 = next_eps0;
      if (converged) break;
    }
  }
  return out;
}

}  // namespace asyncdp::accounting
