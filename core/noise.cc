#include "core/noise.h"

#include <cmath>

#include "core/check.h"

namespace asyncdp {
namespace {

template <typename T>
void AddRangeImpl(const StreamKey& key, double clip, double noise_multiplier, uint64_t first,
                  std::span<T> part) {
  ASYNCDP_CHECK(key.purpose == StreamPurpose::kGradientNoise);
  const double stddev = NoiseStddev(clip, noise_multiplier);
  if (stddev == 0.0) return;
  AddGaussianNoise(key, stddev, first, part);
}

}  // namespace

double NoiseStddev(double clip, double noise_multiplier) {
  ASYNCDP_CHECK(noise_multiplier >= 0.0);
  if (noise_multiplier == 0.0) return 0.0;
  ASYNCDP_CHECK_MSG(std::isfinite(clip) && clip > 0.0, "noise needs a finite clipping norm C > 0");
  return clip * noise_multiplier;
}

void AddRoundNoise(const StreamKey& key, double clip, double noise_multiplier, std::span<float> sum) {
  AddRangeImpl(key, clip, noise_multiplier, 0, sum);
}
void AddRoundNoise(const StreamKey& key, double clip, double noise_multiplier, std::span<double> sum) {
  AddRangeImpl(key, clip, noise_multiplier, 0, sum);
}

void AddRoundNoiseRange(const StreamKey& key, double clip, double noise_multiplier, uint64_t first,
                        std::span<float> part) {
  AddRangeImpl(key, clip, noise_multiplier, first, part);
}
void AddRoundNoiseRange(const StreamKey& key, double clip, double noise_multiplier, uint64_t first,
                        std::span<double> part) {
  AddRangeImpl(key, clip, noise_multiplier, first, part);
}

}  // namespace asyncdp
