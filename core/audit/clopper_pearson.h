// Clopper–Pearson ("exact") confidence bounds for a binomial proportion (Clopper & Pearson 1934): for k
// successes in n trials the one-sided bounds at level alpha are the p where the observed count becomes
// an alpha-tail event,
//
//   upper(k, n, alpha):  P[Bin(n, upper) <= k] = alpha   (1 if k = n)  = Beta^{-1}(1 - alpha; k + 1, n - k)
//   lower(k, n, alpha):  P[Bin(n, lower) >= k] = alpha   (0 if k = 0)  = Beta^{-1}(alpha; k, n - k + 1)
//
// so P[p <= upper] >= 1 - alpha and P[p >= lower] >= 1 - alpha for every true p (conservative: the
// coverage is at least the nominal level, never an approximation). The two-sided interval at confidence
// 1 - alpha uses alpha/2 on each side.
#pragma once

#include <cstdint>

namespace asyncdp::audit {

struct ProportionInterval {
  double lower = 0.0;
  double upper = 1.0;
};

// 0 <= successes <= trials, trials >= 1, alpha in (0, 1).
double ClopperPearsonUpper(int64_t successes, int64_t trials, double alpha);
double ClopperPearsonLower(int64_t successes, int64_t trials, double alpha);

// [lower(alpha/2), upper(alpha/2)]: covers p with probability >= 1 - alpha.
ProportionInterval ClopperPearsonInterval(int64_t successes, int64_t trials, double alpha);

}  // namespace asyncdp::audit
