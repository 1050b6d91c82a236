#include "core/random.h"

#include <Random123/philox.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "core/check.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#define ASYNCDP_NORMALS_AVX512 1
#endif

namespace asyncdp {
namespace {

// ---------------------------------------------------------------------------------------------------
// Box–Muller with our own elementary functions (generator version kNoiseGeneratorVersion, core/noise.h).
//
// z0 = r cos θ, z1 = r sin θ with r = sqrt(−2 ln u1), θ = 2π u2, u1, u2 the block's two 53-bit uniforms.
// ln and sin/cos are evaluated here from their Taylor series (coefficients 1/(2k+1) and 1/n!, no fitted
// constants) using only IEEE-754 basic operations — correctly rounded +, −, ×, ÷, √ and fused multiply-add,
// or exact ones (bit fields, floor, comparisons, selections, sign flips). So every platform gives the same
// bits (no libm in the loop), and the vector path below gives exactly the scalar path's bits. Every
// product that feeds a sum is an explicit fused multiply-add and no other product feeds a sum (apart from
// exact scalings by powers of two), so the compiler's contraction setting cannot change a result.
//
// Accuracy (tests/core/random_test.cc checks both against long-double libm on 10^6 arguments): ln u to a
// few ulp (series truncated below 2^-56 relative), sin and cos of the reduced angle likewise, so each
// normal is within a few ulp of the exact Box–Muller transform of its uniforms.
// ---------------------------------------------------------------------------------------------------

constexpr double kLn2 = 0x1.62e42fefa39efp-1;
constexpr double kHalfPi = 0x1.921fb54442d18p+0;
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
constexpr double kTwoToMinus53 = 0x1p-53;
constexpr double kLargestBelowOne = 1.0 - 0x1p-53;

// ln m = 2 atanh(s), s = (m − 1)/(m + 1), |s| ≤ 3 − 2√2 < 0.1716, t = s²:
//   2 atanh(s) = 2s (1 + t/3 + t²/5 + ...); the first omitted term t^11/23 < 2^-60.
constexpr int kAtanhTerms = 11;  // 1/3 ... 1/23
constexpr double AtanhCoefficient(int k) { return 1.0 / (2 * k + 1); }

// |φ| ≤ π/4, t = φ²: sin φ = φ + φ t (−1/3! + t (1/5! − ...)) through φ^17 (next term < 2^-62 relative);
// cos φ = 1 + t (−1/2! + t (1/4! − ...)) through φ^16 (next term < 2^-58).
constexpr int kSinCosTerms = 8;
constexpr double InverseFactorial(int n) {
  double f = 1.0;
  for (int i = 2; i <= n; ++i) f *= i;
  return 1.0 / f;
}
constexpr double SinCoefficient(int k) { return (k % 2 == 1 ? -1.0 : 1.0) * InverseFactorial(2 * k + 1); }
constexpr double CosCoefficient(int k) { return (k % 2 == 1 ? -1.0 : 1.0) * InverseFactorial(2 * k); }

inline double UniformScalar(uint64_t bits) { return UniformFromBits(bits); }

// ln u for u in (0, 1) (never subnormal: u ≥ 2^-54).
inline double LogScalar(double u) {
  const uint64_t bits = std::bit_cast<uint64_t>(u);
  double exponent = static_cast<double>(static_cast<int64_t>(bits >> 52) - 1023);
  double m = std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1, 2)
  if (m > kSqrt2) {
    m *= 0.5;
    exponent += 1.0;
  }
  const double s = (m - 1.0) / (m + 1.0);  // m − 1 is exact
  const double t = s * s;
  double p = AtanhCoefficient(kAtanhTerms);
  for (int k = kAtanhTerms - 1; k >= 1; --k) p = std::fma(p, t, AtanhCoefficient(k));
  const double two_s = s + s;
  const double log_m = std::fma(two_s * t, p, two_s);
  return std::fma(exponent, kLn2, log_m);
}

// cos(2π u), sin(2π u) for u in (0, 1): 4u = q + r with q an integer and |r| ≤ 1/2 (both exact), then
// the Taylor series at φ = r π/2 and the quadrant q mod 4.
inline void SinCosTwoPiScalar(double u, double& cos_out, double& sin_out) {
  const double x = 4.0 * u;
  double q = std::floor(x);
  double r = x - q;
  if (r > 0.5) {
    r -= 1.0;
    q += 1.0;
  }
  const double phi = r * kHalfPi;
  const double t = phi * phi;
  double ps = SinCoefficient(kSinCosTerms);
  double pc = CosCoefficient(kSinCosTerms);
  for (int k = kSinCosTerms - 1; k >= 1; --k) {
    ps = std::fma(ps, t, SinCoefficient(k));
    pc = std::fma(pc, t, CosCoefficient(k));
  }
  const double sin_phi = std::fma(phi * t, ps, phi);
  const double cos_phi = std::fma(t, pc, 1.0);
  const int quadrant = static_cast<int>(q) & 3;
  const double c = (quadrant & 1) ? sin_phi : cos_phi;
  const double s = (quadrant & 1) ? cos_phi : sin_phi;
  cos_out = ((quadrant + 1) & 2) ? -c : c;
  sin_out = (quadrant & 2) ? -s : s;
}

inline uint64_t Join(uint32_t lo, uint32_t hi) { return (static_cast<uint64_t>(hi) << 32) | lo; }

// The two standard normals of Philox block `words`: z0 = normal 2b, z1 = normal 2b + 1.
inline void BoxMullerScalar(const std::array<uint32_t, 4>& words, double& z0, double& z1) {
  const double u1 = UniformScalar(Join(words[0], words[1]));
  const double u2 = UniformScalar(Join(words[2], words[3]));
  const double radius = std::sqrt(-2.0 * LogScalar(u1));
  double c, s;
  SinCosTwoPiScalar(u2, c, s);
  z0 = radius * c;
  z1 = radius * s;
}

#ifdef ASYNCDP_NORMALS_AVX512
// The same computation for 8 consecutive blocks at once (8 double lanes), bit-identical to the scalar
// path: Philox4x32-10 with each 32-bit word in the low half of a 64-bit lane (vpmuludq gives the full
// 64-bit product; upper halves may hold garbage until the final masking), then the same sequence of
// IEEE operations as BoxMullerScalar.
struct NormalBlocks8 {
  __m512d z0;  // normals 2b, 2b + 2, ... (lane i = block b + i)
  __m512d z1;  // normals 2b + 1, 2b + 3, ...
};

inline NormalBlocks8 BoxMuller8(const StreamKey& key, uint64_t first_block) {
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFFll);
  const __m512i block = _mm512_add_epi64(_mm512_set1_epi64(static_cast<int64_t>(first_block)), lane);
  __m512i c0 = _mm512_and_si512(block, low32);
  __m512i c1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(block, 32), _mm512_set1_epi64(0xFFFFFF)),
                               _mm512_set1_epi64(int64_t{static_cast<uint8_t>(key.purpose)} << 24));
  __m512i c2 = _mm512_set1_epi64(key.client);
  __m512i c3 = _mm512_set1_epi64(key.round);
  uint32_t k0 = static_cast<uint32_t>(key.seed);
  uint32_t k1 = static_cast<uint32_t>(key.seed >> 32);
  const __m512i m0 = _mm512_set1_epi64(0xD2511F53);
  const __m512i m1 = _mm512_set1_epi64(0xCD9E8D57);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const __m512i p0 = _mm512_mul_epu32(c0, m0);
    const __m512i p1 = _mm512_mul_epu32(c2, m1);
    const __m512i n0 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), c1, _mm512_set1_epi64(k0), 0x96);
    const __m512i n2 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), c3, _mm512_set1_epi64(k1), 0x96);
    c0 = n0;
    c1 = p1;
    c2 = n2;
    c3 = p0;
  }
  const __m512i a = _mm512_or_si512(_mm512_and_si512(c0, low32), _mm512_slli_epi64(c1, 32));
  const __m512i b = _mm512_or_si512(_mm512_and_si512(c2, low32), _mm512_slli_epi64(c3, 32));

  // Uniforms: ((bits >> 11) + 1/2) 2^-53, capped at the largest double below 1 (UniformFromBits).
  const __m512d half = _mm512_set1_pd(0.5);
  const __m512d scale = _mm512_set1_pd(kTwoToMinus53);
  const __m512d cap = _mm512_set1_pd(kLargestBelowOne);
  const __m512d u1 = _mm512_min_pd(
      _mm512_mul_pd(_mm512_add_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(a, 11)), half), scale), cap);
  const __m512d u2 = _mm512_min_pd(
      _mm512_mul_pd(_mm512_add_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(b, 11)), half), scale), cap);

  // ln u1 (LogScalar).
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512i u1_bits = _mm512_castpd_si512(u1);
  __m512d exponent = _mm512_cvtepi64_pd(_mm512_sub_epi64(_mm512_srli_epi64(u1_bits, 52), _mm512_set1_epi64(1023)));
  __m512d m = _mm512_castsi512_pd(_mm512_or_si512(_mm512_and_si512(u1_bits, _mm512_set1_epi64(0x000FFFFFFFFFFFFFll)),
                                                  _mm512_set1_epi64(0x3FF0000000000000ll)));
  const __mmask8 big = _mm512_cmp_pd_mask(m, _mm512_set1_pd(kSqrt2), _CMP_GT_OQ);
  m = _mm512_mask_mul_pd(m, big, m, half);
  exponent = _mm512_mask_add_pd(exponent, big, exponent, one);
  const __m512d s = _mm512_div_pd(_mm512_sub_pd(m, one), _mm512_add_pd(m, one));
  const __m512d t = _mm512_mul_pd(s, s);
  __m512d p = _mm512_set1_pd(AtanhCoefficient(kAtanhTerms));
  for (int k = kAtanhTerms - 1; k >= 1; --k) p = _mm512_fmadd_pd(p, t, _mm512_set1_pd(AtanhCoefficient(k)));
  const __m512d two_s = _mm512_add_pd(s, s);
  const __m512d log_m = _mm512_fmadd_pd(_mm512_mul_pd(two_s, t), p, two_s);
  const __m512d log_u1 = _mm512_fmadd_pd(exponent, _mm512_set1_pd(kLn2), log_m);
  const __m512d radius = _mm512_sqrt_pd(_mm512_mul_pd(_mm512_set1_pd(-2.0), log_u1));

  // cos, sin of 2π u2 (SinCosTwoPiScalar).
  const __m512d x = _mm512_mul_pd(_mm512_set1_pd(4.0), u2);
  __m512d q = _mm512_roundscale_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512d r = _mm512_sub_pd(x, q);
  const __mmask8 upper = _mm512_cmp_pd_mask(r, half, _CMP_GT_OQ);
  r = _mm512_mask_sub_pd(r, upper, r, one);
  q = _mm512_mask_add_pd(q, upper, q, one);
  const __m512d phi = _mm512_mul_pd(r, _mm512_set1_pd(kHalfPi));
  const __m512d phi2 = _mm512_mul_pd(phi, phi);
  __m512d ps = _mm512_set1_pd(SinCoefficient(kSinCosTerms));
  __m512d pc = _mm512_set1_pd(CosCoefficient(kSinCosTerms));
  for (int k = kSinCosTerms - 1; k >= 1; --k) {
    ps = _mm512_fmadd_pd(ps, phi2, _mm512_set1_pd(SinCoefficient(k)));
    pc = _mm512_fmadd_pd(pc, phi2, _mm512_set1_pd(CosCoefficient(k)));
  }
  const __m512d sin_phi = _mm512_fmadd_pd(_mm512_mul_pd(phi, phi2), ps, phi);
  const __m512d cos_phi = _mm512_fmadd_pd(phi2, pc, one);
  const __m512i quadrant = _mm512_and_si512(_mm512_cvttpd_epi64(q), _mm512_set1_epi64(3));
  const __m512i bit0 = _mm512_set1_epi64(1);
  const __m512i bit1 = _mm512_set1_epi64(2);
  const __mmask8 swap = _mm512_test_epi64_mask(quadrant, bit0);
  const __mmask8 negate_cos = _mm512_test_epi64_mask(_mm512_add_epi64(quadrant, bit0), bit1);
  const __mmask8 negate_sin = _mm512_test_epi64_mask(quadrant, bit1);
  __m512d c = _mm512_mask_blend_pd(swap, cos_phi, sin_phi);
  __m512d sn = _mm512_mask_blend_pd(swap, sin_phi, cos_phi);
  const __m512d sign = _mm512_set1_pd(-0.0);
  c = _mm512_mask_xor_pd(c, negate_cos, c, sign);
  sn = _mm512_mask_xor_pd(sn, negate_sin, sn, sign);
  return {_mm512_mul_pd(radius, c), _mm512_mul_pd(radius, sn)};
}

