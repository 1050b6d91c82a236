// Testing a reported privacy PROFILE, not one (eps, delta) point: the accountants report delta(eps) for
// every eps (a PLD or RDP curve), and a training run is (eps, delta(eps))-DP for all eps at once. A test
// with error rates (FPR, FNR) on neighbouring inputs is compatible with (eps, delta)-DP only if
// (Kairouz, Oh & Viswanath 2015, Theorem 2.1)
//
//   FPR + e^eps FNR >= 1 - delta   and   e^eps FPR + FNR >= 1 - delta,
//
// so upper confidence bounds FPR_hi, FNR_hi (jointly at 1 - alpha) give a lower confidence bound on the
// true delta at every eps,
//
//   delta_lower(eps) = max(0, 1 - FPR_hi - e^eps FNR_hi, 1 - FNR_hi - e^eps FPR_hi),
//
// and the report is refuted when delta_lower(eps) > delta_reported(eps) at any eps of the profile. This
// is the audit's VIOLATION test: it assumes nothing about the mechanism (unlike the GDP conversion) and
// uses the whole curve (unlike the bound at the one reported delta), so an accountant that is wrong
// anywhere the runs can see — e.g. one that accounts sigma while the noise is 0.7 sigma — is caught with
// far fewer runs than a lower bound on eps at delta = 1e-5 would need.
#pragma once

#include <span>

namespace asyncdp::audit {

struct ProfilePoint {
  double epsilon = 0.0;  // >= 0
  double delta = 0.0;    // the reported delta(epsilon), in [0, 1]
};

// delta_lower(eps) above; fpr_upper, fnr_upper in [0, 1], eps >= 0.
double DeltaLowerBound(double epsilon, double fpr_upper, double fnr_upper);

struct ProfileRefutation {
  bool refuted = false;
  // The profile point with the largest delta_lower / delta_reported (the most contradicted one).
  double epsilon = 0.0;
  double delta_reported = 0.0;
  double delta_lower = 0.0;
  // ln(delta_lower / delta_reported) at that point: > 0 iff refuted (-inf when delta_lower = 0).
  double log_margin = 0.0;
};

// Checks every point of `profile` (non-empty) against the rates.
ProfileRefutation RefuteProfile(std::span<const ProfilePoint> profile, double fpr_upper, double fnr_upper);

}  // namespace asyncdp::audit
