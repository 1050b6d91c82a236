#include "core/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "core/check.h"
#include "core/error.h"

namespace asyncdp {

SamplingModel ParseSamplingModel(std::string_view name, std::string_view key_path) {
  for (const auto m : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement,
                       SamplingModel::kShuffle, SamplingModel::kRandomAllocation}) {
    if (name == ToString(m)) return m;
  }
  throw ConfigError(std::string(key_path),
                    "unknown sampling model '" + std::string(name) +
                        "' (expected poisson, fixed_size_without_replacement, shuffle or random_allocation)");
}

void SamplePoisson(const StreamKey& key, int64_t num_records, double rate, std::vector<int64_t>& batch) {
  ASYNCDP_CHECK(num_records >= 0);
  ASYNCDP_CHECK(rate >= 0.0 && rate <= 1.0);
  batch.clear();
  if (rate == 0.0 || num_records == 0) return;
  if (rate == 1.0) {
    batch.resize(num_records);
    std::iota(batch.begin(), batch.end(), int64_t{0});
    return;
  }
  // P(gap = k) = (1-q)^k q: the number of skipped records before the next included one. With U uniform
  // in (0,1), floor(ln U / ln(1-q)) has exactly this law. log1p keeps ln(1-q) accurate for small q.
  const double log_keep = std::log1p(-rate);
  RandomStream stream(key);
  int64_t last = -1;  // the last included record
  while (true) {
    const double gap = std::floor(std::log(stream.NextUniform()) / log_keep);
    // Compare in double before converting: for tiny q the gap can exceed the int64 range.
    if (gap >= static_cast<double>(num_records - 1 - last)) break;
    last += 1 + static_cast<int64_t>(gap);
    batch.push_back(last);
  }
}

BatchSampler::BatchSampler(int64_t num_records, uint64_t seed, uint32_t client)
    : num_records_(num_records), seed_(seed), client_(client) {
  ASYNCDP_CHECK(num_records > 0);
}

void PoissonSampler::Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) {
  ASYNCDP_CHECK(sample_size >= 0 && sample_size <= num_records());
  SamplePoisson(RoundKey(round), num_records(),
                static_cast<double>(sample_size) / static_cast<double>(num_records()), batch);
}

FixedSizeSampler::FixedSizeSampler(int64_t num_records, uint64_t seed, uint32_t client)
    : BatchSampler(num_records, seed, client), index_(num_records) {
  std::iota(index_.begin(), index_.end(), int64_t{0});
}

void FixedSizeSampler::Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) {
  const int64_t n = num_records();
  ASYNCDP_CHECK(sample_size >= 0 && sample_size <= n);
  batch.clear();
  swaps_.clear();
  RandomStream stream(RoundKey(round));
  // Partial Fisher–Yates: after step h, index_[0..h] is a uniform ordered sample without replacement.
  for (int64_t h = 0; h < sample_size; ++h) {
    const int64_t j = h + static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(n - h)));
    std::swap(index_[h], index_[j]);
    swaps_.push_back(j);
    batch.push_back(index_[h]);
  }
  // Undo in reverse order to restore the identity (each swap is its own inverse).
  for (int64_t h = sample_size - 1; h >= 0; --h) std::swap(index_[h], index_[swaps_[h]]);
}

ShuffleSampler::ShuffleSampler(int64_t num_records, uint64_t seed, uint32_t client)
    : BatchSampler(num_records, seed, client), permutation_(num_records) {}

void ShuffleSampler::Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) {
  const int64_t n = num_records();
  ASYNCDP_CHECK_MSG(round == next_round_, "ShuffleSampler rounds must be requested in order");
  ASYNCDP_CHECK(sample_size >= 1 && sample_size <= n);
  ++next_round_;
  if (!started_ || position_ == n) {
    if (started_) ++epoch_;
    started_ = true;
    // Fisher–Yates from the identity, so epoch e's permutation depends on (seed, client, e) only.
    std::iota(permutation_.begin(), permutation_.end(), int64_t{0});
    RandomStream stream(RoundKey(epoch_));
    for (int64_t h = n - 1; h > 0; --h) {
      const auto j = static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(h + 1)));
      std::swap(permutation_[h], permutation_[j]);
    }
    position_ = 0;
  }
  const int64_t take = std::min(sample_size, n - position_);
  batch.assign(permutation_.begin() + position_, permutation_.begin() + position_ + take);
  position_ += take;
}