// Normals 2b .. 2b + 7 (low) and 2b + 8 .. 2b + 15 (high) in index order.
inline void Interleave(const NormalBlocks8& z, __m512d& low, __m512d& high) {
  low = _mm512_permutex2var_pd(z.z0, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), z.z1);
  high = _mm512_permutex2var_pd(z.z0, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), z.z1);
}
#endif

// Visits the normals z_first .. z_{first + n − 1} of `key` in index order: scalar(j, z) for single ones,
// vector16(j, low, high) for 16 at once (normals j .. j + 15, j even) when the vector path is compiled.
template <typename Scalar, typename Vector>
void ForEachNormal(const StreamKey& key, uint64_t first, size_t n, Scalar&& scalar, Vector&& vector16) {
  // Every block touched (including a vector step's unused ones) is below 2^56 (PhiloxBlock's range).
  ASYNCDP_CHECK(first < (uint64_t{1} << 57) && n < (uint64_t{1} << 57) &&
                first / 2 + n / 2 + 9 < (uint64_t{1} << 56));
  size_t j = 0;
  uint64_t index = first;
  auto scalar_block = [&](uint64_t block) {
    double z[2];
    BoxMullerScalar(PhiloxBlock(key, block), z[0], z[1]);
    for (uint64_t h = index % 2; h < 2 && j < n; ++h, ++index) scalar(j++, z[h]);
  };
  if (index % 2 == 1 && j < n) scalar_block(index / 2);
#ifdef ASYNCDP_NORMALS_AVX512
  for (; j + 16 <= n; j += 16, index += 16) {
    __m512d low, high;
    Interleave(BoxMuller8(key, index / 2), low, high);
    vector16(j, low, high);
  }
  if (n - j > 2) {  // a short tail: one more vector step (same bits as the scalar path), partly used
    alignas(64) double z[16];
    __m512d low, high;
    Interleave(BoxMuller8(key, index / 2), low, high);
    _mm512_store_pd(z, low);
    _mm512_store_pd(z + 8, high);
    for (int h = 0; j < n; ++h, ++index) scalar(j++, z[h]);
  }
#else
  (void)vector16;
#endif
  while (j < n) scalar_block(index / 2);
}

