// Test oracle: delta(eps) of E composed random-allocation windows by Monte Carlo, written from the
// mechanism's definition (std::mt19937_64 draws, the likelihood ratio evaluated directly); shares no code
// with core/accounting/random_allocation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace asyncdp::testing {

// delta(eps) of E composed windows by Monte Carlo: under P (remove) each window has one uniformly chosen
// step shifted by 1 with probability p0, under Q (add) none; the loss of a window is ln V (remove) or
// -ln V (add), V = p0 (1/m) sum_i exp((2 x_i - 1) / (2 sigma^2)) + 1 - p0; delta = E[(1 - e^{eps - L})_+].
struct MonteCarloDelta {
  double mean = 0.0;
  double standard_error = 0.0;
};
inline MonteCarloDelta AllocationMonteCarlo(int m, int windows, double sigma, double p0, double eps,
                                            bool remove, int samples, uint64_t seed) {
  // Draws: the window's shifted step (remove, with probability p0), then the m Gaussians.
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<int> step(0, m - 1);
  double sum = 0.0;
  double sum_sq = 0.0;
  for (int s = 0; s < samples; ++s) {
    double loss = 0.0;
    for (int w = 0; w < windows; ++w) {
      const int shifted = remove && uniform(rng) < p0 ? step(rng) : -1;
      double total = 0.0;
      for (int i = 0; i < m; ++i) {
        const double x = normal(rng) + (i == shifted ? 1.0 : 0.0);
        total += std::exp((2.0 * x - 1.0) / (2.0 * sigma * sigma));
      }
      const double v = p0 * total / m + 1.0 - p0;
      loss += remove ? std::log(v) : -std::log(v);
    }
    const double value = std::max(0.0, -std::expm1(eps - loss));
    sum += value;
    sum_sq += value * value;
  }
  const double mean = sum / samples;
  return {mean, std::sqrt(std::max(sum_sq / samples - mean * mean, 0.0) / samples)};
}

}  // namespace asyncdp::testing
