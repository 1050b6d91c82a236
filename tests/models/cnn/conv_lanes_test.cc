// The implicit-GEMM convolution kernels of conv_lanes.h against a direct evaluation of their defining
// sums, lane by lane, for kernel sizes with a register-blocked input gradient (3, 5) and without (4, the
// generic path), with and without padding, and channel/column counts that leave remainder blocks.
#include "models/cnn/conv_lanes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/random.h"

namespace asyncdp::models::cnn {
namespace {

constexpr int L = Lanes<float>::kCount;

struct Case {
  int in_channels, height, width, kernel, padding, out_channels;
};

ConvGeometry Geometry(const Case& c) {
  ConvGeometry g;
  g.in_channels = c.in_channels;
  g.in_height = c.height;
  g.in_width = c.width;
  g.kernel = c.kernel;
  g.padding = c.padding;
  g.out_channels = c.out_channels;
  g.out_height = c.height + 2 * c.padding - c.kernel + 1;
  g.out_width = c.width + 2 * c.padding - c.kernel + 1;
  g.weight_offset = 3;  // not at the start of the vector
  g.bias_offset = g.weight_offset + g.patch_size() * g.out_channels;
  return g;
}

std::vector<float> Random(size_t n, uint64_t seed) {
  RandomStream stream({.seed = seed, .purpose = StreamPurpose::kTest});
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(2.0 * stream.NextUniform() - 1.0);
  return v;
}

class ConvLanesTest : public ::testing::TestWithParam<Case> {};

TEST_P(ConvLanesTest, KernelsMatchTheirDefiningSums) {
  const ConvGeometry g = Geometry(GetParam());
  const ConvLanesShape<float> s(g);
  const int k = g.kernel, p = g.padding;
  const int64_t patch = g.patch_size();
  std::vector<float> params = Random(g.bias_offset + g.out_channels + 2, 1);
  // Unpadded input u(ci, y, x, lane) and its zero-padded lanes copy.
  const std::vector<float> u = Random(g.input_size() * L, 2);
  std::vector<float> x(g.in_channels * s.in_plane, 0.0f);
  auto u_at = [&](int ci, int y, int xx, int lane) {
    if (y < 0 || y >= g.in_height || xx < 0 || xx >= g.in_width) return 0.0;
    return static_cast<double>(u[((int64_t{ci} * g.in_height + y) * g.in_width + xx) * L + lane]);
  };
  for (int ci = 0; ci < g.in_channels; ++ci) {
    for (int y = 0; y < g.in_height; ++y) {
      for (int xx = 0; xx < g.in_width; ++xx) {
        for (int lane = 0; lane < L; ++lane) {
          x[ci * s.in_plane + (y + p) * s.in_row + (xx + p) * L + lane] = static_cast<float>(u_at(ci, y, xx, lane));
        }
      }
    }
  }
  auto w = [&](int ci, int ki, int kj, int co) {
    return static_cast<double>(params[g.weight_offset + (ci * k + ki) * k + kj + co * patch]);
  };
  const std::vector<float> delta = Random(g.out_channels * s.out_plane, 3);
  auto d_at = [&](int co, int i, int j, int lane) {
    return static_cast<double>(delta[co * s.out_plane + i * s.out_row + j * L + lane]);
  };

  std::vector<float> z(g.out_channels * s.out_plane);
  ConvForward(g, params.data(), x.data(), z.data());
  std::vector<float> grads(g.num_params() * L);
  ConvWeightGradients(g, x.data(), delta.data(), grads.data());
  std::vector<float> dx(g.input_size() * L, 7.0f);  // overwritten
  ConvInputGradient(g, params.data(), delta.data(), dx.data());

  for (int lane = 0; lane < L; ++lane) {
    for (int co = 0; co < g.out_channels; ++co) {
      for (int i = 0; i < g.out_height; ++i) {
        for (int j = 0; j < g.out_width; ++j) {
          double want = params[g.bias_offset + co];
          for (int ci = 0; ci < g.in_channels; ++ci) {
            for (int ki = 0; ki < k; ++ki) {
              for (int kj = 0; kj < k; ++kj) want += w(ci, ki, kj, co) * u_at(ci, i + ki - p, j + kj - p, lane);
            }
          }
          ASSERT_NEAR(z[co * s.out_plane + i * s.out_row + j * L + lane], want, 1e-4) << co << " " << i << " " << j;
        }
      }
      double bias_want = 0.0;
      for (int i = 0; i < g.out_height; ++i) {
        for (int j = 0; j < g.out_width; ++j) bias_want += d_at(co, i, j, lane);
      }
      ASSERT_NEAR(grads[(patch * g.out_channels + co) * L + lane], bias_want, 1e-4);
      for (int ci = 0; ci < g.in_channels; ++ci) {
        for (int ki = 0; ki < k; ++ki) {
          for (int kj = 0; kj < k; ++kj) {
            double want = 0.0;
            for (int i = 0; i < g.out_height; ++i) {
              for (int j = 0; j < g.out_width; ++j) want += d_at(co, i, j, lane) * u_at(ci, i + ki - p, j + kj - p, lane);
            }
            const int64_t t = (int64_t{ci} * k + ki) * k + kj;
            ASSERT_NEAR(grads[(t + co * patch) * L + lane], want, 1e-4) << "tap " << t << " channel " << co;
          }
        }
      }
    }
    for (int ci = 0; ci < g.in_channels; ++ci) {
      for (int y = 0; y < g.in_height; ++y) {
        for (int xx = 0; xx < g.in_width; ++xx) {
          double want = 0.0;
          for (int co = 0; co < g.out_channels; ++co) {
            for (int ki = 0; ki < k; ++ki) {
              for (int kj = 0; kj < k; ++kj) {
                const int i = y + p - ki, j = xx + p - kj;
                if (i >= 0 && i < g.out_height && j >= 0 && j < g.out_width) want += w(ci, ki, kj, co) * d_at(co, i, j, lane);
              }
            }
          }
          ASSERT_NEAR(dx[((int64_t{ci} * g.in_height + y) * g.in_width + xx) * L + lane], want, 1e-4)
              << ci << " " << y << " " << xx;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvLanesTest,
                         ::testing::Values(Case{2, 7, 9, 3, 1, 5},      // k = 3, padded, odd sizes
                                           Case{3, 8, 13, 5, 2, 7},     // k = 5, padded, 13 columns
                                           Case{1, 12, 12, 5, 0, 6},    // LeNet conv1-like
                                           Case{6, 12, 12, 5, 0, 16},   // LeNet conv2
                                           Case{2, 6, 7, 4, 0, 13},     // k = 4: generic input gradient
                                           Case{2, 40, 21, 3, 0, 3}));  // tall: several row tiles

}  // namespace
}  // namespace asyncdp::models::cnn
