// A dense (fully connected) layer for a group of L examples in the lanes layout (lanes.h):
//   input A [in][L], output Z and its gradient δ [out][L], W out × in column-major (W(o, f) = w[o + f·out]).
// Example r's weight gradient δ_r a_rᵀ is rank one, so its squared norm is ||δ_r||²·||a_r||² (the "ghost
// norm"): per-example norms cost O((in + out)·L) — vertical sums in this layout — and the clipped sum
// Σ_r c_r δ_r a_rᵀ is one product of depth L.
#pragma once

#include <algorithm>
#include <cstdint>

#include "models/cnn/architecture.h"
#include "models/cnn/lanes.h"

namespace asyncdp::models::cnn {
namespace dense_internal {

// out[b] = init[b] + Σ_d vec[d] · s[d·sd + b·sb] for b < NB, vec[d] the packet at vec + d·L (init may be
// null: 0). NB accumulators; per step one load and NB broadcasts. kUnitB (sb = 1, the forward product)
// addresses the NB scalars from one pointer; otherwise one pointer serves three outputs through the
// addressing mode. With one pointer per output GCC spilled 13 of 24 and reloaded them on every step (perf
// on an Intel Xeon: 38 loads per 24 multiply-adds).
// resume: out holds the sums over the depth before this call (a depth block after the first, see
// BroadcastProduct), and the accumulators start from them instead of init.
template <typename Scalar, int NB, bool kUnitB>
inline void BroadcastTile(int64_t depth, const Scalar* vec, const Scalar* s, int64_t sd, int64_t sb,
                          const Scalar* init, bool resume, Scalar* out) {
  using lanes::Broadcast, lanes::Fma, lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  lanes::Packet<Scalar> acc[NB];
  // Complete unrolling (GCC's default stops at 16 iterations) keeps the accumulators in registers.
#pragma GCC unroll 32
  for (int b = 0; b < NB; ++b) {
    acc[b] = resume ? Load(out + b * L) : init == nullptr ? lanes::Zero<Scalar>() : Broadcast(init[b]);
  }
  if constexpr (kUnitB) {
    for (int64_t d = 0; d < depth; ++d) {
      const auto v = Load(vec + d * L);
      const Scalar* sr = s + d * sd;
#pragma GCC unroll 32
      for (int b = 0; b < NB; ++b) acc[b] = Fma(v, Broadcast(sr[b]), acc[b]);
    }
  } else {
    // Scalar b of a step is at base[b / 3] + (b mod 3)·sb: one pointer per three outputs, the others
    // reached by the addressing mode (index sb scaled by 4 or 8 bytes), so the pointers fit in registers.
    constexpr int kBases = (NB + 2) / 3;
    const Scalar* base[kBases];
    for (int k = 0; k < kBases; ++k) base[k] = s + 3 * k * sb;
    for (int64_t d = 0; d < depth; ++d) {
      const auto v = Load(vec + d * L);
#pragma GCC unroll 32
      for (int b = 0; b < NB; ++b) {
        acc[b] = Fma(v, Broadcast(base[b / 3][(b % 3) * sb]), acc[b]);
      }
#pragma GCC unroll 32
      for (int k = 0; k < kBases; ++k) base[k] += sd;
    }
  }
#pragma GCC unroll 32
  for (int b = 0; b < NB; ++b) Store(out + b * L, acc[b]);
}

// The forward product (sb = 1) reads W's columns d = 0, 1, ... for one tile of outputs at a time: with W
// larger than the caches (AlexNet's 4096 × 384, 6.3 MB) each step lands on another page, and every tile
// walks all of W's pages again (1,536 pages of 4 KiB per tile; an AVX2 build on an AMD EPYC Zen 4 ran it at
// 35-55 GFLOP/s against 75 for the input gradient, which reads W down its columns: BENCHMARKS.md, "AMD EPYC
// Zen 4"). So the depth is cut into blocks of about kDepthBlockBytes of W, and every tile runs over one
// block before the next: a block's pages and lines stay in the TLB and L2 for all of its tiles. Each
// accumulator is stored after a block and reloaded for the next (exactly), so every output's multiply-adds
// run in the same order as in one pass, and the bits are the same.
inline constexpr int64_t kDepthBlockBytes = int64_t{128} << 10;

template <typename Scalar>
void BroadcastProduct(int64_t n, int64_t depth, const Scalar* vec, const Scalar* s, int64_t sd, int64_t sb,
                      const Scalar* init, Scalar* out) {
  constexpr int L = Lanes<Scalar>::kCount;
  auto blocks = [&]<int kBlock, bool kUnitB>(int64_t d0, int64_t dn) {
    for (int64_t b = 0; b < n; b += kBlock) {
      lanes::Dispatch<kBlock>(static_cast<int>(std::min<int64_t>(kBlock, n - b)), [&]<int NB>() {
        BroadcastTile<Scalar, NB, kUnitB>(dn, vec + d0 * L, s + d0 * sd + b * sb, sd, sb,
                                          init == nullptr ? nullptr : init + b, /*resume=*/d0 > 0, out + b * L);
      });
    }
  };
  // Each output's multiply-adds run in the same order whatever the block, so both give the same bits.
  if (sb == 1) {
    // A matrix of at most two blocks (LeNet's largest, 400 × 120 floats, is 188 KiB: 47 pages, within the
    // first-level TLB) runs in one pass.
    const int64_t column_bytes = std::max<int64_t>(1, sd) * static_cast<int64_t>(sizeof(Scalar));
    const int64_t block = depth * column_bytes <= 2 * kDepthBlockBytes
                              ? std::max<int64_t>(1, depth)
                              : std::max<int64_t>(1, kDepthBlockBytes / column_bytes);
    int64_t d0 = 0;
    do {  // at least once: a depth of 0 still writes init
      const int64_t dn = std::min(block, depth - d0);
      blocks.template operator()<lanes::kFewRegisters ? 12 : 24, true>(d0, dn);
      d0 += dn;
    } while (d0 < depth);
  } else {
    blocks.template operator()<12, false>(0, depth);
  }
}

// gw[o + f·out] (+)= Σ_l dt[l·ld + o] · a[f·L + l] for o in [o0, o0 + OV·L) ∩ [0, out), f in [f0, f0 + FB):
// OV packets of outputs × FB inputs in registers, depth L.
template <typename Scalar, int OV, int FB>
inline void OuterTile(const Scalar* dt, int64_t ld, const Scalar* a, int64_t out, int64_t valid_rows,
                      bool accumulate, Scalar* gw) {
  using lanes::Broadcast, lanes::Fma, lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  lanes::Packet<Scalar> acc[OV][FB];
  for (int v = 0; v < OV; ++v) {
    for (int f = 0; f < FB; ++f) acc[v][f] = lanes::Zero<Scalar>();
  }
  for (int l = 0; l < L; ++l) {
    lanes::Packet<Scalar> dv[OV];
    for (int v = 0; v < OV; ++v) dv[v] = Load(dt + l * ld + v * L);
    for (int f = 0; f < FB; ++f) {
      const auto av = Broadcast(a[f * L + l]);
      for (int v = 0; v < OV; ++v) acc[v][f] = Fma(dv[v], av, acc[v][f]);
    }
  }
  for (int v = 0; v < OV; ++v) {
    const int n = static_cast<int>(std::min<int64_t>(L, valid_rows - v * L));
    for (int f = 0; f < FB; ++f) {
      Scalar* dst = gw + v * L + f * out;
      if (n == L) {
        Store(dst, accumulate ? lanes::Add(Load(dst), acc[v][f]) : acc[v][f]);
      } else {
        lanes::StorePartial(dst, accumulate ? lanes::Add(lanes::LoadPartial(dst, n), acc[v][f]) : acc[v][f], n);
      }
    }
  }
}

}  // namespace dense_internal

// Z = W · A + b 1ᵀ.
template <typename Scalar>
void DenseForward(const DenseGeometry& g, const Scalar* params, const Scalar* in, Scalar* out) {
  dense_internal::BroadcastProduct<Scalar>(g.out_features, g.in_features, in, params + g.weight_offset,
                                           /*sd=*/g.out_features, /*sb=*/1, params + g.bias_offset, out);
}

// dA = Wᵀ · δ.
template <typename Scalar>
void DenseInputGradient(const DenseGeometry& g, const Scalar* params, const Scalar* out_grad, Scalar* in_grad) {
  dense_internal::BroadcastProduct<Scalar>(g.in_features, g.out_features, out_grad, params + g.weight_offset,
                                           /*sd=*/1, /*sb=*/g.out_features, nullptr, in_grad);
}

// sq_norms[r] += ||δ_r a_rᵀ||² + ||δ_r||² = ||δ_r||²·(||a_r||² + 1) for every lane r.
template <typename Scalar>
void DenseAddExampleSqNorms(const DenseGeometry& g, const Scalar* in, const Scalar* out_grad, double* sq_norms) {
  using lanes::Fma, lanes::Load;
  constexpr int L = Lanes<Scalar>::kCount;
  auto delta_sq = lanes::Zero<Scalar>(), in_sq = lanes::Zero<Scalar>();
  for (int o = 0; o < g.out_features; ++o) {
    const auto d = Load(out_grad + o * L);
    delta_sq = Fma(d, d, delta_sq);
  }
  for (int f = 0; f < g.in_features; ++f) {
    const auto a = Load(in + f * L);
    in_sq = Fma(a, a, in_sq);
  }
  Scalar d2[L], a2[L];
  lanes::Store(d2, delta_sq);
  lanes::Store(a2, in_sq);
  for (int r = 0; r < L; ++r) sq_norms[r] += static_cast<double>(d2[r]) * (static_cast<double>(a2[r]) + 1.0);
}

// grad (this layer's slice of the flat gradient) = (accumulate ? grad : 0) + Σ_r c_r ∇_r, i.e.
// [δ diag(c) Aᵀ, δ c]. Scales δ's lanes by c in place; scratch holds L × round_up(out, L) Scalars.
template <typename Scalar>
void DenseClippedSum(const DenseGeometry& g, const Scalar* in, const Scalar* factors, Scalar* out_grad,
                     Scalar* scratch, bool accumulate, Scalar* grad) {
  using lanes::Load, lanes::Store;
  constexpr int L = Lanes<Scalar>::kCount;
  const int64_t out = g.out_features;
  const int64_t ld = (out + L - 1) / L * L;
  const auto c = Load(factors);
  Scalar* bias_grad = grad + g.bias_offset;
  int64_t o = 0;
  // L outputs at a time: their bias sums by one transposing reduction and their transpose into scratch by
  // one L × L packet transpose (the same values as the one-at-a-time loop below, which does the rest).
  for (; o + L <= out; o += L) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored \
    "-Wignored-attributes"  // __m512's alignment attribute in the template argument
    Eigen::internal::PacketBlock<lanes::Packet<Scalar>, L> block;
#pragma GCC diagnostic pop
    for (int q = 0; q < L; ++q) {
      block.packet[q] = lanes::Mul(Load(out_grad + (o + q) * L), c);
      Store(out_grad + (o + q) * L, block.packet[q]);
    }
    Scalar sums[L];
    lanes::HorizontalSums<Scalar>(block.packet, sums);
    for (int q = 0; q < L; ++q) bias_grad[o + q] = accumulate ? bias_grad[o + q] + sums[q] : sums[q];
    Eigen::internal::ptranspose(block);
    for (int l = 0; l < L; ++l) Store(scratch + l * ld + o, block.packet[l]);  // transpose: [l][o]
  }
  for (; o < out; ++o) {
    const auto scaled = lanes::Mul(Load(out_grad + o * L), c);
    Store(out_grad + o * L, scaled);
    const Scalar sum = lanes::HorizontalSum<Scalar>(scaled);
    bias_grad[o] = accumulate ? bias_grad[o] + sum : sum;
    for (int l = 0; l < L; ++l) scratch[l * ld + o] = out_grad[o * L + l];  // transpose: [l][o]
  }
  for (int l = 0; l < L; ++l) std::fill(scratch + l * ld + out, scratch + (l + 1) * ld, Scalar{0});
  // OV × FB accumulators plus OV δ packets: 4 × 6 (+ 4) with 32 registers, 2 × 6 (+ 2) with 16.
  constexpr int kVectors = lanes::kFewRegisters ? 2 : 4;
  constexpr int kInputs = 6;
  Scalar* weight_grad = grad + g.weight_offset;
  // Inputs outer, outputs inner: the tiles of FB inputs read and write FB whole columns of the weight
  // gradient in turn, one contiguous stretch of memory (outputs outer walked every column, 1,536 B apart for
  // AlexNet's 384 outputs, once per tile of outputs: the forward product's page walk, BroadcastProduct).
  // Each tile's sums are its own, so the order of the tiles changes no bit.
  for (int64_t f = 0; f < g.in_features; f += kInputs) {
    lanes::Dispatch<kInputs>(static_cast<int>(std::min<int64_t>(kInputs, g.in_features - f)), [&]<int FB>() {
      for (int64_t o = 0; o < out; o += kVectors * L) {
        const int vectors = static_cast<int>(std::min<int64_t>(kVectors, (out - o + L - 1) / L));
        lanes::Dispatch<kVectors>(vectors, [&]<int OV>() {
          dense_internal::OuterTile<Scalar, OV, FB>(scratch + o, ld, in + f * L, out, out - o, accumulate,
                                                    weight_grad + o + f * out);
        });
      }
    });
  }
}

}  // namespace asyncdp::models::cnn
