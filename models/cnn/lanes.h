// The "lanes" layout of the CNN kernels: a group of L examples (L = the SIMD width in Scalars: 16 floats
// or 8 doubles with AVX-512, 8 / 4 with AVX2) is processed together, example r in lane r of every vector.
// A tensor of C channels of H × W is stored [C][H][W][L]: each (channel, row, column) is one packet whose
// lanes are the examples.
//
// Why: per-example gradients are then vertical. Example r's weight gradient of a convolution is
// Σ_positions δ_r ⊗ x_r, and with examples in lanes that sum is an ordinary packet fused multiply-add —
// L per-example gradients at the price of one batched one, with no horizontal sums, no im2col copies and
// no packing (the convolutions read their inputs in place, models/cnn/conv_lanes.h). Every kernel is a
// register-blocked loop of packet loads, broadcasts and FMAs on Eigen's packet primitives, so it runs on
// whatever SIMD Eigen targets.
#pragma once

#include <Eigen/Core>

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace asyncdp::models::cnn {

template <typename Scalar>
using VectorX = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

template <typename Scalar>
struct Lanes {
  using Packet = typename Eigen::internal::packet_traits<Scalar>::type;
  static constexpr int kCount = Eigen::internal::unpacket_traits<Packet>::size;  // L
};

namespace lanes {

template <typename Scalar>
using Packet = typename Lanes<Scalar>::Packet;

// The vector registers the kernels' register tiles are sized for: 32 with AVX-512, 16 with AVX2 (and SSE).
// A tile of accumulators plus the operands of one step must fit, or GCC spills accumulators to the stack on
// every step: the AVX-512 tiles (24 accumulators) built for AVX2 reached 53-62% of the GEMM roofline on an
// Intel Xeon (BENCHMARKS.md), so each kernel picks its tile from this.
#ifdef EIGEN_VECTORIZE_AVX512
inline constexpr int kVectorRegisters = 32;
#else
inline constexpr int kVectorRegisters = 16;
#endif
inline constexpr bool kFewRegisters = kVectorRegisters < 32;

template <typename Scalar>
inline Packet<Scalar> Load(const Scalar* p) {
  return Eigen::internal::ploadu<Packet<Scalar>>(p);
}
// Load into a register the compiler must keep: an empty asm that takes and gives back the packet in a vector
// register, so GCC cannot fold the load into each multiply-add that uses it as a memory operand. A packet
// used by several FMAs is then read once, not once per FMA (the weight-gradient tile: 24 loads per 20 FMAs
// folded, 9 kept; conv_tiles.h). Only where the tile has registers to spare for it.
template <typename Scalar>
inline Packet<Scalar> LoadToRegister(const Scalar* p) {
  Packet<Scalar> v = Load(p);
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm("" : "+v"(v));
#endif
  return v;
}

// The same pointer, through an asm GCC cannot see into or merge with another (volatile): loads through it
// are new loads, neither merged with nor hoisted beside those through `p` elsewhere, and no memory is
// clobbered. The 16-register input-gradient tile reads each δ packet through one per tap, so each is a
// memory operand of one FMA (conv_tiles.h). A memory clobber did that too, but made GCC keep the tile's
// accumulators in memory, a load and a store around every FMA (objdump, AVX2 build).
template <typename T>
inline T* Opaque(T* p) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  asm volatile("" : "+r"(p));
#endif
  return p;
}

template <typename Scalar>
inline void Store(Scalar* p, const Packet<Scalar>& v) {
  Eigen::internal::pstoreu(p, v);
}
template <typename Scalar>
inline Packet<Scalar> Broadcast(Scalar v) {
  return Eigen::internal::pset1<Packet<Scalar>>(v);
}
template <typename Scalar>
inline Packet<Scalar> Zero() {
  return Eigen::internal::pset1<Packet<Scalar>>(Scalar{0});
}
// a · b + c, fused where the hardware has FMA.
template <typename Packet>
inline Packet Fma(const Packet& a, const Packet& b, const Packet& c) {
  return Eigen::internal::pmadd(a, b, c);
}
template <typename Packet>
inline Packet Add(const Packet& a, const Packet& b) {
  return Eigen::internal::padd(a, b);
}
template <typename Packet>
inline Packet Mul(const Packet& a, const Packet& b) {
  return Eigen::internal::pmul(a, b);
}

// Lane-wise comparisons and selections (pooling's winners). With AVX-512 floats a comparison yields a mask
// register and a selection is one blend; Eigen's pcmp_*/pselect pair instead widens the mask into a packet
// and compares it with zero again (two more instructions per selection, measured in PoolBackward on an
// Intel Xeon). Selections are exact, so both give the same bits.
#ifdef EIGEN_VECTORIZE_AVX512
template <typename Scalar>
inline constexpr bool kMaskRegisters = std::is_same_v<Scalar, float>;
#else
template <typename Scalar>
inline constexpr bool kMaskRegisters = false;
#endif
template <typename Scalar, bool kRegisters = kMaskRegisters<Scalar>>
struct MaskOps {  // Eigen's packet comparisons (any SIMD)
  using Mask = Packet<Scalar>;
  static Mask Less(const Packet<Scalar>& a, const Packet<Scalar>& b) {
    return Eigen::internal::pcmp_lt(a, b);
  }
  static Mask Equal(const Packet<Scalar>& a, const Packet<Scalar>& b) {
    return Eigen::internal::pcmp_eq(a, b);
  }
  static Packet<Scalar> Select(const Mask& m, const Packet<Scalar>& a, const Packet<Scalar>& b) {
    return Eigen::internal::pselect(m, a, b);
  }
};
#ifdef EIGEN_VECTORIZE_AVX512
template <>
struct MaskOps<float, true> {  // AVX-512 mask registers
  using Mask = __mmask16;
  static Mask Less(const Packet<float>& a, const Packet<float>& b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
  }
  static Mask Equal(const Packet<float>& a, const Packet<float>& b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ);
  }
  static Packet<float> Select(Mask m, const Packet<float>& a, const Packet<float>& b) {
    return _mm512_mask_blend_ps(m, b, a);
  }
};
#endif
template <typename Scalar>
using Mask = typename MaskOps<Scalar>::Mask;
// a < b lane by lane (false for NaN), a == b, and mask ? a : b.
template <typename Scalar>
inline Mask<Scalar> Less(const Packet<Scalar>& a, const Packet<Scalar>& b) {
  return MaskOps<Scalar>::Less(a, b);
}
template <typename Scalar>
inline Mask<Scalar> Equal(const Packet<Scalar>& a, const Packet<Scalar>& b) {
  return MaskOps<Scalar>::Equal(a, b);
}
template <typename Scalar>
inline Packet<Scalar> Select(const Mask<Scalar>& mask, const Packet<Scalar>& a, const Packet<Scalar>& b) {
  return MaskOps<Scalar>::Select(mask, a, b);
}

