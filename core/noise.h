// The Gaussian mechanism of a DP-SGD round (docs/theory.md §2): once per local round, after the s_i
// clipped per-example gradients are summed, add one draw
//
//   noise ~ N(0, C^2 sigma^2 I)        (i.i.d. N(0, C^2 sigma^2) in every coordinate)
//
// to the sum — not to each gradient and not to an average. The draw comes from the counter-based stream
// StreamKey{seed, client, round, kGradientNoise} (core/random.h): coordinate j receives the j-th normal
// of that stream, so the noise depends on (key, j) only. Any split of the coordinates over threads
// (AddRoundNoiseRange on disjoint ranges) therefore gives bit-identical results to the sequential call.
#pragma once

#include <cstdint>
#include <span>

#include "core/random.h"

namespace asyncdp {

// Version of the Gaussian generator behind every normal (core/random.h): the mapping from (key, index) to
// the bits of z_index. Results computed with different versions differ in their noise, so it is recorded
// with every run's outputs.
//   1: Box–Muller on Philox blocks with libm's log, cos and sin (scalar).
//   2: the same Box–Muller mapping with our own ln, sin and cos series in IEEE basic operations,
//      vectorised; identical on every platform. Differs from version 1 in the last bits of some normals.
inline constexpr int kNoiseGeneratorVersion = 2;

// The stream of client `client`'s round-`round` noise (purpose kGradientNoise).
inline StreamKey GradientNoiseKey(uint64_t seed, uint32_t client, uint32_t round) {
  return StreamKey{seed, client, round, StreamPurpose::kGradientNoise};
}

// Standard deviation of each noise coordinate: C * sigma (§2.2). sigma = 0 gives 0 (non-private run).
// C must be finite when sigma > 0: unclipped gradients have unbounded sensitivity.
double NoiseStddev(double clip, double noise_multiplier);

// sum[j] += C * sigma * z_j for all j, z_j the j-th standard normal of `key` (§2.2). `key.purpose` must be
// kGradientNoise. Bit-identical to AddGaussianNoise(key, C * sigma, sum).
void AddRoundNoise(const StreamKey& key, double clip, double noise_multiplier, std::span<float> sum);
void AddRoundNoise(const StreamKey& key, double clip, double noise_multiplier, std::span<double> sum);

// The same for the coordinates [first, first + part.size()) of the round's noise vector:
// part[j] += C * sigma * z_{first + j}. Disjoint ranges may be filled concurrently (pure, no shared state).
void AddRoundNoiseRange(const StreamKey& key, double clip, double noise_multiplier, uint64_t first,
                        std::span<float> part);
void AddRoundNoiseRange(const StreamKey& key, double clip, double noise_multiplier, uint64_t first,
                        std::span<double> part);

}  // namespace asyncdp
