#include "core/audit/gaussian_fit.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/audit/normal.h"
#include "core/check.h"

namespace asyncdp::audit {

double NoncentralTUpperTail(double t, double df, double ncp) {
  ASYNCDP_CHECK(df >= 1.0 && std::isfinite(t) && std::isfinite(ncp));
  // W ~ chi^2_df = Gamma(df / 2, scale 2): density exp((k - 1) ln w - w / 2 - k ln 2 - lgamma(k)).
  const double k = 0.5 * df;
  const double log_norm = -k * std::log(2.0) - std::lgamma(k);
  const double spread = 12.0 * std::sqrt(2.0 * df);
  const double lo = std::max(0.0, df - spread);
  const double hi = df + spread;
  constexpr int kIntervals = 2000;  // even
  const double h = (hi - lo) / kIntervals;
  double sum = 0.0;
  for (int j = 0; j <= kIntervals; ++j) {
    const double w = lo + j * h;
    if (w <= 0.0) continue;  // the density vanishes at 0 for df > 2 and is integrable for df <= 2
    const double density = std::exp((k - 1.0) * std::log(w) - 0.5 * w + log_norm);
    const double weight = (j == 0 || j == kIntervals) ? 1.0 : (j % 2 == 1 ? 4.0 : 2.0);
    sum += weight * density * NormalCdf(ncp - t * std::sqrt(w / df));
  }
  return std::clamp(sum * h / 3.0, 0.0, 1.0);
}

GaussianFitBound FitGaussianScores(std::span<const double> in, std::span<const double> out, double alpha) {
  ASYNCDP_CHECK(in.size() >= 2 && out.size() >= 2 && alpha > 0.0 && alpha < 1.0);
  auto mean_and_ss = [](std::span<const double> x) {
    double mean = 0.0;
    for (const double v : x) mean += v;
    mean /= static_cast<double>(x.size());
    double ss = 0.0;
    for (const double v : x) ss += (v - mean) * (v - mean);
    return std::pair<double, double>(mean, ss);
  };
  const auto [mean_in, ss_in] = mean_and_ss(in);
  const auto [mean_out, ss_out] = mean_and_ss(out);
  const double n_in = static_cast<double>(in.size());
  const double n_out = static_cast<double>(out.size());
  GaussianFitBound fit;
  const double df = n_in + n_out - 2.0;
  const double pooled_var = (ss_in + ss_out) / df;
  if (!(pooled_var > 0.0)) return fit;  // constant scores: nothing to standardise by
  fit.variance_ratio = ss_out > 0.0 ? (ss_in / (n_in - 1.0)) / (ss_out / (n_out - 1.0)) : INFINITY;
  fit.mu_hat = (mean_in - mean_out) / std::sqrt(pooled_var);
  const double scale = std::sqrt(n_in * n_out / (n_in + n_out));  // sqrt(n~)
  const double t = fit.mu_hat * scale;
  // P[T >= t | ncp] increases with ncp. mu_lower = ncp / scale with P[T >= t | ncp] = alpha, or 0 when
  // even ncp = 0 gives a tail above alpha (no evidence of a positive mu).
  auto tail = [&](double ncp) { return NoncentralTUpperTail(t, df, ncp); };
  if (tail(0.0) >= alpha) return fit;
  double lo = 0.0;
  double hi = std::max(1.0, t);
  while (tail(hi) < alpha) {
    lo = hi;
    hi *= 2.0;
  }
  while (hi - lo > 1e-9 * std::max(1.0, hi)) {
    const double mid = 0.5 * (lo + hi);
    (tail(mid) < alpha ? lo : hi) = mid;
  }
  fit.mu_lower = lo / scale;  // the lower end: P[T >= t | lo] < alpha still holds
  return fit;
}

}  // namespace asyncdp::audit