// Σ of a packet's lanes. Eigen's predux for AVX-512 doubles trips a false -Wuninitialized inside GCC 12's
// intrinsic headers (_mm256_undefined_pd), so doubles (the reference path) sum through memory.
template <typename Scalar>
inline Scalar HorizontalSum(const Packet<Scalar>& packet) {
  if constexpr (std::is_same_v<Scalar, float>) {
    return Eigen::internal::predux(packet);
  } else {
    Scalar lane[Lanes<Scalar>::kCount];
    Store(lane, packet);
    Scalar sum{0};
    for (Scalar v : lane) sum += v;
    return sum;
  }
}

#if defined(EIGEN_VECTORIZE_AVX512) && defined(EIGEN_VECTORIZE_AVX512DQ)
// The shuffles below are the merge-masked intrinsics with every lane selected — the same instruction as the
// plain ones, whose GCC 12 definitions pass _mm512_undefined_ps() as the merge source and so trip
// -Wuninitialized (an error under CI's -Werror) once inlined.
inline constexpr __mmask16 kAllLanes = 0xFFFF;
template <int kImm>
inline __m512 ShuffleQuarters(__m512 a, __m512 b) {  // 128-bit quarters: two of a, then two of b
  return _mm512_mask_shuffle_f32x4(a, kAllLanes, a, b, kImm);
}
template <int kImm>
inline __m512 ShufflePairs(__m512 a, __m512 b) {  // within each quarter: two lanes of a, then two of b
  return _mm512_mask_shuffle_ps(a, kAllLanes, a, b, kImm);
}
#endif

