// A test-only model wrapper that plants white-box gradient ("Dirac") canaries: the worst-case records of
// Nasr et al. 2023, "Tight auditing of differentially private machine learning", whose per-example
// gradient is a chosen vector of norm C in a direction no other record's gradient touches.
//
// The wrapper appends m parameters to any Model (models/model.h): canary i owns parameter
// base.NumParams() + i, which the loss never reads. Data rows first_canary_row + j (j >= 0) are canaries;
// row first_canary_row + j is canary canary_of_row[j] (identity when the vector is empty), so a run can
// hold any subset of the m canaries (the one-run audit's coin flips) while each canary keeps its
// coordinate. A canary row's per-example gradient is g = norm * e_{base + i} with norm = gradient_norm (or
// exactly C when gradient_norm is 0), so its clipped gradient is min(norm, C) e_{base + i}, and every other
// row's gradient is the wrapped model's, with 0 on the canary coordinates. The clipped sum's canary
// coordinates therefore count C per canary occurrence — the pair N(0, sigma^2 C^2) vs N(C, sigma^2 C^2)
// per step that every accountant assumes for the worst case.
//
// OtherRecords::kOpposite realises the fixed-size-sampling counterexample of the privacy-correctness
// review (docs/audit.md): every non-canary row's gradient is -norm * e_{base} (the wrapped model is not
// evaluated; one canary only), so a batch's canary coordinate moves by 2 min(norm, C) when the canary
// displaces another record.
//
// Everything else (loss, accuracy, initial parameters of the base part) is the wrapped model's; the canary
// coordinates start at 0. The per-example hot path adds one integer range test per batch entry; batches
// without a canary go straight to the wrapped model. Canary rows must exist in the data (their features
// are never read, so any placeholder row serves — data_canary.h's AppendRowCopy).
//
// Thread safety: immutable after construction, like every Model; scratch lives in the Workspace.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/model.h"

namespace asyncdp::models {

enum class OtherRecords {
  kBaseModel,  // non-canary rows: the wrapped model's gradients (the realistic white-box audit)
  kOpposite,   // non-canary rows: gradient -norm * e_canary, wrapped model unused (worst-case batch)
  kCanary,     // every row: gradient +norm * e_canary, wrapped model unused (a whole-client canary: the
               // client's data set is the canary, for user-level audits)
  kZero,       // every row: gradient 0 (the whole-client canary's "out" side: the client's data set removed,
               // its update clip(0) + noise)
};

// A first canary row no data set reaches: the model has canary coordinates but no canary records.
inline constexpr int64_t kNoCanaryRow = std::numeric_limits<int64_t>::max() / 4;

struct DiracCanaryOptions {
  // m >= 1: canaries, i.e. appended parameters.
  int64_t num_canaries = 1;
  // Rows >= first_canary_row of the data are canaries (append them after the client's records).
  int64_t first_canary_row = 0;
  // canary_of_row[j] in [0, m): the canary that row first_canary_row + j is, each at most once. Empty:
  // row first_canary_row + j is canary j for j < m.
  std::vector<int64_t> canary_of_row;
  // Pre-clip norm of a canary's gradient, > 0; 0 (default) means exactly the clip norm C of each call
  // (which must then be finite).
  double gradient_norm = 0.0;
  OtherRecords other_records = OtherRecords::kBaseModel;
};

class DiracCanaryModel final : public Model {
 public:
  // CHECK-fails on invalid options (a test-only wrapper: the caller builds them).
  DiracCanaryModel(std::shared_ptr<const Model> base, DiracCanaryOptions options);

  std::string Name() const override;
  int64_t NumParams() const override { return base_params_ + options_.num_canaries; }
  Eigen::VectorXf InitialParams(uint64_t seed) const override;
  std::unique_ptr<Workspace> NewWorkspace(int64_t max_batch) const override;
  ClipStats ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                               std::span<const int64_t> batch, double clip, std::span<float> grad_sum,
                               Workspace& workspace, std::span<float> norms = {}) const override;
  Evaluation Evaluate(std::span<const float> params, const data::Dataset& data) const override;

  // The parameter canary i owns: the audit projects each step's noisy sum on it.
  int64_t CanaryCoordinate(int64_t canary) const;
  // The canary a data row is, or -1 for an ordinary record.
  int64_t CanaryOfRow(int64_t row) const;
  const Model& base() const { return *base_; }

 private:
  std::shared_ptr<const Model> base_;
  DiracCanaryOptions options_;
  int64_t base_params_;
  int64_t canary_rows_;  // rows first_canary_row .. first_canary_row + canary_rows_ - 1 are canaries
};

}  // namespace asyncdp::models
