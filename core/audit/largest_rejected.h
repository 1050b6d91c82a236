// The audits' search for the strongest claim an observation refutes: the largest parameter x (eps or mu)
// whose null hypothesis "the mechanism satisfies x" is rejected, for a rejection that is monotone (rejected
// at x implies rejected at every smaller x, DP being monotone in its parameter). Shared by the one-run
// estimators (core/audit/one_run.h, core/audit/fdp_one_run.h).
#pragma once

namespace asyncdp::audit {

// The largest x in [0, 64] (to 1e-9) with rejected(x), for rejected monotone decreasing in x; 0 when
// rejected(0) fails. The returned x itself is rejected. 64 caps the search: no count of guesses rejects
// eps beyond ln(guesses) + a few, and q = e^eps / (1 + e^eps) is 1 in double precision from eps ~ 37.
template <typename Rejected>
double LargestRejected(const Rejected& rejected) {
  if (!rejected(0.0)) return 0.0;
  double lo = 0.0;
  double hi = 1.0;
  while (rejected(hi)) {
    lo = hi;
    hi *= 2.0;
    if (hi > 64.0) return lo;
  }
  while (hi - lo > 1e-9) {
    const double mid = 0.5 * (lo + hi);
    if (rejected(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace asyncdp::audit
