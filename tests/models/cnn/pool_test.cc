// Pooling + activation on the lanes layout (pool.h): values, winner codes and tie rule, strided outputs,
// and the backward routing, lane by lane against a direct computation.
#include "models/cnn/pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace asyncdp::models::cnn {
namespace {

constexpr int kLanes = Lanes<float>::kCount;

// z(c, y, x, lane) of a [C][H][W][kLanes] tensor.
float& At(std::vector<float>& t, int height, int width, int c, int y, int x, int lane) {
  return t[((int64_t{c} * height + y) * width + x) * kLanes + lane];
}

// Expectation: max / mean of each 2 × 2 window; the winner code is column + 2·row, ties going to the top
// row, then to the left column. Lane 0 holds the windows below; every other lane the same values plus
// its lane number (the winners do not change), so lanes are independent.
TEST(CnnPoolTest, ForwardValuesAndWinners) {
  //   (1 5; 2 3) → 5 top-right   (4 4; 4 4) → 4 top-left   (0 1; 7 7) → 7 bottom-left   (2 0; 1 9) → 9
  const float rows[2][8] = {{1, 5, 4, 4, 0, 1, 2, 0}, {2, 3, 4, 4, 7, 7, 1, 9}};
  std::vector<float> z(2 * 8 * kLanes);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 8; ++x) {
      for (int lane = 0; lane < kLanes; ++lane) At(z, 2, 8, 0, y, x, lane) = rows[y][x] + lane;
    }
  }
  std::vector<float> out(4 * kLanes), codes(4 * kLanes);
  PoolForward<float>(Pooling::kMax, Activation::kRelu, 1, 2, 8, z.data(), codes.data(),
                     {out.data(), 4 * kLanes, 4 * kLanes});
  const float want[4] = {5, 4, 7, 9};
  const float want_code[4] = {1, 0, 2, 3};
  for (int j = 0; j < 4; ++j) {
    for (int lane = 0; lane < kLanes; ++lane) {
      EXPECT_EQ(out[j * kLanes + lane], want[j] + lane);
      EXPECT_EQ(codes[j * kLanes + lane], want_code[j]);
    }
  }
  PoolForward<float>(Pooling::kAverage, Activation::kRelu, 1, 2, 8, z.data(), nullptr,
                     {out.data(), 4 * kLanes, 4 * kLanes});
  const float want_avg[4] = {2.75f, 4, 3.75f, 3};
  for (int j = 0; j < 4; ++j) EXPECT_EQ(out[j * kLanes + 3], want_avg[j] + 3);
}

// Expectation: 3 channels of 4 × 6, values distinct within each window (and different per lane), the
// output written into a padded destination (border 1): every pooled value is the window's activated
// max / mean, the border is untouched, and the backward pass sends g ⊙ act'(y) to exactly the winner
// (max) or a quarter to each input (average). Negative windows are zeroed by ReLU and get no gradient.
TEST(CnnPoolTest, StridedOutputAndBackward) {
  const int channels = 3, height = 4, width = 6, out_h = 2, out_w = 3;
  std::vector<float> z(int64_t{channels} * height * width * kLanes);
  for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(static_cast<int64_t>((i * 37) % 101) - 30);
  // Destination: [C][out_h + 2][out_w + 2][kLanes], interior at (1, 1).
  const int64_t row = int64_t{out_w + 2} * kLanes, plane = (out_h + 2) * row;
  for (const Pooling pooling : {Pooling::kMax, Pooling::kAverage}) {
    std::vector<float> padded(channels * plane, -100.0f), codes(int64_t{channels} * out_h * out_w * kLanes);
    const StridedLanes<float> y{padded.data() + row + kLanes, plane, row};
    PoolForward<float>(pooling, Activation::kRelu, channels, height, width, z.data(), codes.data(), y);
    std::vector<float> g(codes.size()), delta(z.size(), -1.0f);
    for (size_t i = 0; i < g.size(); ++i) g[i] = 1.0f + static_cast<float>(i % 17);
    const std::vector<float> g_in = g;
    PoolBackward<float>(pooling, Activation::kRelu, channels, height, width, y, codes.data(), g.data(),
                        delta.data());
    for (int c = 0; c < channels; ++c) {
      for (int i = 0; i < out_h + 2; ++i) {
        for (int j = 0; j < out_w + 2; ++j) {
          const bool interior = i >= 1 && i <= out_h && j >= 1 && j <= out_w;
          if (!interior) {
            EXPECT_EQ(padded[c * plane + i * row + j * kLanes], -100.0f);
          }
        }
      }
      for (int i = 0; i < out_h; ++i) {
        for (int j = 0; j < out_w; ++j) {
          for (int lane = 0; lane < kLanes; ++lane) {
            float best = -1e9f, sum = 0.0f;
            for (int dy = 0; dy < 2; ++dy) {
              for (int dx = 0; dx < 2; ++dx) {
                const float v = At(z, height, width, c, 2 * i + dy, 2 * j + dx, lane);
                best = std::max(best, v);
                sum += v;
              }
            }
            const float pooled = pooling == Pooling::kMax ? best : 0.25f * sum;
            const float activated = std::max(pooled, 0.0f);
            ASSERT_FLOAT_EQ(padded[c * plane + (i + 1) * row + (j + 1) * kLanes + lane], activated);
            const int64_t o = ((int64_t{c} * out_h + i) * out_w + j) * kLanes + lane;
            const float gz = activated > 0.0f ? g_in[o] : 0.0f;
            for (int dy = 0; dy < 2; ++dy) {
              for (int dx = 0; dx < 2; ++dx) {
                const float v = At(z, height, width, c, 2 * i + dy, 2 * j + dx, lane);
                const float want = pooling == Pooling::kMax ? (v == best ? gz : 0.0f) : 0.25f * gz;
                ASSERT_EQ(At(delta, height, width, c, 2 * i + dy, 2 * j + dx, lane), want);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace asyncdp::models::cnn
