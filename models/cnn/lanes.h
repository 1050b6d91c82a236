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

template <typename Scalar>
inline Packet<Scalar> Load(const Scalar* p) {
  return Eigen::internal::ploadu<Packet<Scalar>>(p);
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
