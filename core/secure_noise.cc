#include "core/secure_noise.h"

#include <sys/random.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/check.h"

namespace asyncdp {
namespace {

using U128 = unsigned __int128;

void FillFromOs(void* data, size_t bytes) {
  auto* out = static_cast<unsigned char*>(data);
  while (bytes > 0) {
    const ssize_t got = getrandom(out, bytes, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("secure noise: getrandom failed: ") + std::strerror(errno));
    }
    out += got;
    bytes -= static_cast<size_t>(got);
  }
}

int BitLength(U128 x) {
  const auto high = static_cast<uint64_t>(x >> 64);
  return high != 0 ? 128 - std::countl_zero(high) : 64 - std::countl_zero(static_cast<uint64_t>(x));
}

// floor(sqrt(v)) for 0 <= v <= 2^62, exactly.
int64_t IntegerSqrt(int64_t v) {
  auto r = static_cast<int64_t>(std::sqrt(static_cast<double>(v)));
  while (r > 0 && r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

constexpr int64_t kMaxProposal = int64_t{1} << 31;
constexpr double kMaxLatticeSigma = 67108864.0;  // 2^26

}  // namespace

uint64_t OsEntropy::Next64() {
  if (next_ == buffer_.size()) {
    FillFromOs(buffer_.data(), sizeof(buffer_));
    next_ = 0;
  }
  return buffer_[next_++];
}

U128 OsEntropy::Below(U128 bound) {
  ASYNCDP_CHECK(bound >= 1);
  if (bound == 1) return 0;
  const int bits = BitLength(bound - 1);
  const U128 mask = bits >= 128 ? ~U128{0} : (U128{1} << bits) - 1;
  while (true) {
    U128 x = Next64();
    if (bits > 64) x |= static_cast<U128>(Next64()) << 64;
    x &= mask;
    if (x < bound) return x;  // accepted with probability > 1/2
  }
}

uint64_t OsRandomSeed() {
  uint64_t seed = 0;
  FillFromOs(&seed, sizeof(seed));
  return seed;
}

bool SampleBernoulliRatio(U128 n, U128 d, OsEntropy& entropy) {
  ASYNCDP_CHECK(d >= 1 && n <= d);
  return entropy.Below(d) < n;
}

// CKS20 Algorithm 1.
bool SampleBernoulliExp(U128 n, U128 d, OsEntropy& entropy) {
  ASYNCDP_CHECK(d >= 1);
  if (n <= d) {
    // gamma = n/d in [0, 1]: K = the first k with Bernoulli(gamma / k) = 0; return K odd.
    U128 k = 1;
    while (true) {
      ASYNCDP_CHECK(d <= ~U128{0} / (k + 1));  // d k stays representable (k is tiny in practice)
      if (!SampleBernoulliRatio(n, d * k, entropy)) break;
      ++k;
    }
    return (k & 1) == 1;
  }
  // gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma))).
  for (U128 i = 0; i < n / d; ++i) {
    if (!SampleBernoulliExp(1, 1, entropy)) return false;
  }
  return SampleBernoulliExp(n % d, d, entropy);
}

// CKS20 Algorithm 2.
int64_t SampleDiscreteLaplace(int64_t scale, OsEntropy& entropy) {
  ASYNCDP_CHECK(scale >= 1);
  const auto t = static_cast<U128>(scale);
  while (true) {
    const auto u = static_cast<int64_t>(entropy.Below(t));
    if (!SampleBernoulliExp(static_cast<U128>(u), t, entropy)) continue;
    int64_t v = 0;
    while (SampleBernoulliExp(1, 1, entropy)) ++v;
    if (v > kMaxProposal / scale) continue;  // beyond the integer range: see the header (truncation)
    const int64_t x = u + scale * v;
    const bool negative = (entropy.Next64() & 1) != 0;
    if (negative && x == 0) continue;
    return negative ? -x : x;
  }
}

// CKS20 Algorithm 3 with sigma^2 = variance (an integer) and t = floor(sigma) + 1.
int64_t SampleDiscreteGaussian(int64_t variance, OsEntropy& entropy) {
  ASYNCDP_CHECK(variance >= 1 && variance <= (int64_t{1} << 52));
  const int64_t t = IntegerSqrt(variance) + 1;
  while (true) {
    const int64_t y = SampleDiscreteLaplace(t, entropy);
    const int64_t magnitude = y < 0 ? -y : y;
    if (magnitude > kMaxProposal) continue;
    // Accept with probability exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|y| t - sigma^2)^2 / (2 sigma^2 t^2)).
    const __int128 gap = static_cast<__int128>(magnitude) * t - variance;
    const U128 numerator = static_cast<U128>(gap < 0 ? -gap : gap) * static_cast<U128>(gap < 0 ? -gap : gap);
    const U128 denominator = U128{2} * static_cast<U128>(variance) * static_cast<U128>(t) * static_cast<U128>(t);
    if (SampleBernoulliExp(numerator, denominator, entropy)) return y;
  }
}

SecureNoiseLattice ChooseSecureNoiseLattice(double sigma, double clip, int64_t dimension) {
  ASYNCDP_CHECK(sigma > 0.0 && std::isfinite(sigma) && clip > 0.0 && std::isfinite(clip) && dimension >= 1);
  const double root_d = std::sqrt(static_cast<double>(dimension));
  double gamma = std::ldexp(1.0, static_cast<int>(std::floor(std::log2(clip / (1024.0 * root_d)))));
  while (sigma * clip / gamma > kMaxLatticeSigma) gamma *= 2.0;
  const double s = sigma * clip / gamma;
  SecureNoiseLattice lattice;
  lattice.granularity = gamma;
  lattice.variance = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s * s)));
  lattice.effective_sigma = std::sqrt(static_cast<double>(lattice.variance)) * gamma / (clip + gamma * root_d);
  return lattice;
}

void AddSecureRoundNoise(const SecureNoiseLattice& lattice, OsEntropy& entropy, std::span<float> sum) {
  const double gamma = lattice.granularity;
  for (float& value : sum) {
    ASYNCDP_CHECK(std::isfinite(value));
    const double point = std::nearbyint(static_cast<double>(value) / gamma);  // exact: gamma is a power of 2
    value = static_cast<float>((point + static_cast<double>(SampleDiscreteGaussian(lattice.variance, entropy))) *
                               gamma);
  }
}

}  // namespace asyncdp