AllocationSampler::AllocationSampler(int64_t num_records, uint64_t seed, uint32_t client, AllocationSlots slots)
    : BatchSampler(num_records, seed, client), slots_(slots) {
  ASYNCDP_CHECK(slots.steps >= 1 && slots.allocations >= 1 && slots.allocations <= slots.steps);
  // Slot indices are stored as int32 (m is a round count per window; far below 2^31 in any plan).
  ASYNCDP_CHECK(slots.steps < (int64_t{1} << 31));
  const int64_t entries = num_records * slots.allocations;
  members_.resize(static_cast<size_t>(entries));
  choices_.resize(static_cast<size_t>(entries));
  offsets_.resize(static_cast<size_t>(slots.steps + 1));
  marks_.assign(static_cast<size_t>(slots.steps), -1);
}

double AllocationSampler::expected_batch() const {
  return static_cast<double>(num_records()) * static_cast<double>(slots_.allocations) /
         static_cast<double>(slots_.steps);
}

void AllocationSampler::Tabulate(int64_t window) {
  const int64_t n = num_records(), m = slots_.steps, k = slots_.allocations;
  RandomStream stream(RoundKey(static_cast<uint32_t>(window)));
  std::fill(offsets_.begin(), offsets_.end(), int64_t{0});
  // Floyd's algorithm: for j = m-k .. m-1 draw t uniform in [0, j]; take t unless already taken, else j.
  // The result is a uniform k-subset of [0, m). marks_ remembers, per slot, the last record that took it.
  for (int64_t r = 0; r < n; ++r) {
    int32_t* chosen = choices_.data() + r * k;
    for (int64_t j = m - k, h = 0; j < m; ++j, ++h) {
      auto t = static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(j + 1)));
      if (marks_[static_cast<size_t>(t)] == r) t = j;
      marks_[static_cast<size_t>(t)] = r;
      chosen[h] = static_cast<int32_t>(t);
      ++offsets_[static_cast<size_t>(t) + 1];
    }
  }
  // marks_ holds record indices; reset so that record 0 of the next window starts clean.
  std::fill(marks_.begin(), marks_.end(), int64_t{-1});
  for (int64_t j = 0; j < m; ++j) offsets_[static_cast<size_t>(j) + 1] += offsets_[static_cast<size_t>(j)];
  // Counting sort, records in increasing order: each slot's group comes out sorted. offsets_[j] serves as
  // slot j's write cursor, then is shifted back.
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t h = 0; h < k; ++h) {
      const auto slot = static_cast<size_t>(choices_[static_cast<size_t>(r * k + h)]);
      members_[static_cast<size_t>(offsets_[slot]++)] = r;
    }
  }
  for (int64_t j = m; j > 0; --j) offsets_[static_cast<size_t>(j)] = offsets_[static_cast<size_t>(j) - 1];
  offsets_[0] = 0;
  window_ = window;
}

void AllocationSampler::Sample(uint32_t round, int64_t /*sample_size*/, std::vector<int64_t>& batch) {
  const int64_t window = static_cast<int64_t>(round) / slots_.steps;
  if (window != window_) Tabulate(window);
  const auto slot = static_cast<size_t>(static_cast<int64_t>(round) % slots_.steps);
  batch.assign(members_.begin() + offsets_[slot], members_.begin() + offsets_[slot + 1]);
}

std::unique_ptr<BatchSampler> MakeSampler(SamplingModel model, int64_t num_records, uint64_t seed,
                                          uint32_t client, AllocationSlots slots) {
  switch (model) {
    case SamplingModel::kPoisson: return std::make_unique<PoissonSampler>(num_records, seed, client);
    case SamplingModel::kFixedSizeWithoutReplacement:
      return std::make_unique<FixedSizeSampler>(num_records, seed, client);
    case SamplingModel::kShuffle: return std::make_unique<ShuffleSampler>(num_records, seed, client);
    case SamplingModel::kRandomAllocation:
      return std::make_unique<AllocationSampler>(num_records, seed, client, slots);
  }
  ASYNCDP_CHECK_MSG(false, "unknown SamplingModel");
  return nullptr;
}

}  // namespace asyncdp
