// Register-blocked tiles of the lanes convolution kernels (conv_lanes.h): each keeps a block of outputs in
// registers (packets of L examples) and reads its inputs in place. Shapes and symbols as in conv_lanes.h.
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
  // A do-while: every convolution has at least one input channel (ConvForward checks). With a
  // zero-trip path GCC kept the accumulators' array on the stack where the paths join: 24 stores at the
  // start and 24 stores and loads at the end of every native 6 × 4 tile (objdump, AMD EPYC Zen 4): 72
  // stack operations beside the 600 FMAs of a LeNet conv1 tile (one input channel, 5 × 5 taps, 24 packets).
  int ci = 0;
  do {
    for (int ki = 0; ki < k; ++ki) {
      const Scalar* xr = x + ci * in_plane + ki * in_row;
      const Scalar* wr = w + (ci * k + ki) * k;
      // Per tap: the JB input packets in registers, then one weight broadcast at a time (CB·JB + JB + 1
      // live registers; hoisting all CB broadcasts made GCC spill accumulators).
      auto tap = [&](int kj) __attribute__((always_inline)) {
        lanes::Packet<Scalar> xv[JB];
        for (int j = 0; j < JB; ++j) xv[j] = Load(xr + (kj + j) * L);
        for (int c = 0; c < CB; ++c) {
          const auto wv = Broadcast(wr[kj + c * patch]);
          for (int j = 0; j < JB; ++j) acc[c][j] = Fma(xv[j], wv, acc[c][j]);
        }
      };
      if constexpr (lanes::kFewRegisters) {
        // Asks for one tap at a time (unrolled, the 3 × 4 tile's taps interleaved and spilled accumulators to
        // the stack; perf, AMD EPYC Zen 3). GCC 12 still lays K = 5's taps out in line, but the 4 × 3 tile
        // then fits the 16 registers without a spill.
#pragma GCC unroll 1
        for (int kj = 0; kj < k; ++kj) tap(kj);
      } else {
#pragma GCC unroll 8
        for (int kj = 0; kj < k; ++kj) tap(kj);
      }
    }
  } while (++ci < in_channels);
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
  // G itself, or a packet of zeros read at stride 0: one path, no branch. With `accumulate ? Load : Zero`
  // (or an if around two loops) GCC joined the two paths through a copy of the accumulators on the stack,
  // 20 stores and 20 loads per tile (objdump, AMD EPYC Zen 4). +0.0 either way, as Zero() gives.
  alignas(64) static constexpr Scalar kZeros[L] = {};
  const Scalar* init = accumulate ? grad : kZeros;
  const int64_t init_tap = accumulate ? L : 0;
  const int64_t init_channel = accumulate ? patch * L : 0;
  for (int c = 0; c < CB; ++c) {
    for (int t = 0; t < TB; ++t) acc[c][t] = Load(init + c * init_channel + t * init_tap);
  }
  // One position: its TB x packets (from xp) times each of the CB δ packets (from dp, a plane apart).
  // Pinned: each position's x packets are loaded afresh into registers (lanes::LoadToRegister), TB + CB
  // loads per CB·TB FMAs. With more than 16 accumulators (32 registers: 4 × 5 + 5 x + 1 δ = 26) GCC
  // otherwise folded each x packet into the CB FMAs that use it, 24 loads per 20 FMAs, and the tile ran at
  // the rate of the loads (one 512-bit load a cycle on Zen 4; perf annotate, BENCHMARKS.md). On 16
  // registers (2 × 5 + 5 x + 1 δ = 16) the sliding window below needed 17 and spilled a packet at every
  // position. The FMAs and their order are the same on every path, so are the bits.
  constexpr bool kPinned = CB * TB > 16 || lanes::kFewRegisters;
  auto position = [&](const Scalar* xp, const Scalar* dp) __attribute__((always_inline)) {
    lanes::Packet<Scalar> xv[TB];
    for (int t = 0; t < TB; ++t) {
      if constexpr (kPinned) {
        xv[t] = lanes::LoadToRegister(xp + t * L);
      } else {
        xv[t] = Load(xp + t * L);
      }
    }
    for (int c = 0; c < CB; ++c) {
      const auto d = Load(dp + c * out_plane);
      for (int t = 0; t < TB; ++t) acc[c][t] = Fma(d, xv[t], acc[c][t]);
    }
  };
  if constexpr (!kPinned) {
    // A loop per row: consecutive positions share TB − 1 of their x packets, which GCC keeps in registers
    // (a sliding window: one x load per position). Kept as for loops unrolled by 2: do-whiles here removed
    // the accumulators' stores and loads at each row's end (objdump) but made the 4 × 3 tiles of the 3 × 3
    // kernels 10–13% slower (BM_CnnStage/cnn3x3 weight gradients, AMD EPYC Zen 4, three alternations).
    for (int i = 0; i < rows; ++i) {
      const Scalar* dr = delta + i * out_width * L;
      const Scalar* xr = x + i * in_row;
#pragma GCC unroll 2
      for (int j = 0; j < out_width; ++j) position(xr + j * L, dr + j * L);
    }
  } else {
    // One loop over the positions (δ's rows are contiguous; x jumps to its next row after out_width): with
    // more accumulators, a loop per row made GCC spill and reload 15 of 20 of them at every row's end
    // (perf, Intel Xeon). Both visit the positions in the same order, so the sums are the same bits.
    const Scalar* dr = delta;
    const Scalar* xr = x;
    const int64_t next_row = in_row - int64_t{out_width} * L;
    const int positions = rows * out_width;
    int j = 0;
    int p = 0;
    do {  // positions >= 1 (ConvWeightGradients checks): no zero-trip path (see ForwardTile)
      position(xr, dr);
      dr += L;
      xr += L;
      if (++j == out_width) {
        j = 0;
        xr += next_row;
      }
    } while (++p < positions);
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
  // out_channels >= 1 (ConvInputGradient checks) and ki_begin < ki_end (InputGradFixedKernel skips empty
  // rows): do-whiles, since the loops' zero-trip paths made GCC store and reload the accumulators around
  // every c_out (see ForwardTile).
  int co = 0;
  do {
    int ki = ki_begin;
    do {
      const Scalar* dr = delta + co * out_plane + (row - ki) * out_row + j0 * L;
      const Scalar* wr = w + co * patch + ki * K;
      if constexpr (lanes::kFewRegisters) {
        // 16 registers: the δ packets are read where the FMAs use them (memory operands), so the tile needs
        // JB + K − 1 accumulators and one broadcast, and JB can be as wide as hides the FMA latency: a middle
        // accumulator takes K dependent FMAs per (co, ki), 4K cycles, which JB·K FMAs fill only for JB ≥ 8
        // (with δ in registers, 5 columns fit and the tile waited on that chain; see InputGradFixedKernel).
        // Each tap reads δ through lanes::Opaque, so GCC reads it again (a memory operand of each FMA)
        // instead of keeping JB packets in registers beside the accumulators (and spilling). A memory clobber
        // did the same but kept the accumulators themselves in memory: a load and a store around each of the
        // tile's FMAs (objdump, the AVX2 build).
#pragma GCC unroll 8
        for (int kj = 0; kj < K; ++kj) {
          const auto wv = Broadcast(wr[kj]);
          const Scalar* dk = lanes::Opaque(dr);
#pragma GCC unroll 16
          for (int j = 0; j < JB; ++j) acc[j + kj] = Fma(Load(dk + j * L), wv, acc[j + kj]);
        }
      } else {
        // Each δ packet feeds K FMAs: pinned to a register (lanes::LoadToRegister), or GCC folds it into
        // all of them as a memory operand (K = 3: 24 loads per 24 FMAs instead of 8 + 3 broadcasts).
        lanes::Packet<Scalar> d[JB];
        for (int j = 0; j < JB; ++j) d[j] = lanes::LoadToRegister(dr + j * L);
        for (int kj = 0; kj < K; ++kj) {
          const auto wv = Broadcast(wr[kj]);
          for (int j = 0; j < JB; ++j) acc[j + kj] = Fma(d[j], wv, acc[j + kj]);
        }
      }
    } while (++ki < ki_end);
  } while (++co < out_channels);
  for (int a = 0; a < kWidth; ++a) {
    const int x = j0 + a - padding;
    if (x >= 0 && x < in_width) Store(dx_row + x * L, lanes::Add(Load(dx_row + x * L), acc[a]));
  }
}

