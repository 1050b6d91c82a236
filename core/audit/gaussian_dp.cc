#include "core/audit/gaussian_dp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/audit/normal.h"
#include "core/check.h"

namespace asyncdp::audit {

double GdpDelta(double mu, double epsilon) {
  ASYNCDP_CHECK(mu > 0.0 && epsilon >= 0.0);
  const double first = NormalCdf(-epsilon / mu + mu / 2);
  const double second = std::exp(epsilon + LogNormalCdf(-epsilon / mu - mu / 2));
  return std::max(0.0, first - second);
}

double GdpEpsilon(double mu, double delta) {
  ASYNCDP_CHECK(mu >= 0.0 && delta > 0.0 && delta < 1.0);
  if (mu == 0.0 || GdpDelta(mu, 0.0) <= delta) return 0.0;
  // GdpDelta is decreasing in eps: grow an upper end, then bisect keeping delta(lo) > delta.
  double lo = 0.0;
  double hi = 1.0;
  while (GdpDelta(mu, hi) > delta) {
    lo = hi;
    hi *= 2.0;
    ASYNCDP_CHECK(std::isfinite(hi));
  }
  while (hi - lo > 1e-12 * std::max(1.0, hi)) {
    const double mid = 0.5 * (lo + hi);
    if (GdpDelta(mu, mid) > delta) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

double GdpMuRefuted(double fpr, double fnr) {
  ASYNCDP_CHECK(fpr >= 0.0 && fpr <= 1.0 && fnr >= 0.0 && fnr <= 1.0);
  if (fpr == 0.0 || fnr == 0.0) return std::numeric_limits<double>::infinity();
  return std::max(0.0, -NormalQuantile(fpr) - NormalQuantile(fnr));
}

}  // namespace asyncdp::audit