template <typename T>
void AddNoiseImpl(const StreamKey& key, double stddev, uint64_t first, std::span<T> out) {
  T* data = out.data();
  // out += stddev · z: for float the product is rounded to float, then added; for double it is one fused
  // multiply-add. The vector path does exactly the same.
  auto scalar = [&](size_t j, double z) {
    if constexpr (std::is_same_v<T, float>) {
      data[j] += static_cast<float>(stddev * z);
    } else {
      data[j] = std::fma(stddev, z, data[j]);
    }
  };
#ifdef ASYNCDP_NORMALS_AVX512
  const __m512d scale = _mm512_set1_pd(stddev);
  auto vector16 = [&](size_t j, __m512d low, __m512d high) {
    if constexpr (std::is_same_v<T, float>) {
      const __m256 a = _mm512_cvtpd_ps(_mm512_mul_pd(scale, low));
      const __m256 b = _mm512_cvtpd_ps(_mm512_mul_pd(scale, high));
      _mm256_storeu_ps(data + j, _mm256_add_ps(_mm256_loadu_ps(data + j), a));
      _mm256_storeu_ps(data + j + 8, _mm256_add_ps(_mm256_loadu_ps(data + j + 8), b));
    } else {
      _mm512_storeu_pd(data + j, _mm512_fmadd_pd(scale, low, _mm512_loadu_pd(data + j)));
      _mm512_storeu_pd(data + j + 8, _mm512_fmadd_pd(scale, high, _mm512_loadu_pd(data + j + 8)));
    }
  };
#else
  auto vector16 = [](size_t, int, int) {};
#endif
  ForEachNormal(key, first, out.size(), scalar, vector16);
}

}  // namespace

