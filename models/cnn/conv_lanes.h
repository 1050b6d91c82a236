// Stride-1 convolution of a group of L examples in the lanes layout (lanes.h): forward, exact per-example
// weight gradients, input gradient. Implicit GEMM: the kernels read the (zero-padded) input in place —
// no im2col matrix is ever written — and keep a block of outputs in registers.
//
// Shapes (g = ConvGeometry, p = padding, k = kernel, K = C_in·k·k):
//   x   padded input   [C_in][H + 2p][W + 2p][L], zero border
//   z   pre-activation [C_out][H_out][W_out][L];  δ (its gradient) has the same shape
//   Wt  weights, Wt(t, co) = params[weight_offset + t + co·K], t = (ci·k + ki)·k + kj; bias b[co]
//   G   per-example parameter gradients [num_params][L], parameter index as in the flat vector
//   dx  input gradient (unpadded) [C_in][H][W][L]
//
//   z(co, i, j)          = b(co) + Σ_{ci,ki,kj} Wt(t, co) x(ci, i + ki, j + kj)
//   G(t + co·K)          = Σ_{i,j} δ(co, i, j) x(ci, i + ki, j + kj)     (lane r: example r's gradient)
//   G(K·C_out + co)      = Σ_{i,j} δ(co, i, j)
//   dx(ci, y, x)         = Σ_{co,ki,kj} Wt(t, co) δ(co, y + p − ki, x + p − kj)   (valid indices only)
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/check.h"
#include "models/cnn/architecture.h"
#include "models/cnn/conv_tiles.h"
#include "models/cnn/lanes.h"

