#include "core/audit/clopper_pearson.h"

#include "core/audit/binomial.h"
#include "core/check.h"

namespace asyncdp::audit {
namespace {

void CheckArguments(int64_t successes, int64_t trials, double alpha) {
  ASYNCDP_CHECK(trials >= 1 && successes >= 0 && successes <= trials);
  ASYNCDP_CHECK(alpha > 0.0 && alpha < 1.0);
}

}  // namespace

double ClopperPearsonUpper(int64_t successes, int64_t trials, double alpha) {
  CheckArguments(successes, trials, alpha);
  if (successes == trials) return 1.0;
  // P[Bin(n, p) <= k] = I_{1-p}(n - k, k + 1) = alpha: solved for 1 - p, so that alpha itself (not
  // 1 - alpha, which rounds away a small alpha) is the target.
  return 1.0 - InverseRegularizedIncompleteBeta(static_cast<double>(trials - successes),
                                                static_cast<double>(successes + 1), alpha);
}

double ClopperPearsonLower(int64_t successes, int64_t trials, double alpha) {
  CheckArguments(successes, trials, alpha);
  if (successes == 0) return 0.0;
  // P[Bin(n, p) >= k] = I_p(k, n - k + 1) = alpha.
  return InverseRegularizedIncompleteBeta(static_cast<double>(successes),
                                          static_cast<double>(trials - successes + 1), alpha);
}

ProportionInterval ClopperPearsonInterval(int64_t successes, int64_t trials, double alpha) {
  return {ClopperPearsonLower(successes, trials, alpha / 2),
          ClopperPearsonUpper(successes, trials, alpha / 2)};
}

}  // namespace asyncdp::audit