std::array<uint32_t, 4> PhiloxBlock(const StreamKey& key, uint64_t block) {
  ASYNCDP_CHECK(block < (uint64_t{1} << 56));
  r123::Philox4x32 rng;
  r123::Philox4x32::key_type k = {{static_cast<uint32_t>(key.seed), static_cast<uint32_t>(key.seed >> 32)}};
  const uint32_t purpose_and_high = (static_cast<uint32_t>(key.purpose) << 24) |
                                    static_cast<uint32_t>((block >> 32) & 0xFFFFFFu);
  r123::Philox4x32::ctr_type c = {
      {static_cast<uint32_t>(block), purpose_and_high, key.client, key.round}};
  const auto r = rng(c, k);
  return {r[0], r[1], r[2], r[3]};
}

uint32_t RandomStream::NextU32() {
  if (next_word_ == 4) {
    words_ = PhiloxBlock(key_, block_++);
    next_word_ = 0;
  }
  return words_[next_word_++];
}

uint64_t RandomStream::NextU64() {
  const uint32_t lo = NextU32();
  const uint32_t hi = NextU32();
  return Join(lo, hi);
}

double RandomStream::NextUniform() { return UniformFromBits(NextU64()); }

double RandomStream::NextNormal() {
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return spare_normal_;
  }
  // Four fresh words (whatever the read position), as when a block is read from its start.
  std::array<uint32_t, 4> words;
  for (uint32_t& w : words) w = NextU32();
  double z0, z1;
  BoxMullerScalar(words, z0, z1);
  spare_normal_ = z1;
  has_spare_normal_ = true;
  return z0;
}

