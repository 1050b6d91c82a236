#include "models/cnn/cnn_model.h"

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/error.h"
#include "models/cnn/flush_subnormals.h"

namespace asyncdp::models {
namespace {

// What one thread works in while it computes a chunk: the groups' buffers and the chunk's row indices.
// Owned by a thread, not by a chunk, so they stay in that core's caches from chunk to chunk; every buffer a
// chunk reads is written by that chunk first (or is a zero border never written), so which thread's
// scratch a chunk uses does not change its result.
struct ThreadScratch {
  ThreadScratch(const CnnGeometry& geometry, int64_t chunk) : scratch(geometry, chunk), rows(chunk) {}
  cnn::ChunkScratch<float> scratch;
  std::vector<int64_t> rows;  // row indices of the chunk (Evaluate)
};

// What a computed chunk hands to its in-order commit: its partial sum and counts.
struct Slot {
  Slot(const CnnGeometry& geometry, bool with_partial) {
    if (with_partial) partial.resize(geometry.num_params);
  }
  Eigen::VectorXf partial;  // this chunk's clipped-gradient sum
  cnn::ChunkClipResult clip_result;
  cnn::SoftmaxSummary loss_summary;
};

// The threads a workspace computes with: never more than the machine has (oneTBB would warn and cap it
// anyway); results do not depend on the thread count.
int Concurrency(int threads) { return std::min(threads, tbb::info::default_concurrency()); }

class CnnWorkspace final : public Workspace {
 public:
  CnnWorkspace(const CnnGeometry& geometry, int64_t chunk, int slots, int threads, bool with_partial)
      : arena_(Concurrency(threads)) {
    for (int i = 0; i < slots; ++i) slots_.push_back(std::make_unique<Slot>(geometry, with_partial));
    const int workers = slots > 1 ? Concurrency(threads) : 1;
    for (int i = 0; i < workers; ++i) scratch_.push_back(std::make_unique<ThreadScratch>(geometry, chunk));
  }

  int64_t chunk() const { return scratch_[0]->scratch.capacity; }
  size_t SerialGroups() const { return scratch_[0]->scratch.groups.size(); }

  int slots() const { return static_cast<int>(slots_.size()); }
  Slot& slot(int i) { return *slots_[i]; }

  // Runs chunk(c, scratch, slot) for c = 0 .. chunks − 1 and commit(c, slot) for each chunk in chunk order,
  // one commit at a time. With several slots the chunks run in parallel (oneTBB pipeline: chunk c hands its
  // result over in slot c mod slots(), at most slots() chunks in flight) and commits overlap with other
  // chunks' work. A chunk computes in the scratch of the thread that runs it: with the scratch in the slot,
  // a slot's buffers moved between the cores' caches with its chunks (LeNet with two threads: 95–108k
  // examples/s against 119–129k with the scratch per thread; BENCHMARKS.md, Intel Xeon, 2026-12-04).
  template <typename Chunk, typename Commit>
  void RunOrdered(int64_t chunks, Chunk&& chunk, Commit&& commit) {
    if (slots() == 1 || chunks == 1) {
      for (int64_t c = 0; c < chunks; ++c) {
        chunk(c, *scratch_[0], slot(0));
        commit(c, slot(0));
      }
      return;
    }
    int64_t next = 0;
    arena_.execute([&] {
      tbb::parallel_pipeline(
          static_cast<size_t>(slots()),
          tbb::make_filter<void, int64_t>(tbb::filter_mode::serial_in_order,
                                          [&](tbb::flow_control& control) -> int64_t {
                                            if (next == chunks) {
                                              control.stop();
                                              return 0;
                                            }
                                            return next++;
                                          }) &
              tbb::make_filter<int64_t, int64_t>(tbb::filter_mode::parallel,
                                                 [&](int64_t c) {
                                                   chunk(c, ThisThreadScratch(),
                                                         slot(static_cast<int>(c % slots())));
                                                   return c;
                                                 }) &
              tbb::make_filter<int64_t, void>(tbb::filter_mode::serial_in_order, [&](int64_t c) {
                commit(c, slot(static_cast<int>(c % slots())));
              }));
    });
  }

 private:
  // The arena's thread indices are 0 .. max_concurrency − 1 (the thread that entered it included).
  ThreadScratch& ThisThreadScratch() {
    const int index = tbb::this_task_arena::current_thread_index();
    ASYNCDP_CHECK(index >= 0 && index < static_cast<int>(scratch_.size()));
    return *scratch_[index];
  }