template <typename Scalar, int K>
void InputGradFixedKernel(const ConvGeometry& g, const ConvLanesShape<Scalar>& s, const Scalar* w,
                          const Scalar* delta, Scalar* dx) {
  constexpr int L = Lanes<Scalar>::kCount;
  // 32 registers: JB + K − 1 accumulators, JB δ packets and a broadcast, 8 columns (12 + 8 + 1 for K = 5).
  // 16: δ from memory (InputGradTile), so JB + K − 1 accumulators and a broadcast with one register to
  // spare: 15 − K columns (10 for K = 5, 12 for K = 3), split evenly over a row (16 = 8 + 8, not 10 + 6:
  // a tile narrower than 8 columns waits on its FMA chain as long as a full one).
  constexpr int kColumns = lanes::kFewRegisters ? 15 - K : 8;
  const int64_t patch = g.patch_size();
  const int64_t dx_plane = int64_t{g.in_height} * g.in_width * L;
  for (int ci = 0; ci < g.in_channels; ++ci) {
    for (int y = 0; y < g.in_height; ++y) {
      const int row = y + g.padding;  // padded row
      const int ki_begin = std::max(0, row - g.out_height + 1);
      const int ki_end = std::min(K, row + 1);
      if (ki_begin >= ki_end) continue;
      Scalar* dx_row = dx + ci * dx_plane + int64_t{y} * g.in_width * L;
      auto tile = [&](int j0, int columns) {
        lanes::Dispatch<kColumns>(columns, [&]<int JB>() {
          InputGradTile<Scalar, K, JB>(g.out_channels, ki_begin, ki_end, row, delta, s.out_plane, s.out_row,
                                       w + ci * K * K, patch, j0, g.padding, g.in_width, dx_row);
        });
      };
      if constexpr (lanes::kFewRegisters) {
        ForEachBalancedBlock(g.out_width, kColumns, tile);
      } else {
        // Blocks of 8 from the left, as before: where a tile ends decides how a column's sum is split (the
        // bits), and the 32-register path's bits are kept.
        for (int j0 = 0; j0 < g.out_width; j0 += kColumns) tile(j0, std::min(kColumns, g.out_width - j0));
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

}  // namespace asyncdp::models::cnn
