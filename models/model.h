// The per-example model contract every model implements (conventions.md §7). The DP step is built from
// small stages — per-example gradient → clip to C → sum over the batch → (noise, added by the caller) —
// and ClippedGradientSum is the hot primitive that does the first three without per-example allocation.
//
// Thread safety: a Model is immutable after construction and may be shared by all client threads. All
// mutable scratch lives in a Workspace, which belongs to exactly one caller at a time.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>

#include "data/dataset.h"

namespace asyncdp::models {

// Scratch buffers sized for one caller (e.g. one client); created by Model::NewWorkspace.
class Workspace {
 public:
  virtual ~Workspace() = default;
};

// Diagnostics of one ClippedGradientSum call.
struct ClipStats {
  int64_t examples = 0;   // batch size
  int64_t clipped = 0;    // examples whose pre-clip norm exceeded C
  double norm_sum = 0.0;  // sum of pre-clip per-example gradient norms (mean = norm_sum / examples)
};

struct Evaluation {
  double loss = 0.0;      // mean per-example loss (including the regulariser term, if any)
  double accuracy = 0.0;  // fraction of rows whose predicted class equals the label
  int64_t examples = 0;
};

// C = kNoClip disables clipping (non-private baselines).
inline constexpr double kNoClip = std::numeric_limits<double>::infinity();

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string Name() const = 0;
  virtual int64_t NumParams() const = 0;
  // Initial parameters, deterministic in `seed` (StreamPurpose::kModelInit).
  virtual Eigen::VectorXf InitialParams(uint64_t seed) const = 0;
  // Scratch for batches of up to max_batch examples (larger batches are processed in chunks).
  virtual std::unique_ptr<Workspace> NewWorkspace(int64_t max_batch) const = 0;

  // grad_sum (size NumParams(); overwritten) = Σ_{r ∈ batch} clip_C(∇f(params; x_r, y_r)), with
  // clip_C(x) = x / max(1, ||x||_2 / C) applied to each example's full gradient (docs/theory.md §2).
  // If `norms` is non-empty (size batch.size()) it receives each pre-clip norm.
  virtual ClipStats ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                                       std::span<const int64_t> batch, double clip,
                                       std::span<float> grad_sum, Workspace& workspace,
                                       std::span<float> norms = {}) const = 0;

  // Mean loss and accuracy of `params` on all rows of `data`.
  virtual Evaluation Evaluate(std::span<const float> params, const data::Dataset& data) const = 0;
};

}  // namespace asyncdp::models
