// Tests of core/clipping.h: clip_C(x) = x / max(1, ||x|| / C) (docs/theory.md §2).
#include "core/clipping.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/random.h"

namespace asyncdp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ClipFactorTest, IsMinOfOneAndCOverNorm) {
  EXPECT_DOUBLE_EQ(ClipFactor(4.0, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(ClipFactor(2.0, 2.0), 1.0);  // on the boundary: unchanged
  EXPECT_DOUBLE_EQ(ClipFactor(1.0, 2.0), 1.0);
  EXPECT_DOUBLE_EQ(ClipFactor(0.0, 2.0), 1.0);  // a zero gradient stays zero, no 0/0
  EXPECT_DOUBLE_EQ(ClipFactor(1e30, kInf), 1.0);
  EXPECT_FLOAT_EQ(ClipFactor(8.0f, 2.0f), 0.25f);
}

TEST(ClipInPlaceTest, ScalesALongVectorToNormCAndReturnsThePreClipNorm) {
  std::vector<double> x = {3.0, 4.0};  // norm 5
  EXPECT_DOUBLE_EQ(ClipInPlace(std::span<double>(x), 1.0), 5.0);
  EXPECT_DOUBLE_EQ(x[0], 0.6);
  EXPECT_DOUBLE_EQ(x[1], 0.8);
}

TEST(ClipInPlaceTest, LeavesAVectorInsideTheBallBitIdentical) {
  std::vector<float> x = {0.1f, -0.2f, 0.3f};
  const std::vector<float> before = x;
  const double norm = ClipInPlace(std::span<float>(x), 1.0);
  EXPECT_NEAR(norm, std::sqrt(0.14), 1e-7);
  EXPECT_EQ(x, before);
}

TEST(ClipInPlaceTest, InfiniteClipDisablesClipping) {
  std::vector<float> x = {1e20f, -3e20f};
  const std::vector<float> before = x;
  ClipInPlace(std::span<float>(x), kInf);
  EXPECT_EQ(x, before);
}

TEST(ClipInPlaceTest, EveryClippedRandomVectorHasNormAtMostC) {
  RandomStream stream(StreamKey{2024, 0, 0, StreamPurpose::kTest});
  for (int trial = 0; trial < 500; ++trial) {
    const double clip = 0.01 + stream.NextUniform();
    const double scale = std::exp(6.0 * stream.NextUniform() - 3.0);  // norms from ~0.05 C to ~20 C
    std::vector<float> x(1 + stream.NextBelow(300));
    for (float& v : x) v = static_cast<float>(scale * stream.NextNormal());
    const std::vector<float> before = x;
    const double pre = ClipInPlace(std::span<float>(x), clip);
    const double post = L2Norm(std::span<const float>(x));
    EXPECT_LE(post, clip * (1 + 1e-6)) << trial;
    if (pre <= clip) {
      EXPECT_EQ(x, before) << trial;
    } else {
      EXPECT_NEAR(post, clip, 1e-6 * clip) << trial;
      // Direction preserved: x = before * (C / pre).
      for (size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(x[j], before[j] * clip / pre, 1e-6 * std::abs(before[j]));
    }
  }
}

TEST(L2NormTest, AccumulatesInDouble) {
  // 10^6 copies of 1e-3f: a float accumulator would drift; the double one gives sqrt(1) = 1.
  std::vector<float> x(1000000, 1e-3f);
  EXPECT_NEAR(L2Norm(std::span<const float>(x)), 1.0, 1e-6);
}

}  // namespace
}  // namespace asyncdp
