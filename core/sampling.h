// Mini-batch samplers: which of a client's N records local round i uses (docs/theory.md §2).
//
//   PoissonSampler     each record independently with probability q = s_i / N; the batch size varies
//                      (Binomial(N, q), mean s_i). This is what the closed-form theorems assume
//                      (add/remove neighbours, sensitivity C).
//   FixedSizeSampler   exactly s_i distinct records, uniformly without replacement (the paper's pseudocode,
//                      Algorithms 1 and 4); analysed under replace-one neighbours.
//   ShuffleSampler     a fresh uniform permutation each epoch, cut into consecutive disjoint batches.
//   AllocationSampler  random allocation ("balls in bins", Feldman & Shenfeld 2025 §2.1): the rounds are cut
//                      into windows of m rounds; in each window every record joins k distinct rounds chosen
//                      uniformly, independently of the other records and of the other windows. A round's
//                      batch is the records allocated to it (variable size, mean N k / m, possibly empty).
//                      Add/remove neighbours; accounted by the random-allocation accountant with {m, k}.
//
// Each sampler names the SamplingModel it implements and the NeighbourRelation the accountant must use
// (core/privacy_assumptions.h). Randomness: round i of client c draws from
// StreamKey{seed, c, i, kBatchSampling}, so a batch depends on (seed, client, round) only — never on the
// thread, or on earlier rounds (except ShuffleSampler, whose epoch e permutation is keyed by round = e and
// whose position within the epoch depends on the earlier batch sizes; and AllocationSampler, whose window w
// is keyed by round = w, so a window's allocation depends on (seed, client, w) only).
//
// Allocation: batches are written into a caller-owned vector, cleared first; its capacity grows to the
// largest batch seen and is then reused, so steady-state rounds allocate nothing. The fixed-size and
// shuffle samplers keep an O(N) index buffer, allocated once at construction; the allocation sampler an
// O(N k + m) table of the current window, also allocated once and refilled once per window.
//
// Thread safety: a sampler has mutable state; give each client its own.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/privacy_assumptions.h"
#include "core/random.h"

namespace asyncdp {

// Parses ToString(SamplingModel) names ("poisson", "fixed_size_without_replacement", "shuffle",
// "random_allocation");
// throws ConfigError(key_path, ...) listing them otherwise.
SamplingModel ParseSamplingModel(std::string_view name, std::string_view key_path);

// Poisson subsampling of records 0..N-1 at rate q in [0, 1], by geometric skipping: the gap to the next
// included record is Geometric(q), drawn as floor(ln U / ln(1 - q)), so a round costs O(qN + 1), not O(N).
// `batch` receives the included indices in increasing order. Pure given the key.
void SamplePoisson(const StreamKey& key, int64_t num_records, double rate, std::vector<int64_t>& batch);

class BatchSampler {
 public:
  virtual ~BatchSampler() = default;

  virtual SamplingModel model() const = 0;
  // The neighbour relation under which this sampler's output is analysed.
  NeighbourRelation neighbours() const { return NaturalNeighbours(model()); }
  int64_t num_records() const { return num_records_; }

  // Writes round `round`'s batch into `batch` (cleared first). `sample_size` is s_i, 0 <= s_i <= N: the
  // expected size for Poisson, the exact size for fixed-size, the batch length for shuffle (>= 1).
  virtual void Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) = 0;

 protected:
  BatchSampler(int64_t num_records, uint64_t seed, uint32_t client);
  StreamKey RoundKey(uint32_t round) const {
    return StreamKey{seed_, client_, round, StreamPurpose::kBatchSampling};
  }

 private:
  int64_t num_records_;
  uint64_t seed_;
  uint32_t client_;
};

// q = s_i / N; output sorted increasing.
class PoissonSampler final : public BatchSampler {
 public:
  PoissonSampler(int64_t num_records, uint64_t seed, uint32_t client)
      : BatchSampler(num_records, seed, client) {}
  SamplingModel model() const override { return SamplingModel::kPoisson; }
  void Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) override;
};

