// Tests of core/noise.h: one N(0, C^2 sigma^2 I) draw per round (docs/theory.md §2), reproducible from
// its key whatever the thread split.
#include "core/noise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace asyncdp {
namespace {

TEST(NoiseStddevTest, IsClipTimesSigma) {
  EXPECT_DOUBLE_EQ(NoiseStddev(0.1, 4.0), 0.4);
  EXPECT_DOUBLE_EQ(NoiseStddev(std::numeric_limits<double>::infinity(), 0.0), 0.0);  // non-private
}

TEST(AddRoundNoiseTest, SampleMeanAndVarianceMatchCSigma) {
  const double clip = 0.1, sigma = 3.0;  // stddev 0.3
  const size_t n = 400000;
  std::vector<double> sum(n, 0.0);
  AddRoundNoise(GradientNoiseKey(11, 0, 0), clip, sigma, std::span<double>(sum));
  double mean = 0, m2 = 0;
  for (const double v : sum) mean += v;
  mean /= n;
  for (const double v : sum) m2 += (v - mean) * (v - mean);
  const double variance = m2 / (n - 1);
  // Standard errors: mean 0.3/sqrt(n) = 4.7e-4; variance 0.09 sqrt(2/n) = 2.0e-4. Allow 5 of each.
  EXPECT_NEAR(mean, 0.0, 2.4e-3);
  EXPECT_NEAR(variance, 0.09, 1.0e-3);
}

TEST(AddRoundNoiseTest, AddsToTheSumRatherThanOverwriting) {
  std::vector<float> zero(64, 0.0f), offset(64, 5.0f);
  const StreamKey key = GradientNoiseKey(3, 1, 2);
  AddRoundNoise(key, 1.0, 1.0, std::span<float>(zero));
  AddRoundNoise(key, 1.0, 1.0, std::span<float>(offset));
  for (size_t j = 0; j < zero.size(); ++j) EXPECT_NEAR(offset[j] - 5.0f, zero[j], 1e-5f);
}

TEST(AddRoundNoiseTest, ZeroSigmaLeavesTheSumUnchanged) {
  std::vector<float> sum = {1.0f, -2.0f, 3.0f};
  AddRoundNoise(GradientNoiseKey(3, 1, 2), std::numeric_limits<double>::infinity(), 0.0, std::span<float>(sum));
  EXPECT_EQ(sum, (std::vector<float>{1.0f, -2.0f, 3.0f}));
}

TEST(AddRoundNoiseTest, BitIdenticalToAddGaussianNoise) {
  const StreamKey key = GradientNoiseKey(99, 4, 17);
  std::vector<float> a(1001, 0.5f), b(1001, 0.5f);
  AddRoundNoise(key, 0.1, 1.3, std::span<float>(a));
  AddGaussianNoise(key, 0.1 * 1.3, std::span<float>(b));
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

TEST(AddRoundNoiseTest, SameBitsWithOneAndTwoThreads) {
  const StreamKey key = GradientNoiseKey(2023, 3, 8);
  const size_t n = 100003;  // odd, and the split point is odd: ranges start mid Box–Muller pair
  std::vector<float> one(n, 0.25f), two(n, 0.25f);
  AddRoundNoise(key, 0.1, 2.0, std::span<float>(one));
  const size_t split = 50001;
  std::thread first([&] { AddRoundNoiseRange(key, 0.1, 2.0, 0, std::span<float>(two.data(), split)); });
  std::thread second([&] {
    AddRoundNoiseRange(key, 0.1, 2.0, split, std::span<float>(two.data() + split, n - split));
  });
  first.join();
  second.join();
  EXPECT_EQ(0, std::memcmp(one.data(), two.data(), n * sizeof(float)));
}

// Pearson correlation of two equally long vectors.
double Correlation(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= x.size();
  my /= y.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

TEST(AddRoundNoiseTest, DifferentKeysGiveUncorrelatedStreams) {
  const size_t n = 100000;  // under independence the correlation is ~ N(0, 1/n): sd 0.0032
  auto draw = [&](const StreamKey& key) {
    std::vector<double> v(n, 0.0);
    AddRoundNoise(key, 1.0, 1.0, std::span<double>(v));
    return v;
  };
  const auto base = draw(GradientNoiseKey(1, 0, 0));
  for (const StreamKey& other : {GradientNoiseKey(2, 0, 0), GradientNoiseKey(1, 1, 0), GradientNoiseKey(1, 0, 1)}) {
    const auto v = draw(other);
    EXPECT_LT(std::abs(Correlation(base, v)), 0.016);  // 5 sd
    EXPECT_NE(base[0], v[0]);
  }
  // Shifted by one coordinate within a stream: also uncorrelated (no lag-1 structure from Box–Muller).
  std::vector<double> head(base.begin(), base.end() - 1), tail(base.begin() + 1, base.end());
  EXPECT_LT(std::abs(Correlation(head, tail)), 0.016);
}

}  // namespace
}  // namespace asyncdp
