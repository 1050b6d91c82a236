// An oracle for the binomial tail, by direct summation, that shares no code with core/audit: the binomial and
// Clopper–Pearson tests check the library's incomplete-beta route against it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace asyncdp::audit::binomial_oracle {

// P[Bin(n, p) >= k] by summing C(n, j) p^j (1-p)^(n-j), each term from lgammal.
inline long double DirectTail(int64_t n, long double p, int64_t k) {
  long double sum = 0.0L;
  for (int64_t j = std::max<int64_t>(k, 0); j <= n; ++j) {
    const long double log_term =
        std::lgamma(static_cast<long double>(n) + 1) - std::lgamma(static_cast<long double>(j) + 1) -
        std::lgamma(static_cast<long double>(n - j) + 1) + j * std::log(p) + (n - j) * std::log1p(-p);
    sum += std::exp(log_term);
  }
  return sum;
}

}  // namespace asyncdp::audit::binomial_oracle