// A partial Fisher–Yates shuffle of a reusable index buffer: s_i swaps give s_i distinct records
// uniformly, in random order (not sorted). The swaps are then undone, so the buffer is the identity at
// the start of every round and a batch depends on its key only. O(s_i) per round.
class FixedSizeSampler final : public BatchSampler {
 public:
  FixedSizeSampler(int64_t num_records, uint64_t seed, uint32_t client);
  SamplingModel model() const override { return SamplingModel::kFixedSizeWithoutReplacement; }
  void Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) override;

 private:
  std::vector<int64_t> index_;  // the identity permutation between rounds
  std::vector<int64_t> swaps_;  // positions swapped this round, for undoing
};

// Epoch e's permutation is a Fisher–Yates shuffle of the identity keyed by StreamKey{seed, client, e,
// kBatchSampling}. Rounds take consecutive slices of it; a batch never spans two epochs: when fewer than
// s_i records remain, the round takes the remainder (a short batch) and the next round starts epoch e+1.
// So every record is used exactly once per epoch. Rounds must be requested in order 0, 1, 2, ...
class ShuffleSampler final : public BatchSampler {
 public:
  ShuffleSampler(int64_t num_records, uint64_t seed, uint32_t client);
  SamplingModel model() const override { return SamplingModel::kShuffle; }
  void Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) override;
  uint32_t epoch() const { return epoch_; }  // the epoch the last batch came from

 private:
  std::vector<int64_t> permutation_;
  int64_t position_ = 0;  // next unused slot of permutation_
  uint32_t epoch_ = 0;
  uint32_t next_round_ = 0;
  bool started_ = false;
};

// The window of random allocation: m rounds per window, k allocations of every record per window.
struct AllocationSlots {
  int64_t steps = 0;        // m >= 1 (0: not random allocation)
  int64_t allocations = 1;  // k in [1, m]
};

// Random allocation over windows of m = slots.steps rounds: window w = round / m covers rounds
// [w m, (w + 1) m). Window w's allocation is drawn from StreamKey{seed, client, w, kBatchSampling}: for
// records 0, 1, ..., N-1 in turn, k distinct slots of [0, m) by Floyd's algorithm (uniform over k-subsets).
// The window is tabulated once (a counting sort of the N k slot choices) and every round of it is a slice
// of the table, sorted increasing. Rounds may be requested in any order: a round of another window
// re-tabulates that window (pure in its key), so a batch depends on (seed, client, round) only.
// Cost: O(N k + m) per window, O(batch) per round; no allocation after construction.
class AllocationSampler final : public BatchSampler {
 public:
  AllocationSampler(int64_t num_records, uint64_t seed, uint32_t client, AllocationSlots slots);
  SamplingModel model() const override { return SamplingModel::kRandomAllocation; }
  // `sample_size` is ignored: the batch is whatever the window allocated to `round`.
  void Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) override;
  const AllocationSlots& slots() const { return slots_; }
  // The expected batch size N k / m.
  double expected_batch() const;

 private:
  void Tabulate(int64_t window);

  AllocationSlots slots_;
  int64_t window_ = -1;             // the window tabulated in members_ (-1: none yet)
  std::vector<int64_t> members_;    // N k record indices grouped by slot, each group increasing
  std::vector<int64_t> offsets_;    // m + 1: slot j's records are members_[offsets_[j] .. offsets_[j+1])
  std::vector<int32_t> choices_;    // N k: the slots drawn, record by record (input of the counting sort)
  std::vector<int64_t> marks_;      // m: marks_[j] == stamp when slot j is already taken by this record
};

// A sampler for `model`; random allocation needs `slots` (steps >= 1, 1 <= allocations <= steps).
std::unique_ptr<BatchSampler> MakeSampler(SamplingModel model, int64_t num_records, uint64_t seed,
                                          uint32_t client, AllocationSlots slots = {});

}  // namespace asyncdp
