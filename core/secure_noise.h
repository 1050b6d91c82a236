// Secure noise (dp.secure_noise = true): a floating-point-safe replacement for the Gaussian noise of a
// DP-SGD round. Floating-point Gaussian samplers leak the noiseless value through the low-order bits of
// their output (Mironov 2012), so in this mode
//   * the round's clipped sum is rounded to a lattice of granularity gamma (a power of two), and
//   * integer noise from the discrete Gaussian N_Z(0, s^2) is added on the lattice, sampled EXACTLY with
//     integer arithmetic only (Canonne, Kamath, Steinke 2020, Algorithms 1-3: Bernoulli(exp(-n/d)) from
//     Bernoulli(n/(dk)) trials, a discrete Laplace proposal, rejection), driven by OS entropy
//     (getrandom(2)); the entropy is never seeded from and never written to any output,
// so the released value gamma (round(sum / gamma) + Y) is a function of a lattice point and exact noise.
//
// Accounting (the caller adjusts it; core/accounting/rdp.h): rounding to the nearest lattice point moves
// each coordinate by at most gamma / 2, so neighbouring sums differ by at most C + gamma sqrt(d) (add/
// remove); the discrete Gaussian's Renyi divergence for an integer shift is at most the Gaussian's (CKS20),
// so the round is accounted as a subsampled Gaussian with the effective multiplier
//   sigma_eff = s gamma / (C + gamma sqrt(d)),
// by the RDP accountant with a bound that covers the discrete noise (DiscreteGaussianPoissonRdp). The
// lattice is chosen so that sigma_eff is within 0.1% of the configured sigma (gamma sqrt(d) <= C / 1024)
// unless s would exceed 2^26 lattice units (then gamma is coarsened and the loss is reported).
// Proposals beyond |Y| = 2^31 are rejected (integer range): the sampled law then differs from N_Z(0, s^2)
// by total variation <= exp(-2^62 / (2 s^2)) <= e^-512, below any delta.
//
// What this does not cover (stated in every report's assumptions): the per-example clipping and the
// clipped sum itself are computed in float32 by the model; their rounding error is not bounded here.
// Not reproducible by design: the same seed gives different noise on every run.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace asyncdp {

// Buffered getrandom(2). Throws std::runtime_error if the OS refuses.
class OsEntropy {
 public:
  OsEntropy() = default;
  OsEntropy(const OsEntropy&) = delete;
  OsEntropy& operator=(const OsEntropy&) = delete;

  uint64_t Next64();
  // Uniform in [0, bound), bound >= 1 (rejection on the bit length: exact).
  unsigned __int128 Below(unsigned __int128 bound);

 private:
  std::array<uint64_t, 256> buffer_{};
  size_t next_ = buffer_.size();
};

// 64 bits from the OS, e.g. a secret key for the batch sampler's streams in secure mode.
uint64_t OsRandomSeed();

// Exact samplers of CKS20 on integers. n / d are non-negative rationals with d >= 1.
bool SampleBernoulliRatio(unsigned __int128 n, unsigned __int128 d, OsEntropy& entropy);  // P = n/d <= 1
bool SampleBernoulliExp(unsigned __int128 n, unsigned __int128 d, OsEntropy& entropy);    // P = exp(-n/d)
int64_t SampleDiscreteLaplace(int64_t scale, OsEntropy& entropy);  // P(x) ∝ exp(-|x| / scale), scale >= 1
// N_Z(0, variance): P(x) ∝ exp(-x^2 / (2 variance)), 1 <= variance <= 2^52 (see the file comment).
int64_t SampleDiscreteGaussian(int64_t variance, OsEntropy& entropy);

struct SecureNoiseLattice {
  double granularity = 0.0;      // gamma, a power of two, in the units of the clipped sum
  int64_t variance = 0;          // s^2 in lattice units (the discrete Gaussian's parameter)
  double effective_sigma = 0.0;  // s gamma / (C + gamma sqrt(d)): the multiplier the accountant uses
};

// The lattice for noise multiplier sigma > 0, clip C > 0 and d >= 1 coordinates (see the file comment):
// gamma = the largest power of two <= C / (1024 sqrt(d)), doubled while sigma C / gamma > 2^26;
// s^2 = ceil((sigma C / gamma)^2), so the noise is never below the configured one.
SecureNoiseLattice ChooseSecureNoiseLattice(double sigma, double clip, int64_t dimension);

// sum[j] <- gamma (round(sum[j] / gamma) + Y_j), Y_j ~ N_Z(0, s^2) independent. sum must be finite.
void AddSecureRoundNoise(const SecureNoiseLattice& lattice, OsEntropy& entropy, std::span<float> sum);

}  // namespace asyncdp
