// The lanes primitives whose fast paths must give exactly what their plain definitions give: the
// transposing reduction HorizontalSums against one HorizontalSum per packet (bit for bit: the CNN's clipped
// sums, and so every training run's bits, depend on it), and the mask comparisons and selections of the
// pooling kernels against scalar comparisons, NaNs and ties included.
#include "models/cnn/lanes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/random.h"

namespace asyncdp::models::cnn {
namespace {

constexpr int kLanesF = Lanes<float>::kCount;

uint32_t Bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// LoadToRegister's asm hands the packet through a register operand: every lane, NaN payloads and signed
// zeros included, must come back as loaded, in float and double, from aligned and unaligned addresses, and
// an FMA on it must give what an FMA on a plain load gives.
TEST(LanesTest, LoadToRegisterGivesTheLoadedPacketBitForBit) {
  RandomStream stream({.seed = 5, .purpose = StreamPurpose::kTest});
  alignas(64) float f[3 * kLanesF];
  for (float& x : f) x = static_cast<float>(stream.NextNormal());
  f[1] = -0.0f;
  f[2] = std::numeric_limits<float>::quiet_NaN();
  f[3] = std::numeric_limits<float>::infinity();
  for (int offset : {0, 1, 3}) {
    alignas(64) float plain[kLanesF], pinned[kLanesF], fma_plain[kLanesF], fma_pinned[kLanesF];
    const auto a = lanes::Load(f + offset);
    const auto b = lanes::LoadToRegister(f + offset);
    lanes::Store(plain, a);
    lanes::Store(pinned, b);
    const auto w = lanes::Load(f + kLanesF);
    lanes::Store(fma_plain, lanes::Fma(a, w, lanes::Load(f + 2 * kLanesF)));
    lanes::Store(fma_pinned, lanes::Fma(b, w, lanes::Load(f + 2 * kLanesF)));
    for (int l = 0; l < kLanesF; ++l) {
      EXPECT_EQ(Bits(pinned[l]), Bits(f[offset + l])) << "offset " << offset << " lane " << l;
      EXPECT_EQ(Bits(plain[l]), Bits(pinned[l]));
      EXPECT_EQ(Bits(fma_plain[l]), Bits(fma_pinned[l]));
    }
  }
  constexpr int kLanesD = Lanes<double>::kCount;
  alignas(64) double d[kLanesD + 1];
  for (double& x : d) x = stream.NextNormal();
  alignas(64) double out[kLanesD];
  lanes::Store(out, lanes::LoadToRegister(d + 1));
  for (int l = 0; l < kLanesD; ++l) EXPECT_EQ(std::memcmp(&out[l], &d[1 + l], sizeof(double)), 0) << l;
}

// Opaque only hides where the pointer came from: it is the same address, const or not, and loads through
// it see every store made before it (the input-gradient tile reads δ through one per tap).
TEST(LanesTest, OpaqueIsTheSamePointerAndSeesEarlierStores) {
  alignas(64) float f[2 * kLanesF];
  for (int i = 0; i < 2 * kLanesF; ++i) f[i] = static_cast<float>(i) + 0.5f;
  const float* c = f;
  EXPECT_EQ(lanes::Opaque(c), c);
  EXPECT_EQ(lanes::Opaque(f + 3), f + 3);
  float sum = 0.0f;
  for (int round = 0; round < 3; ++round) {
    f[1] = static_cast<float>(round) * 10.0f;  // a store before each read through a fresh Opaque pointer
    const float* q = lanes::Opaque(c);
    alignas(64) float out[kLanesF];
    lanes::Store(out, lanes::Load(q));
    EXPECT_EQ(out[1], static_cast<float>(round) * 10.0f) << round;
    EXPECT_EQ(out[0], 0.5f);
    sum += out[1];
  }
  EXPECT_EQ(sum, 30.0f);
}

TEST(LanesTest, HorizontalSumsAreBitForBitTheSumsOneAtATime) {
  RandomStream stream({.seed = 3, .purpose = StreamPurpose::kTest});
  float data[kLanesF * kLanesF];
  int64_t compared = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // Magnitudes over ~26 binades, so that the order of the additions shows in the rounding.
    for (float& x : data) {
      x = static_cast<float>(stream.NextNormal() * std::exp(3.0 * stream.NextNormal()));
    }
    lanes::Packet<float> v[kLanesF];
    for (int p = 0; p < kLanesF; ++p) v[p] = lanes::Load(data + p * kLanesF);
    float sums[kLanesF];
    lanes::HorizontalSums<float>(v, sums);
    for (int p = 0; p < kLanesF; ++p) {
      ASSERT_EQ(Bits(sums[p]), Bits(lanes::HorizontalSum<float>(v[p])))
          << "trial " << trial << " packet " << p;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 20000 * kLanesF);
}

TEST(LanesTest, HorizontalSumsOfDoublesUseThePlainPath) {
  constexpr int kD = Lanes<double>::kCount;
  double data[kD * kD];
  for (int i = 0; i < kD * kD; ++i) data[i] = 1.0 / (i + 1);
  lanes::Packet<double> v[kD];
  for (int p = 0; p < kD; ++p) v[p] = lanes::Load(data + p * kD);
  double sums[kD];
  lanes::HorizontalSums<double>(v, sums);
  for (int p = 0; p < kD; ++p) EXPECT_EQ(sums[p], lanes::HorizontalSum<double>(v[p]));
}

TEST(LanesTest, LessEqualAndSelectFollowScalarComparisons) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Lane r compares a[r] with b[r]: smaller, equal (ties), larger, signed zeros and NaNs on either side (all
  // within the first 8 lanes, so AVX2 builds, L = 8, test every case too).
  static_assert(kLanesF <= 16);
  const float a[16] = {1, 2, 3, -0.0f, 0.0f, nan, 5, nan, -1, 7, 7, 8, -3, 4, 0.5f, 9};
  const float b[16] = {2, 2, 1, 0.0f, -0.0f, 1, nan, nan, -2, 7, 8, 7, -3, 5, 0.25f, 9};
  const auto va = lanes::Load(a), vb = lanes::Load(b);
  float if_less[kLanesF], if_equal[kLanesF];
  lanes::Store(if_less, lanes::Select<float>(lanes::Less<float>(va, vb), va, vb));
  lanes::Store(if_equal, lanes::Select<float>(lanes::Equal<float>(va, vb), va, lanes::Zero<float>()));
  for (int r = 0; r < kLanesF; ++r) {
    const float want_less = a[r] < b[r] ? a[r] : b[r];
    const float want_equal = a[r] == b[r] ? a[r] : 0.0f;
    EXPECT_EQ(Bits(if_less[r]), Bits(want_less)) << "lane " << r;
    EXPECT_EQ(Bits(if_equal[r]), Bits(want_equal)) << "lane " << r;
  }
}

}  // namespace
}  // namespace asyncdp::models::cnn
