#include "models/data_canary.h"

#include <cmath>

#include "core/check.h"
#include "core/random.h"

namespace asyncdp::models {

data::Dataset AddEmptyFeature(const data::Dataset& data) {
  data::Dataset out = data;
  if (data.is_sparse) {
    out.sparse.conservativeResize(data.sparse.rows(), data.sparse.cols() + 1);
  } else {
    out.dense.conservativeResize(data.dense.rows(), data.dense.cols() + 1);
    out.dense.col(data.dense.cols()).setZero();
  }
  out.source = data.source + " + empty canary feature";
  return out;
}

data::Dataset AppendRow(const data::Dataset& data, const std::vector<FeatureValue>& features, int32_t label) {
  ASYNCDP_CHECK(label >= 0 && label < data.num_classes());
  const int64_t rows = data.rows();
  const int64_t cols = data.features();
  std::vector<bool> used(cols, false);
  for (const FeatureValue& f : features) {
    ASYNCDP_CHECK(f.column >= 0 && f.column < cols && !used[f.column] && std::isfinite(f.value));
    used[f.column] = true;
  }
  data::Dataset out = data;
  if (data.is_sparse) {
    out.sparse.conservativeResize(rows + 1, cols);
    out.sparse.reserve(data.sparse.nonZeros() + static_cast<int64_t>(features.size()));
    for (const FeatureValue& f : features) {
      if (f.value == 0.0f) continue;
      out.sparse.insert(rows, static_cast<int32_t>(f.column)) = f.value;
      out.binary_values = out.binary_values && f.value == 1.0f;
    }
    out.sparse.makeCompressed();
  } else {
    out.dense.conservativeResize(rows + 1, cols);
    out.dense.row(rows).setZero();
    for (const FeatureValue& f : features) out.dense(rows, f.column) = f.value;
  }
  out.labels.push_back(label);
  return out;
}

data::Dataset AppendRowCopy(const data::Dataset& data, int64_t source, int32_t label) {
  ASYNCDP_CHECK(source >= 0 && source < data.rows());
  std::vector<FeatureValue> features;
  if (data.is_sparse) {
    for (data::SparseMatrix::InnerIterator it(data.sparse, source); it; ++it) {
      features.push_back({it.col(), it.value()});
    }
  } else {
    for (int64_t j = 0; j < data.dense.cols(); ++j) {
      if (data.dense(source, j) != 0.0f) features.push_back({j, data.dense(source, j)});
    }
  }
  return AppendRow(data, features, label);
}

data::Dataset WithFeatureCanary(const data::Dataset& data, float value, int32_t label, bool include,
                                FeatureCanary* canary) {
  ASYNCDP_CHECK(canary != nullptr);
  ASYNCDP_CHECK(value != 0.0f && std::isfinite(value) && (label == 0 || label == 1));
  ASYNCDP_CHECK(data.num_classes() == 2);
  canary->column = data.features();
  canary->value = value;
  canary->label = label;
  canary->bias_param = canary->column + 1;
  data::Dataset widened = AddEmptyFeature(data);
  if (!include) return widened;
  data::Dataset out = AppendRow(widened, {{canary->column, value}}, label);
  out.source = data.source + " + feature canary";
  return out;
}

std::vector<double> LogisticFeatureCanaryDirection(const FeatureCanary& canary, int64_t num_params) {
  ASYNCDP_CHECK(canary.bias_param < num_params && canary.column < canary.bias_param);
  // Gradient (s(z) - y) (v e_column + e_bias): s(z) - y < 0 for y = 1 and > 0 for y = 0.
  const double sign = canary.label == 1 ? -1.0 : 1.0;
  const double v = canary.value;
  const double norm = std::sqrt(v * v + 1.0);
  std::vector<double> u(num_params, 0.0);
  u[canary.column] = sign * v / norm;
  u[canary.bias_param] = sign / norm;
  return u;
}

MislabelledCanary ChooseMislabelledCanary(const data::Dataset& data, uint64_t seed) {
  ASYNCDP_CHECK(data.rows() >= 1 && data.num_classes() >= 2);
  // Round 1 of the audit stream (round 0 holds the one-run audit's inclusion coins).
  RandomStream stream(StreamKey{seed, 0, 1, StreamPurpose::kAuditCanaries});
  MislabelledCanary canary;
  canary.source_row = static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(data.rows())));
  const int32_t original = data.labels[canary.source_row];
  // Uniform over the other num_classes - 1 labels: draw in [0, K - 1) and skip the original.
  const auto draw = static_cast<int32_t>(stream.NextBelow(static_cast<uint64_t>(data.num_classes() - 1)));
  canary.label = draw >= original ? draw + 1 : draw;
  return canary;
}

}  // namespace asyncdp::models
