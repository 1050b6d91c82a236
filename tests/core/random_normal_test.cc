// Distribution tests of the Gaussian generator (core/random.h, generator version kNoiseGeneratorVersion):
// the normals must be an exact N(0, 1) sample — moments, tails, goodness of fit against the normal CDF —
// and independent across indices, including across the 16-normal vector blocks and Box–Muller pairs.
// Fixed seeds; every threshold is a 0.1%-level (or 5-sigma) critical value, so a correct generator passes
// with overwhelming probability and these seeds pass deterministically.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/random.h"

namespace asyncdp {
namespace {

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::vector<double> Normals(uint64_t seed, size_t n) {
  std::vector<double> z(n);
  FillStandardNormal(StreamKey{seed, 3, 4, StreamPurpose::kGradientNoise}, 0, z);
  return z;
}

TEST(NormalDistributionTest, MomentsAreStandard) {
  const auto z = Normals(1, 2000000);
  const double n = static_cast<double>(z.size());
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  for (const double v : z) {
    m1 += v;
    m2 += v * v;
    m3 += v * v * v;
    m4 += v * v * v * v;
  }
  // Standard errors for n = 2e6: mean 7.1e-4, E z² 1.0e-3, E z³ 2.7e-3, E z⁴ 6.9e-3. Allow 5 of each.
  EXPECT_NEAR(m1 / n, 0.0, 3.6e-3);
  EXPECT_NEAR(m2 / n, 1.0, 5.0e-3);
  EXPECT_NEAR(m3 / n, 0.0, 1.4e-2);
  EXPECT_NEAR(m4 / n, 3.0, 3.5e-2);
}

// Kolmogorov–Smirnov against Φ: critical value at the 0.1% level is 1.949 / sqrt(n).
TEST(NormalDistributionTest, KolmogorovSmirnovAgainstTheNormalCdf) {
  for (const uint64_t seed : {2u, 3u}) {
    auto z = Normals(seed, 1000000);
    std::sort(z.begin(), z.end());
    const double n = static_cast<double>(z.size());
    double d = 0.0;
    for (size_t i = 0; i < z.size(); ++i) {
      const double f = NormalCdf(z[i]);
      d = std::max({d, f - i / n, (i + 1) / n - f});
    }
    EXPECT_LT(d, 1.949 / std::sqrt(n)) << "seed " << seed;
  }
}

// Chi-square over 82 cells: (−∞, −4), 80 cells of width 0.1 on [−4, 4), [4, ∞). 81 degrees of freedom:
// P(χ² > 126.0) ≈ 0.001.
TEST(NormalDistributionTest, ChiSquareOverBins) {
  const auto z = Normals(4, 2000000);
  const int inner = 80;
  std::vector<double> counts(inner + 2, 0.0);
  for (const double v : z) {
    int cell = 0;
    if (v >= 4.0) {
      cell = inner + 1;
    } else if (v >= -4.0) {
      cell = std::clamp(1 + static_cast<int>(std::floor((v + 4.0) * 10.0)), 1, inner);
    }
    counts[cell] += 1.0;
  }
  double chi2 = 0.0;
  const double n = static_cast<double>(z.size());
  for (int c = 0; c < inner + 2; ++c) {
    const double lo = c == 0 ? -INFINITY : -4.0 + 0.1 * (c - 1);
    const double hi = c == inner + 1 ? INFINITY : -4.0 + 0.1 * c;
    const double expected = n * (NormalCdf(hi) - NormalCdf(lo));
    chi2 += (counts[c] - expected) * (counts[c] - expected) / expected;
  }
  EXPECT_LT(chi2, 126.0);
}

// Tail frequencies up to 5 standard deviations, within 5 binomial standard errors; and the largest |z|
// stays below the Box–Muller bound sqrt(−2 ln 2^-54) ≈ 8.65 (u1 ≥ 2^-54).
TEST(NormalDistributionTest, TailsHaveNormalFrequencies) {
  const auto z = Normals(5, 10000000);
  const double n = static_cast<double>(z.size());
  for (const double a : {2.0, 3.0, 4.0, 5.0}) {
    const double p = 2.0 * NormalCdf(-a);
    double count = 0;
    for (const double v : z) count += std::abs(v) > a ? 1.0 : 0.0;
    const double sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(count, n * p, 5.0 * sd + 1.0) << "P(|z| > " << a << ")";
  }
  double largest = 0.0;
  for (const double v : z) largest = std::max(largest, std::abs(v));
  EXPECT_LT(largest, 8.66);
  EXPECT_GT(largest, 4.5);  // 10^7 draws: P(max < 4.5) is negligible
}

// Pearson correlations at lags 1 (the two normals of a Box–Muller pair and neighbouring pairs), 2, 15, 16
// (across vector blocks) and between squares (dependence that linear correlation misses, e.g. a shared
// radius): ~ N(0, 1/n) under independence, sd 7.1e-4 at n = 2e6; allow 5 sd.
TEST(NormalDistributionTest, IndicesAreIndependent) {
  const auto z = Normals(6, 2000000);
  auto correlation = [&](size_t lag, bool squares, size_t start, size_t step) {
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, n = 0;
    for (size_t i = start; i + lag < z.size(); i += step) {
      const double x = squares ? z[i] * z[i] : z[i];
      const double y = squares ? z[i + lag] * z[i + lag] : z[i + lag];
      sx += x;
      sy += y;
      sxx += x * x;
      syy += y * y;
      sxy += x * y;
      n += 1;
    }
    const double cov = sxy / n - (sx / n) * (sy / n);
    return cov / std::sqrt((sxx / n - (sx / n) * (sx / n)) * (syy / n - (sy / n) * (sy / n)));
  };
  for (const size_t lag : {1u, 2u, 3u, 15u, 16u, 17u}) {
    EXPECT_LT(std::abs(correlation(lag, false, 0, 1)), 3.6e-3) << "lag " << lag;
    EXPECT_LT(std::abs(correlation(lag, true, 0, 1)), 3.6e-3) << "squares, lag " << lag;
  }
  // Within Box–Muller pairs only (z_2b, z_2b+1): n = 1e6, sd 1e-3.
  EXPECT_LT(std::abs(correlation(1, false, 0, 2)), 5.0e-3);
  EXPECT_LT(std::abs(correlation(1, true, 0, 2)), 5.0e-3);
  // The pair's angle is uniform: the four sign quadrants of (z_2b, z_2b+1) are equally likely
  // (chi-square, 3 degrees of freedom, P(χ² > 16.27) = 0.001).
  double quadrant[4] = {0, 0, 0, 0};
  for (size_t i = 0; i + 1 < z.size(); i += 2) quadrant[(z[i] > 0 ? 1 : 0) + (z[i + 1] > 0 ? 2 : 0)] += 1;
  const double expected = static_cast<double>(z.size() / 2) / 4.0;
  double chi2 = 0;
  for (const double c : quadrant) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 16.27);
}

}  // namespace
}  // namespace asyncdp