  tbb::task_arena arena_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::unique_ptr<ThreadScratch>> scratch_;
};

const CnnOptions& Validated(const CnnOptions& options) {
  ValidateCnnOptions(options);
  return options;
}

// One slot per thread plus one, so that a finished chunk can wait for its in-order commit while every
// thread computes; one slot when serial.
int SlotCount(int threads, int64_t chunk, int64_t max_batch) {
  const int64_t chunks = (std::max<int64_t>(max_batch, 1) + chunk - 1) / chunk;
  const int wanted = Concurrency(threads) > 1 ? threads + 1 : 1;
  return static_cast<int>(std::clamp<int64_t>(chunks, 1, wanted));
}

}  // namespace

CnnModel::CnnModel(const CnnArchitecture& architecture, const CnnOptions& options)
    : name_(architecture.name),
      options_(Validated(options)),
      chunk_size_(options.chunk_size > 0 ? options.chunk_size : architecture.default_chunk_size),
      network_(ComputeGeometry(architecture), options.activation, options.pooling) {}

Eigen::VectorXf CnnModel::InitialParams(uint64_t seed) const {
  return InitialCnnParams(geometry(), options_.activation, seed);
}

std::unique_ptr<Workspace> CnnModel::NewWorkspace(int64_t max_batch) const {
  ASYNCDP_CHECK(max_batch >= 0);
  const int64_t chunk = std::min(chunk_size_, std::max<int64_t>(max_batch, 1));
  return std::make_unique<CnnWorkspace>(geometry(), chunk, SlotCount(options_.threads, chunk, max_batch),
                                        options_.threads, /*with_partial=*/true);
}

void CnnModel::CheckData(const data::Dataset& data) const {
  const data::ImageShape& want = geometry().input;
  const data::ImageShape& got = data.image;
  if (data.is_sparse || got.channels != want.channels || got.height != want.height ||
      got.width != want.width || data.dense.cols() != geometry().input_size()) {
    throw ConfigError("model", name_ + " needs dense " + std::to_string(want.channels) + "×" +
                                   std::to_string(want.height) + "×" + std::to_string(want.width) +
                                   " image data; data set '" + data.source + "' is " +
                                   (data.is_sparse ? "sparse" : "dense") + " with image shape " +
                                   std::to_string(got.channels) + "×" + std::to_string(got.height) + "×" +
                                   std::to_string(got.width));
  }
  if (data.num_classes() > geometry().classes()) {
    throw ConfigError("model", name_ + " has " + std::to_string(geometry().classes()) +
                                   " outputs but data set '" + data.source + "' has " +
                                   std::to_string(data.num_classes()) + " classes");
  }
}

ClipStats CnnModel::ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                                       std::span<const int64_t> batch, double clip, std::span<float> grad_sum,
                                       Workspace& workspace, std::span<float> norms) const {
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == NumParams());
  ASYNCDP_CHECK(static_cast<int64_t>(grad_sum.size()) == NumParams());
  ASYNCDP_CHECK(norms.empty() || norms.size() == batch.size());
  ASYNCDP_CHECK(clip > 0.0);
  CheckData(data);
  auto* ws = dynamic_cast<CnnWorkspace*>(&workspace);
  ASYNCDP_CHECK_MSG(ws != nullptr, "workspace was not created by this CnnModel");

  Eigen::Map<Eigen::VectorXf> sum(grad_sum.data(), NumParams());
  sum.setZero();
  ClipStats stats;
  stats.examples = static_cast<int64_t>(batch.size());
  const int64_t chunk = ws->chunk();
  const int64_t chunks = (stats.examples + chunk - 1) / chunk;
  // The sum is Σ_c partial_c in chunk order. A chunk of one group has partial_c = its group's sum g_c
  // exactly, so a serial run adds g_c straight into the sum: the same float additions, one pass less.
  const bool direct = ws->slots() == 1 && ws->SerialGroups() == 1;
  ws->RunOrdered(
      chunks,
      [&](int64_t c, ThreadScratch& scratch, Slot& slot) {
        const cnn::FlushSubnormals flush;  // per thread (flush_subnormals.h)
        const int64_t first = c * chunk;
        const int64_t count = std::min(chunk, stats.examples - first);
        network_.Load(data, batch.subspan(first, count), scratch.scratch);
        if (c + 1 < chunks) {
          const int64_t next = first + count;
          network_.Prefetch(data, batch.subspan(next, std::min(chunk, stats.examples - next)));
        }
        float* chunk_norms = norms.empty() ? nullptr : norms.data() + first;
        slot.clip_result =
            network_.ClippedGradient(params.data(), clip, direct ? sum.data() : slot.partial.data(),
                                     chunk_norms, scratch.scratch, /*accumulate=*/direct);
      },
      [&](int64_t, Slot& slot) {
        const cnn::FlushSubnormals flush;
        if (!direct) sum += slot.partial;
        stats.clipped += slot.clip_result.clipped;
        stats.norm_sum += slot.clip_result.norm_sum;
      });
  return stats;
}

Evaluation CnnModel::Evaluate(std::span<const float> params, const data::Dataset& data) const {
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == NumParams());
  CheckData(data);
  Evaluation evaluation;
  evaluation.examples = data.rows();
  if (evaluation.examples == 0) return evaluation;
  const int64_t chunk = std::min(chunk_size_, evaluation.examples);
  CnnWorkspace ws(geometry(), chunk, SlotCount(options_.threads, chunk, evaluation.examples),
                  options_.threads,
                  /*with_partial=*/false);
  const int64_t chunks = (evaluation.examples + chunk - 1) / chunk;
  double loss_sum = 0.0;
  int64_t correct = 0;
  ws.RunOrdered(
      chunks,
      [&](int64_t c, ThreadScratch& scratch, Slot& slot) {
        const cnn::FlushSubnormals flush;
        const int64_t first = c * chunk;
        const int64_t count = std::min(chunk, evaluation.examples - first);
        std::iota(scratch.rows.begin(), scratch.rows.begin() + count, first);
        network_.Load(data, std::span<const int64_t>(scratch.rows.data(), count), scratch.scratch);
        network_.Forward(params.data(), scratch.scratch);
        slot.loss_summary = network_.Loss(scratch.scratch, nullptr);
      },
      [&](int64_t, Slot& slot) {
        loss_sum += slot.loss_summary.loss_sum;
        correct += slot.loss_summary.correct;
      });
  evaluation.loss = loss_sum / static_cast<double>(evaluation.examples);
  evaluation.accuracy = static_cast<double>(correct) / static_cast<double>(evaluation.examples);
  return evaluation;
}

}  // namespace asyncdp::models
