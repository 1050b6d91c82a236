#include "core/accounting/pld/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

namespace asyncdp::accounting {
namespace {

TEST(FftTest, MatchesTheNaiveDftAndInverts) {
  const int log2_size = 7;
  const size_t n = size_t{1} << log2_size;
  std::vector<std::complex<double>> data(n);
  for (size_t j = 0; j < n; ++j) data[j] = {std::sin(0.3 * j) + 0.01 * j, std::cos(1.7 * j)};
  std::vector<std::complex<double>> naive(n);
  for (size_t k = 0; k < n; ++k) {
    for (size_t j = 0; j < n; ++j) naive[k] += data[j] * std::polar(1.0, -2.0 * std::numbers::pi * j * k / n);
  }
  const FftPlan plan(log2_size);
  std::vector<std::complex<double>> transformed = data;
  plan.Forward(transformed);
  for (size_t k = 0; k < n; ++k) EXPECT_LT(std::abs(transformed[k] - naive[k]), 1e-11);
  plan.Inverse(transformed);
  for (size_t j = 0; j < n; ++j) EXPECT_LT(std::abs(transformed[j] - data[j]), 1e-13);
}

TEST(FftTest, CircularConvolutionOfTwoPmfs) {
  const FftPlan plan(4);
  std::vector<std::complex<double>> a(16), b(16);
  a[0] = 0.5;
  a[3] = 0.5;
  b[1] = 0.25;
  b[14] = 0.75;  // wraps: 3 + 14 = 17 = 1 (mod 16)
  plan.Forward(a);
  plan.Forward(b);
  for (size_t k = 0; k < 16; ++k) a[k] *= b[k];
  plan.Inverse(a);
  EXPECT_NEAR(a[1].real(), 0.125 + 0.375, 1e-15);
  EXPECT_NEAR(a[4].real(), 0.125, 1e-15);
  EXPECT_NEAR(a[14].real(), 0.375, 1e-15);
}

}  // namespace
}  // namespace asyncdp::accounting