// out[p] = HorizontalSum(v[p]) for p < L, bit for bit. With AVX-512DQ floats the 16 sums are one
// transposing reduction (15 shuffles and adds per level pair, instead of 16 separate reductions); its
// additions pair the lanes exactly as Eigen's predux<Packet16f> does — lane i with i + 8, then i + 4, i + 2,
// i + 1 — so each sum is the same float (checked against predux on random packets in the models tests).
template <typename Scalar>
inline void HorizontalSums(const Packet<Scalar>* v, Scalar* out) {
#if defined(EIGEN_VECTORIZE_AVX512) && defined(EIGEN_VECTORIZE_AVX512DQ)
  if constexpr (std::is_same_v<Scalar, float>) {
    __m512 w[8];  // w[k]: lanes 0-7 hold v[2k]'s sums over i, i + 8; lanes 8-15 v[2k + 1]'s
    for (int k = 0; k < 8; ++k) {
      w[k] = _mm512_add_ps(ShuffleQuarters<_MM_SHUFFLE(1, 0, 1, 0)>(v[2 * k], v[2 * k + 1]),
                           ShuffleQuarters<_MM_SHUFFLE(3, 2, 3, 2)>(v[2 * k], v[2 * k + 1]));
    }
    __m512 y[4];  // y[m]: 128-bit quarter q holds v[4m + q]'s sums over i, i + 4
    for (int m = 0; m < 4; ++m) {
      y[m] = _mm512_add_ps(ShuffleQuarters<_MM_SHUFFLE(2, 0, 2, 0)>(w[2 * m], w[2 * m + 1]),
                           ShuffleQuarters<_MM_SHUFFLE(3, 1, 3, 1)>(w[2 * m], w[2 * m + 1]));
    }
    __m512 z[2];  // then i + 2 within each quarter
    for (int n = 0; n < 2; ++n) {
      z[n] = _mm512_add_ps(ShufflePairs<_MM_SHUFFLE(1, 0, 1, 0)>(y[2 * n], y[2 * n + 1]),
                           ShufflePairs<_MM_SHUFFLE(3, 2, 3, 2)>(y[2 * n], y[2 * n + 1]));
    }
    // then i + 1; lane i now holds the sum of v[4·(i mod 4) + i / 4], a 4 × 4 transpose put right by
    // one permutation (its own inverse).
    const __m512 sums = _mm512_add_ps(ShufflePairs<_MM_SHUFFLE(2, 0, 2, 0)>(z[0], z[1]),
                                      ShufflePairs<_MM_SHUFFLE(3, 1, 3, 1)>(z[0], z[1]));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm512_storeu_ps(out, _mm512_mask_permutexvar_ps(sums, kAllLanes, order, sums));
    return;
  }
#endif
  for (int p = 0; p < Lanes<Scalar>::kCount; ++p) out[p] = HorizontalSum<Scalar>(v[p]);
}

// The first n (< L) scalars at p as a packet (the other lanes 0), and the first n lanes of v stored to p.
template <typename Scalar>
inline Packet<Scalar> LoadPartial(const Scalar* p, int n) {
#ifdef EIGEN_VECTORIZE_AVX512
  if constexpr (std::is_same_v<Scalar, float>) {  // a masked load: no copy, no read past p + n
    return Eigen::internal::ploadu<Packet<float>>(p, static_cast<uint16_t>((1u << n) - 1));
  }
#endif
  Scalar buffer[Lanes<Scalar>::kCount] = {};
  std::memcpy(buffer, p, sizeof(Scalar) * n);
  return Load(buffer);
}
template <typename Scalar>
inline void StorePartial(Scalar* p, const Packet<Scalar>& v, int n) {
  // AVX-512: a masked store. The copy through the stack and the variable-length memcpy below were 8–9% of
  // the samples of LeNet's dense clipped sums (rep movsq, memmove; perf, Intel Xeon family 6 model 207), and
  // the stage ran 15% faster without them (BENCHMARKS.md). AVX builds keep the copy: vmaskmovps measured
  // no faster there.
#ifdef EIGEN_VECTORIZE_AVX512
  if constexpr (std::is_same_v<Scalar, float>) {
    Eigen::internal::pstoreu<float>(p, v, static_cast<uint16_t>((1u << n) - 1));
    return;
  }
#endif
  Scalar buffer[Lanes<Scalar>::kCount];
  Store(buffer, v);
  std::memcpy(p, buffer, sizeof(Scalar) * n);
}

// Calls f.template operator()<N>() with the compile-time N = n, for n in 1 .. kMax: the register-blocked
// kernels are templates on their block sizes, and the remainder blocks of a loop pick theirs at run time.
template <int kMax, typename F, int... I>
inline void DispatchImpl(int n, F&& f, std::integer_sequence<int, I...>) {
  static_cast<void>(((n == I + 1 ? (f.template operator()<I + 1>(), true) : false) || ...));
}
template <int kMax, typename F>
inline void Dispatch(int n, F&& f) {
  DispatchImpl<kMax>(n, std::forward<F>(f), std::make_integer_sequence<int, kMax>{});
}

}  // namespace lanes
}  // namespace asyncdp::models::cnn