double RandomStream::NextExponential() { return -std::log(NextUniform()); }

uint64_t RandomStream::NextBelow(uint64_t n) {
  ASYNCDP_CHECK(n > 0);
  // Lemire-style rejection on the full 64-bit range: unbiased.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
  uint64_t x;
  do {
    x = NextU64();
  } while (x >= limit);
  return x % n;
}

void FillStandardNormal(const StreamKey& key, uint64_t first, std::span<double> out) {
  double* data = out.data();
  auto scalar = [&](size_t j, double z) { data[j] = z; };
#ifdef ASYNCDP_NORMALS_AVX512
  auto vector16 = [&](size_t j, __m512d low, __m512d high) {
    _mm512_storeu_pd(data + j, low);
    _mm512_storeu_pd(data + j + 8, high);
  };
#else
  auto vector16 = [](size_t, int, int) {};
#endif
  ForEachNormal(key, first, out.size(), scalar, vector16);
}

void AddGaussianNoise(const StreamKey& key, double stddev, std::span<float> out) {
  AddNoiseImpl(key, stddev, 0, out);
}
void AddGaussianNoise(const StreamKey& key, double stddev, std::span<double> out) {
  AddNoiseImpl(key, stddev, 0, out);
}
void AddGaussianNoise(const StreamKey& key, double stddev, uint64_t first, std::span<float> out) {
  AddNoiseImpl(key, stddev, first, out);
}
void AddGaussianNoise(const StreamKey& key, double stddev, uint64_t first, std::span<double> out) {
  AddNoiseImpl(key, stddev, first, out);
}

}  // namespace asyncdp