namespace asyncdp::models::cnn {

// z = conv(x) + b for the whole group.
template <typename Scalar>
void ConvForward(const ConvGeometry& g, const Scalar* params, const Scalar* x, Scalar* z) {
  constexpr int L = Lanes<Scalar>::kCount;
  ASYNCDP_CHECK(g.in_channels >= 1);  // ForwardTile's channel loop is a do-while (ComputeGeometry's shapes)
  // 6 channels × 4 columns = 24 accumulators (+ 4 inputs and a broadcast) with 32 registers; 4 × 3 with 16
  // (12 + 3 + 1: every register, no spill; 3 × 4 needed 17, and GCC spilled accumulators to the stack).
  constexpr int kChannelBlock = lanes::kFewRegisters ? 4 : 6;
  constexpr int kColumnBlock = lanes::kFewRegisters ? 3 : 4;
  const ConvLanesShape<Scalar> s(g);
  const int64_t patch = g.patch_size();
  const Scalar* w = params + g.weight_offset;
  const Scalar* bias = params + g.bias_offset;
  // Rows outermost: the input rows one output row needs (C_in · k padded rows) stay in cache while every
  // channel block reads them.
  for (int i = 0; i < g.out_height; ++i) {
    ForEachBalancedBlock(g.out_channels, kChannelBlock, [&](int co, int cb) {
      lanes::Dispatch<kChannelBlock>(cb, [&]<int CB>() {
        for (int j = 0; j < g.out_width; j += kColumnBlock) {
          lanes::Dispatch<kColumnBlock>(std::min(kColumnBlock, g.out_width - j), [&]<int JB>() {
            auto tile = [&]<int K>() {
              conv_internal::ForwardTile<Scalar, CB, JB, K>(g.in_channels, g.kernel, patch, w + co * patch,
                                                            bias + co, x + i * s.in_row + j * L, s.in_plane,
                                                            s.in_row, z + co * s.out_plane + i * s.out_row + j * L,
                                                            s.out_plane);
            };
            // 5 × 5 (LeNet, AlexNet) and 3 × 3 (the VGG-style CIFAR networks) with the tap loop unrolled at
            // compile time; the runtime-k loop spilled accumulators around it (BENCHMARKS.md, the
            // 3 × 3 row). Same multiply-adds in the same order either way.
            if (g.kernel == 5) {
              tile.template operator()<5>();
            } else if (g.kernel == 3) {
              tile.template operator()<3>();
            } else {
              tile.template operator()<0>();
            }
          });
        }
      });
    });
  }
}

// G (num_params × L) = every example's gradient of this layer's weights and bias, from x and δ.
template <typename Scalar>
void ConvWeightGradients(const ConvGeometry& g, const Scalar* x, const Scalar* delta, Scalar* grads) {
  constexpr int L = Lanes<Scalar>::kCount;
  ASYNCDP_CHECK(g.out_height >= 1 && g.out_width >= 1);  // WeightGradTile's position loop is a do-while
  const ConvLanesShape<Scalar> s(g);
  const int64_t patch = g.patch_size();
  const int k = g.kernel;
  // Tiles of up to kChannelBlock channels × kTapBlock taps (consecutive kj of one (ci, ki)).
  auto run = [&]<int kChannelBlock, int kTapBlock>() {
    // Output rows in tiles of at most 64 KiB of a channel block's δ (L2-resident working sets on large
    // images; measured no slower than untiled on LeNet and AlexNet, faster than 8–16 KiB tiles); a tile
    // after the first adds to G, so each G entry still sums its positions in order (the same bits whatever
    // the blocks).
    constexpr int64_t kTileBytes = 65536;
    const int tile_rows = static_cast<int>(std::clamp<int64_t>(
        kTileBytes / (int64_t{kChannelBlock} * s.out_row * int64_t{sizeof(Scalar)}), 1, g.out_height));
    for (int i0 = 0; i0 < g.out_height; i0 += tile_rows) {
      const int rows = std::min(tile_rows, g.out_height - i0);
      ForEachBalancedBlock(g.out_channels, kChannelBlock, [&](int co, int cb) {
        lanes::Dispatch<kChannelBlock>(cb, [&]<int CB>() {
          const Scalar* d = delta + co * s.out_plane + i0 * s.out_row;
          for (int ci = 0; ci < g.in_channels; ++ci) {
            for (int ki = 0; ki < k; ++ki) {
              const Scalar* xr = x + ci * s.in_plane + (i0 + ki) * s.in_row;
              for (int kj = 0; kj < k; kj += kTapBlock) {
                const int64_t t = (int64_t{ci} * k + ki) * k + kj;
                lanes::Dispatch<kTapBlock>(std::min(kTapBlock, k - kj), [&]<int TB>() {
                  conv_internal::WeightGradTile<Scalar, CB, TB>(rows, g.out_width, d, s.out_plane,
                                                                xr + kj * L, s.in_row, patch, i0 > 0,
                                                                grads + (t + co * patch) * L);
                });
              }
            }
          }
        });
      });
    }
  };
  if constexpr (lanes::kFewRegisters) {
    // 16 registers: 2 channels × 5 taps = 10 accumulators (+ 5 inputs and a δ); for 3 × 3 kernels 4 × 3 =
    // 12 (+ 3 + 1). 2 × 3 left 6 accumulators, one FMA each per position: their 4-cycle chains, not the
    // two FMA ports, set the pace (AVX2 build, BM_CnnStage/cnn3x3: 54–58 GFLOP/s; BENCHMARKS.md).
    if (k == 3) {
      run.template operator()<4, 3>();
    } else {
      run.template operator()<2, 5>();
    }
  } else {
    // 32 registers: 4 channels × 5 taps = 20 accumulators (+ 5 inputs and a δ).
    run.template operator()<4, 5>();
  }
  // Bias: Σ over positions of δ.
  const int64_t positions = g.positions();
  Scalar* bias_grads = grads + patch * g.out_channels * L;
  for (int co = 0; co < g.out_channels; ++co) {
    const Scalar* d = delta + co * s.out_plane;
    auto sum0 = lanes::Zero<Scalar>(), sum1 = lanes::Zero<Scalar>();
    int64_t q = 0;
    for (; q + 2 <= positions; q += 2) {
      sum0 = lanes::Add(sum0, lanes::Load(d + q * L));
      sum1 = lanes::Add(sum1, lanes::Load(d + (q + 1) * L));
    }
    if (q < positions) sum0 = lanes::Add(sum0, lanes::Load(d + q * L));
    lanes::Store(bias_grads + co * L, lanes::Add(sum0, sum1));
  }
}

// dx (unpadded input gradient, overwritten) from δ.
template <typename Scalar>
void ConvInputGradient(const ConvGeometry& g, const Scalar* params, const Scalar* delta, Scalar* dx) {
  ASYNCDP_CHECK(g.out_channels >= 1);  // InputGradTile's c_out loop is a do-while
  const ConvLanesShape<Scalar> s(g);
  std::fill(dx, dx + g.input_size() * Lanes<Scalar>::kCount, Scalar{0});
  const Scalar* w = params + g.weight_offset;
  switch (g.kernel) {
    case 3:
      conv_internal::InputGradFixedKernel<Scalar, 3>(g, s, w, delta, dx);
      break;
    case 5:
      conv_internal::InputGradFixedKernel<Scalar, 5>(g, s, w, delta, dx);
      break;
    default:
      conv_internal::InputGradAnyKernel(g, s, w, delta, dx);
      break;
  }
}

}  // namespace asyncdp::models::cnn
