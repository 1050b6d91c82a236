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

#include "models/cnn/architecture.h"
#include "models/cnn/lanes.h"

namespace asyncdp::models::cnn {

// Strides (in Scalars) of the lanes tensors of one convolution.
template <typename Scalar>
struct ConvLanesShape {
  explicit ConvLanesShape(const ConvGeometry& g)
      : padded_height(g.in_height + 2 * g.padding),
        padded_width(g.in_width + 2 * g.padding),
        in_row(int64_t{padded_width} * kL),
        in_plane(int64_t{padded_height} * in_row),
        out_row(int64_t{g.out_width} * kL),
        out_plane(int64_t{g.out_height} * out_row) {}
  static constexpr int kL = Lanes<Scalar>::kCount;
  int padded_height;
  int padded_width;
  int64_t in_row;     // x: one padded row
  int64_t in_plane;   // x: one channel
  int64_t out_row;    // z, δ: one row
  int64_t out_plane;  // z, δ: one channel
};

// Splits n into ceil(n / max_block) blocks of nearly equal size (e.g. 6 = 3 + 3 for blocks of ≤ 4), so
// no block is a poorly filled remainder; calls body(first, size).
template <typename Body>
inline void ForEachBalancedBlock(int n, int max_block, Body&& body) {
  const int blocks = (n + max_block - 1) / max_block;
  int first = 0;
  for (int b = 0; b < blocks; ++b) {
    const int size = n / blocks + (b < n % blocks ? 1 : 0);
    body(first, size);
    first += size;
  }
}

namespace conv_internal {

// z(co0 .. co0 + CB, i, j0 .. j0 + JB): CB·JB accumulators; per tap CB broadcasts and JB loads. K > 0 is
// the kernel size known at compile time (the tap loop unrolled), K = 0 takes it from k.
template <typename Scalar, int CB, int JB, int K>
inline void ForwardTile(int in_channels, int k_runtime, int64_t patch, const Scalar* w, const Scalar* bias,
                        const Scalar* x, int64_t in_plane, int64_t in_row, Scalar* z, int64_t out_plane) {
  const int k = K > 0 ? K : k_runtime;
  using lanes::Broadcast, lanes::Fma, lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  lanes::Packet<Scalar> acc[CB][JB];
  for (int c = 0; c < CB; ++c) {
    const auto b = Broadcast(bias[c]);
    for (int j = 0; j < JB; ++j) acc[c][j] = b;
  }
  for (int ci = 0; ci < in_channels; ++ci) {
    for (int ki = 0; ki < k; ++ki) {
      const Scalar* xr = x + ci * in_plane + ki * in_row;
      const Scalar* wr = w + (ci * k + ki) * k;
      // Per tap: the JB input packets in registers, then one weight broadcast at a time (CB·JB + JB + 1
      // live registers; hoisting all CB broadcasts made GCC spill accumulators).
#pragma GCC unroll 8
      for (int kj = 0; kj < k; ++kj) {
        lanes::Packet<Scalar> xv[JB];
        for (int j = 0; j < JB; ++j) xv[j] = Load(xr + (kj + j) * L);
        for (int c = 0; c < CB; ++c) {
          const auto wv = Broadcast(wr[kj + c * patch]);
          for (int j = 0; j < JB; ++j) acc[c][j] = Fma(xv[j], wv, acc[c][j]);
        }
      }
    }
  }
  for (int c = 0; c < CB; ++c) {
    for (int j = 0; j < JB; ++j) Store(z + c * out_plane + j * L, acc[c][j]);
  }
}

// G for channels co0 .. co0 + CB and taps t0 .. t0 + TB (consecutive kj of one (ci, ki)), summed over
// `rows` output rows: CB·TB accumulators; per position CB loads of δ and TB of x. accumulate: add to G.
template <typename Scalar, int CB, int TB>
inline void WeightGradTile(int rows, int out_width, const Scalar* delta, int64_t out_plane, const Scalar* x,
                           int64_t in_row, int64_t patch, bool accumulate, Scalar* grad) {
  using lanes::Fma, lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  lanes::Packet<Scalar> acc[CB][TB];
  for (int c = 0; c < CB; ++c) {
    for (int t = 0; t < TB; ++t) acc[c][t] = accumulate ? Load(grad + (c * patch + t) * L) : lanes::Zero<Scalar>();
  }
  for (int i = 0; i < rows; ++i) {
    const Scalar* dr = delta + i * out_width * L;
    const Scalar* xr = x + i * in_row;
#pragma GCC unroll 2
    for (int j = 0; j < out_width; ++j) {
      lanes::Packet<Scalar> xv[TB];
      for (int t = 0; t < TB; ++t) xv[t] = Load(xr + (j + t) * L);
      for (int c = 0; c < CB; ++c) {
        const auto d = Load(dr + c * out_plane + j * L);
        for (int t = 0; t < TB; ++t) acc[c][t] = Fma(d, xv[t], acc[c][t]);
      }
    }
  }
  for (int c = 0; c < CB; ++c) {
    for (int t = 0; t < TB; ++t) Store(grad + (c * patch + t) * L, acc[c][t]);
  }
}

// One padded input row Y of channel ci, columns X in [j0, j0 + JB + K − 1), from the δ columns
// [j0, j0 + JB) of the output rows Y − ki: each loaded δ packet is scattered into K accumulators
// (acc[j + kj] += Wt · δ[j]), so no multiply-add touches an invalid (padding) δ. Adds the columns
// that are inside the unpadded input to dx_row (x = X − padding).
template <typename Scalar, int K, int JB>
inline void InputGradTile(int out_channels, int ki_begin, int ki_end, int row, const Scalar* delta,
                          int64_t out_plane, int64_t out_row, const Scalar* w, int64_t patch, int j0,
                          int padding, int in_width, Scalar* dx_row) {
  using lanes::Broadcast, lanes::Fma, lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  constexpr int kWidth = JB + K - 1;
  lanes::Packet<Scalar> acc[kWidth];
  for (int a = 0; a < kWidth; ++a) acc[a] = lanes::Zero<Scalar>();
  for (int co = 0; co < out_channels; ++co) {
    for (int ki = ki_begin; ki < ki_end; ++ki) {
      const Scalar* dr = delta + co * out_plane + (row - ki) * out_row + j0 * L;
      lanes::Packet<Scalar> d[JB];
      for (int j = 0; j < JB; ++j) d[j] = Load(dr + j * L);
      const Scalar* wr = w + co * patch + ki * K;
      for (int kj = 0; kj < K; ++kj) {
        const auto wv = Broadcast(wr[kj]);
        for (int j = 0; j < JB; ++j) acc[j + kj] = Fma(d[j], wv, acc[j + kj]);
      }
    }
  }
  for (int a = 0; a < kWidth; ++a) {
    const int x = j0 + a - padding;
    if (x >= 0 && x < in_width) Store(dx_row + x * L, lanes::Add(Load(dx_row + x * L), acc[a]));
  }
}

template <typename Scalar, int K>
void InputGradFixedKernel(const ConvGeometry& g, const ConvLanesShape<Scalar>& s, const Scalar* w,
                          const Scalar* delta, Scalar* dx) {
  constexpr int L = Lanes<Scalar>::kCount;
  constexpr int kColumns = 8;
  const int64_t patch = g.patch_size();
  const int64_t dx_plane = int64_t{g.in_height} * g.in_width * L;
  for (int ci = 0; ci < g.in_channels; ++ci) {
    for (int y = 0; y < g.in_height; ++y) {
      const int row = y + g.padding;  // padded row
      const int ki_begin = std::max(0, row - g.out_height + 1);
      const int ki_end = std::min(K, row + 1);
      if (ki_begin >= ki_end) continue;
      Scalar* dx_row = dx + ci * dx_plane + int64_t{y} * g.in_width * L;
      for (int j0 = 0; j0 < g.out_width; j0 += kColumns) {
        lanes::Dispatch<kColumns>(std::min(kColumns, g.out_width - j0), [&]<int JB>() {
          InputGradTile<Scalar, K, JB>(g.out_channels, ki_begin, ki_end, row, delta, s.out_plane, s.out_row,
                                       w + ci * K * K, patch, j0, g.padding, g.in_width, dx_row);
        });
      }
    }
  }
}

// Any kernel size: the same sums, accumulated in memory one packet at a time.
template <typename Scalar>
void InputGradAnyKernel(const ConvGeometry& g, const ConvLanesShape<Scalar>& s, const Scalar* w,
                        const Scalar* delta, Scalar* dx) {
  using lanes::Broadcast, lanes::Fma, lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  const int k = g.kernel;
  const int64_t patch = g.patch_size();
  for (int ci = 0; ci < g.in_channels; ++ci) {
    for (int co = 0; co < g.out_channels; ++co) {
      for (int ki = 0; ki < k; ++ki) {
        for (int kj = 0; kj < k; ++kj) {
          const auto wv = Broadcast(w[(ci * k + ki) * k + kj + co * patch]);
          for (int i = 0; i < g.out_height; ++i) {
            const int y = i + ki - g.padding;
            if (y < 0 || y >= g.in_height) continue;
            for (int j = 0; j < g.out_width; ++j) {
              const int x = j + kj - g.padding;
              if (x < 0 || x >= g.in_width) continue;
              Scalar* target = dx + ((int64_t{ci} * g.in_height + y) * g.in_width + x) * L;
              Store(target, Fma(Load(delta + co * s.out_plane + i * s.out_row + j * L), wv, Load(target)));
            }
          }
        }
      }
    }
  }
}

}  // namespace conv_internal

// z = conv(x) + b for the whole group.
template <typename Scalar>
void ConvForward(const ConvGeometry& g, const Scalar* params, const Scalar* x, Scalar* z) {
  constexpr int L = Lanes<Scalar>::kCount;
  constexpr int kChannelBlock = 6;
  constexpr int kColumnBlock = 4;
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
            if (g.kernel == 5) {
              tile.template operator()<5>();
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
  constexpr int kChannelBlock = 4;
  constexpr int kTapBlock = 5;
  const ConvLanesShape<Scalar> s(g);
  const int64_t patch = g.patch_size();
  const int k = g.kernel;
  // Output rows in tiles of at most 64 KiB of a channel block's δ (L2-resident working sets on large
  // images; measured no slower than untiled on LeNet and AlexNet, faster than 8–16 KiB tiles); a tile
  // after the first adds to G.
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
                conv_internal::WeightGradTile<Scalar, CB, TB>(rows, g.out_width, d, s.out_plane, xr + kj * L,
                                                              s.in_row, patch, i0 > 0,
                                                              grads + (t + co * patch) * L);
              });
            }
          }
        }
      });
    });
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
