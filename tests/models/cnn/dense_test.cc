// The dense layer's kernels (dense.h: forward product, input gradient, clipped sum) against their defining
// sums evaluated one output and one lane at a time, in the kernel's order (the multiply-adds over the depth,
// fused where the packets fuse), so the comparison is bit for bit. The shapes include weight matrices
// larger than the forward product's depth block (kDepthBlockBytes), with a partial last block, and output
// counts that leave remainder tiles: cutting the depth into blocks must not change a single bit.
#include "models/cnn/dense.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/random.h"

namespace asyncdp::models::cnn {
namespace {

// acc + a·b as one packet multiply-add computes it: fused when Eigen's packets use FMA.
template <typename Scalar>
Scalar MultiplyAdd(Scalar a, Scalar b, Scalar acc) {
#ifdef EIGEN_VECTORIZE_FMA
  return std::fma(a, b, acc);
#else
  const Scalar product = a * b;  // a separate rounding, as pmul then padd
  return product + acc;
#endif
}

template <typename Scalar>
std::vector<Scalar> Random(size_t n, uint64_t seed) {
  RandomStream stream({.seed = seed, .purpose = StreamPurpose::kTest});
  std::vector<Scalar> v(n);
  for (Scalar& x : v) x = static_cast<Scalar>(2.0 * stream.NextUniform() - 1.0);
  return v;
}

template <typename Scalar>
bool SameBits(Scalar a, Scalar b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct Shape {
  int in_features, out_features;
};

template <typename Scalar>
void CheckProducts(const Shape& shape) {
  constexpr int L = Lanes<Scalar>::kCount;
  DenseGeometry g;
  g.in_features = shape.in_features;
  g.out_features = shape.out_features;
  g.weight_offset = 5;  // not at the start of the vector
  g.bias_offset = g.weight_offset + int64_t{g.in_features} * g.out_features;
  const std::vector<Scalar> params =
      Random<Scalar>(static_cast<size_t>(g.bias_offset + g.out_features + 3), 1);
  const std::vector<Scalar> in = Random<Scalar>(static_cast<size_t>(g.in_features) * L, 2);
  const std::vector<Scalar> out_grad = Random<Scalar>(static_cast<size_t>(g.out_features) * L, 3);
  auto w = [&](int64_t o, int64_t f) {
    return params[static_cast<size_t>(g.weight_offset + o + f * g.out_features)];
  };

  std::vector<Scalar> out(static_cast<size_t>(g.out_features) * L);
  DenseForward(g, params.data(), in.data(), out.data());
  int64_t mismatches = 0;
  for (int64_t o = 0; o < g.out_features; ++o) {
    for (int l = 0; l < L; ++l) {
      Scalar acc = params[static_cast<size_t>(g.bias_offset + o)];
      for (int64_t f = 0; f < g.in_features; ++f)
        acc = MultiplyAdd(in[static_cast<size_t>(f * L + l)], w(o, f), acc);
      if (!SameBits(acc, out[static_cast<size_t>(o * L + l)])) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << "forward, " << g.in_features << " -> " << g.out_features;

  std::vector<Scalar> in_grad(static_cast<size_t>(g.in_features) * L);
  DenseInputGradient(g, params.data(), out_grad.data(), in_grad.data());
  mismatches = 0;
  for (int64_t f = 0; f < g.in_features; ++f) {
    for (int l = 0; l < L; ++l) {
      Scalar acc = 0;
      for (int64_t o = 0; o < g.out_features; ++o) {
        acc = MultiplyAdd(out_grad[static_cast<size_t>(o * L + l)], w(o, f), acc);
      }
      if (!SameBits(acc, in_grad[static_cast<size_t>(f * L + l)])) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << "input gradient, " << g.in_features << " -> " << g.out_features;

  // The clipped sum [δ diag(c) Aᵀ, δ c], written over and added to an earlier gradient. The weight
  // gradient is Σ_l (c_l δ_l) a_l in lane order from 0 (then added to the earlier value): bit for bit. The
  // bias sums reduce the lanes pairwise (lanes::HorizontalSums, tested bit for bit in lanes_test.cc).
  const std::vector<Scalar> factors = Random<Scalar>(L, 4);
  const int64_t ld = (g.out_features + L - 1) / L * L;
  const std::vector<Scalar> earlier = Random<Scalar>(params.size(), 5);
  for (const bool accumulate : {false, true}) {
    std::vector<Scalar> delta = out_grad;  // scaled in place
    std::vector<Scalar> scratch(static_cast<size_t>(L * ld));
    std::vector<Scalar> grad = earlier;
    DenseClippedSum(g, in.data(), factors.data(), delta.data(), scratch.data(), accumulate, grad.data());
    mismatches = 0;
    for (int64_t f = 0; f < g.in_features; ++f) {
      for (int64_t o = 0; o < g.out_features; ++o) {
        Scalar acc = 0;
        for (int l = 0; l < L; ++l) {
          const Scalar scaled = out_grad[static_cast<size_t>(o * L + l)] * factors[static_cast<size_t>(l)];
          acc = MultiplyAdd(scaled, in[static_cast<size_t>(f * L + l)], acc);
        }
        const auto at = static_cast<size_t>(g.weight_offset + o + f * g.out_features);
        const Scalar expected = accumulate ? earlier[at] + acc : acc;
        if (!SameBits(expected, grad[at])) ++mismatches;
      }
    }
    EXPECT_EQ(mismatches, 0) << "clipped sum, " << g.in_features << " -> " << g.out_features
                             << (accumulate ? ", accumulated" : "");
    for (int64_t o = 0; o < g.out_features; ++o) {
      double sum = 0;
      for (int l = 0; l < L; ++l) {
        sum +=
            static_cast<double>(out_grad[static_cast<size_t>(o * L + l)]) * factors[static_cast<size_t>(l)];
      }
      const auto at = static_cast<size_t>(g.bias_offset + o);
      const double expected = (accumulate ? static_cast<double>(earlier[at]) : 0.0) + sum;
      EXPECT_NEAR(static_cast<double>(grad[at]), expected, 1e-5) << "bias " << o;
    }
    // Nothing outside the layer's slice is written.
    EXPECT_EQ(grad[0], earlier[0]);
    EXPECT_EQ(grad.back(), earlier.back());
  }
}

// LeNet's layers (one depth block), AlexNet's first (4096 × 384: 49 blocks of 85 columns in float), a
// matrix of a few blocks with a partial last one, and outputs that leave remainder tiles.
const Shape kShapes[] = {{400, 120}, {120, 84}, {84, 10}, {4096, 384}, {300, 384}, {1000, 37}, {7, 1}};

TEST(DenseTest, FloatKernelsMatchTheirDefiningSumsBitForBit) {
  for (const Shape& shape : kShapes) CheckProducts<float>(shape);
}

TEST(DenseTest, DoubleKernelsMatchTheirDefiningSumsBitForBit) {
  for (const Shape& shape : kShapes) CheckProducts<double>(shape);
}

TEST(DenseTest, TheForwardProductOfAWideMatrixRunsInSeveralDepthBlocks) {
  // The point of the first test's wide shapes: their weights exceed one block, so blocking is exercised.
  EXPECT_GT(int64_t{4096} * 384 * static_cast<int64_t>(sizeof(float)), 2 * dense_internal::kDepthBlockBytes);
  EXPECT_GT(int64_t{300} * 384 * static_cast<int64_t>(sizeof(float)), 2 * dense_internal::kDepthBlockBytes);
  EXPECT_NE(int64_t{300} % (dense_internal::kDepthBlockBytes / (384 * int64_t{sizeof(float)})), 0);
}

}  // namespace
}  // namespace asyncdp::models::cnn
