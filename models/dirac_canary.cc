#include "models/dirac_canary.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/check.h"

namespace asyncdp::models {
namespace {

// The wrapped model's scratch plus room for the batch without its canary rows.
class CanaryWorkspace final : public Workspace {
 public:
  CanaryWorkspace(std::unique_ptr<Workspace> base, int64_t max_batch) : base(std::move(base)) {
    rows.reserve(max_batch);
    positions.reserve(max_batch);
    norms.reserve(max_batch);
  }
  std::unique_ptr<Workspace> base;
  std::vector<int64_t> rows;       // the batch's ordinary rows, in batch order
  std::vector<int64_t> positions;  // their positions in the batch
  std::vector<float> norms;        // their pre-clip norms from the wrapped model
};

}  // namespace

DiracCanaryModel::DiracCanaryModel(std::shared_ptr<const Model> base, DiracCanaryOptions options)
    : base_(std::move(base)), options_(std::move(options)) {
  ASYNCDP_CHECK(base_ != nullptr);
  ASYNCDP_CHECK(options_.num_canaries >= 1 && options_.first_canary_row >= 0);
  ASYNCDP_CHECK(options_.gradient_norm >= 0.0 && std::isfinite(options_.gradient_norm));
  ASYNCDP_CHECK(options_.other_records == OtherRecords::kBaseModel || options_.num_canaries == 1);
  base_params_ = base_->NumParams();
  if (options_.canary_of_row.empty()) {
    canary_rows_ = options_.num_canaries;
  } else {
    canary_rows_ = static_cast<int64_t>(options_.canary_of_row.size());
    std::vector<bool> seen(options_.num_canaries, false);
    for (const int64_t c : options_.canary_of_row) {
      ASYNCDP_CHECK_MSG(c >= 0 && c < options_.num_canaries, "canary_of_row entry out of range");
      ASYNCDP_CHECK_MSG(!seen[c], "a canary appears on two rows");
      seen[c] = true;
    }
  }
}

std::string DiracCanaryModel::Name() const { return "dirac_canary(" + base_->Name() + ")"; }

Eigen::VectorXf DiracCanaryModel::InitialParams(uint64_t seed) const {
  Eigen::VectorXf params = Eigen::VectorXf::Zero(NumParams());
  params.head(base_params_) = base_->InitialParams(seed);
  return params;
}

std::unique_ptr<Workspace> DiracCanaryModel::NewWorkspace(int64_t max_batch) const {
  return std::make_unique<CanaryWorkspace>(base_->NewWorkspace(max_batch), max_batch);
}

int64_t DiracCanaryModel::CanaryCoordinate(int64_t canary) const {
  ASYNCDP_CHECK(canary >= 0 && canary < options_.num_canaries);
  return base_params_ + canary;
}

int64_t DiracCanaryModel::CanaryOfRow(int64_t row) const {
  const int64_t offset = row - options_.first_canary_row;
  if (offset < 0 || offset >= canary_rows_) return -1;
  return options_.canary_of_row.empty() ? offset : options_.canary_of_row[offset];
}

ClipStats DiracCanaryModel::ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                                               std::span<const int64_t> batch, double clip,
                                               std::span<float> grad_sum, Workspace& workspace,
                                               std::span<float> norms) const {
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == NumParams());
  ASYNCDP_CHECK(static_cast<int64_t>(grad_sum.size()) == NumParams());
  ASYNCDP_CHECK(norms.empty() || norms.size() == batch.size());
  auto& ws = static_cast<CanaryWorkspace&>(workspace);
  const std::span<const float> base_params = params.first(base_params_);
  const std::span<float> base_sum = grad_sum.first(base_params_);
  const std::span<float> canary_sum = grad_sum.subspan(base_params_);
  std::fill(canary_sum.begin(), canary_sum.end(), 0.0f);

  const double norm = options_.gradient_norm > 0.0 ? options_.gradient_norm : clip;
  ASYNCDP_CHECK_MSG(std::isfinite(norm), "a canary of norm C needs a finite clip norm");
  const double clipped = std::min(norm, clip);
  auto add_canary_like = [&](ClipStats& stats, size_t position) {
    ++stats.examples;
    stats.clipped += norm > clip;
    stats.norm_sum += norm;
    if (!norms.empty()) norms[position] = static_cast<float>(norm);
  };

  if (options_.other_records != OtherRecords::kBaseModel) {
    // The wrapped model is not evaluated: every row's gradient is a multiple of e_canary.
    std::fill(base_sum.begin(), base_sum.end(), 0.0f);
    const double other = options_.other_records == OtherRecords::kOpposite ? -clipped
                         : options_.other_records == OtherRecords::kCanary ? clipped
                                                                            : 0.0;
    ClipStats stats;
    double coordinate = 0.0;
    for (size_t p = 0; p < batch.size(); ++p) {
      ASYNCDP_CHECK(batch[p] >= 0 && batch[p] < data.rows());
      coordinate += CanaryOfRow(batch[p]) >= 0 ? clipped : other;
      add_canary_like(stats, p);
    }
    canary_sum[0] = static_cast<float>(coordinate);
    return stats;
  }

  // Fast path: no canary in the batch.
  bool any_canary = false;
  for (const int64_t row : batch) any_canary |= CanaryOfRow(row) >= 0;
  if (!any_canary) {
    return base_->ClippedGradientSum(base_params, data, batch, clip, base_sum, *ws.base, norms);
  }

  ws.rows.clear();
  ws.positions.clear();
  ClipStats canaries;
  for (size_t p = 0; p < batch.size(); ++p) {
    const int64_t canary = CanaryOfRow(batch[p]);
    if (canary < 0) {
      ws.rows.push_back(batch[p]);
      ws.positions.push_back(static_cast<int64_t>(p));
      continue;
    }
    ASYNCDP_CHECK(batch[p] < data.rows());
    canary_sum[canary] += static_cast<float>(clipped);
    add_canary_like(canaries, p);
  }
  ClipStats stats;
  if (ws.rows.empty()) {
    std::fill(base_sum.begin(), base_sum.end(), 0.0f);
  } else {
    std::span<float> base_norms;
    if (!norms.empty()) {
      ws.norms.resize(ws.rows.size());
      base_norms = ws.norms;
    }
    stats = base_->ClippedGradientSum(base_params, data, ws.rows, clip, base_sum, *ws.base, base_norms);
    for (size_t j = 0; j < base_norms.size(); ++j) norms[ws.positions[j]] = base_norms[j];
  }
  stats.examples += canaries.examples;
  stats.clipped += canaries.clipped;
  stats.norm_sum += canaries.norm_sum;
  return stats;
}

Evaluation DiracCanaryModel::Evaluate(std::span<const float> params, const data::Dataset& data) const {
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == NumParams());
  return base_->Evaluate(params.first(base_params_), data);
}

}  // namespace asyncdp::models
