#include "core/audit/profile_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace asyncdp::audit {

double DeltaLowerBound(double epsilon, double fpr_upper, double fnr_upper) {
  ASYNCDP_CHECK(epsilon >= 0.0 && fpr_upper >= 0.0 && fpr_upper <= 1.0 && fnr_upper >= 0.0 &&
                fnr_upper <= 1.0);
  const double scale = std::exp(epsilon);
  return std::max({0.0, 1.0 - fpr_upper - scale * fnr_upper, 1.0 - fnr_upper - scale * fpr_upper});
}

ProfileRefutation RefuteProfile(std::span<const ProfilePoint> profile, double fpr_upper, double fnr_upper) {
  ASYNCDP_CHECK(!profile.empty());
  ProfileRefutation worst;
  worst.log_margin = -std::numeric_limits<double>::infinity();
  bool first = true;
  for (const ProfilePoint& p : profile) {
    ASYNCDP_CHECK(p.epsilon >= 0.0 && std::isfinite(p.epsilon) && p.delta >= 0.0 && p.delta <= 1.0);
    const double lower = DeltaLowerBound(p.epsilon, fpr_upper, fnr_upper);
    double margin;
    if (lower == 0.0) {
      margin = -std::numeric_limits<double>::infinity();
    } else if (p.delta == 0.0) {
      margin = std::numeric_limits<double>::infinity();
    } else {
      margin = std::log(lower / p.delta);
    }
    if (first || margin > worst.log_margin) {
      worst = {margin > 0.0, p.epsilon, p.delta, lower, margin};
      first = false;
    }
  }
  return worst;
}

}  // namespace asyncdp::audit
