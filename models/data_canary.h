// Data-level canaries for auditing (docs/audit.md): records added to a client's data, as opposed to the
// gradient-level Dirac canary of models/dirac_canary.h.
//
// Feature canary (linear models): one extra feature column that no real record uses, and a canary row
// whose only non-zero feature is that column (value v) with label y. For logistic regression its
// per-example gradient is (s(z) - y) (v e_new + e_bias) (models/linear_losses.h), so its direction is the
// fixed unit vector u = sign * (v e_new + e_bias) / sqrt(v^2 + 1), sign = -1 for y = 1 and +1 for y = 0,
// and its clipped gradient is exactly C u whenever |s(z) - y| sqrt(v^2 + 1) >= C. No other record's
// gradient touches e_new (without an L2 term on w); all of them touch the bias, so u is orthogonal to
// them only up to the 1 / sqrt(v^2 + 1) bias share — the data-level approximation of the Dirac canary.
//
// Mislabelled canary (any model, the "input-space" canary of the black-box experiments of Steinke et al. 2023
// and Nasr et al. 2023): a copy of a real record chosen from a seed with a label changed to another class
// chosen from the same seed, appended as a new row. Its gradient is whatever the model makes of it — the
// realistic black-box view.
//
// All helpers return new data sets (the input is not modified); appended rows come last, so row indices
// of the original records are unchanged and the canary rows start at the original row count.
#pragma once

#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace asyncdp::models {

// `data` with one more feature column, all zero (sparse: a wider matrix; dense: a zero column).
data::Dataset AddEmptyFeature(const data::Dataset& data);

// `data` with one row appended: the given features (column, value pairs with distinct columns in
// [0, features)) and label in [0, num_classes).
struct FeatureValue {
  int64_t column = 0;
  float value = 0.0f;
};
data::Dataset AppendRow(const data::Dataset& data, const std::vector<FeatureValue>& features, int32_t label);

// `data` with a copy of row `source` appended, relabelled `label` (use the original label for a plain
// placeholder row, e.g. for the Dirac canary whose features are never read).
data::Dataset AppendRowCopy(const data::Dataset& data, int64_t source, int32_t label);

struct FeatureCanary {
  int64_t column = 0;      // the added feature: parameter `column` of a linear model on the widened data
  float value = 0.0f;      // v != 0
  int32_t label = 1;       // y in {0, 1}
  int64_t bias_param = 0;  // the linear model's bias parameter (= number of features, column + 1)
};

// The widened data (one new column, index data.features()) and, if `include`, the canary row appended:
// "in" runs train on include = true, "out" runs on include = false; both have the same width, so one
// model serves both. v != 0 finite, label in {0, 1} (binary data).
data::Dataset WithFeatureCanary(const data::Dataset& data, float value, int32_t label, bool include,
                                FeatureCanary* canary);

// The unit vector u of the logistic feature canary's clipped gradient, dense over a linear model's
// num_params = features + 1 parameters (zero except the canary column and the bias).
std::vector<double> LogisticFeatureCanaryDirection(const FeatureCanary& canary, int64_t num_params);

struct MislabelledCanary {
  int64_t source_row = 0;  // the real record copied
  int32_t label = 0;       // its new label, != the original
};

// A reproducible choice from `seed` (stream {seed, 0, 1, kAuditCanaries}): source row uniform over the
// rows, new label uniform over the other classes. Needs >= 1 row and >= 2 classes.
MislabelledCanary ChooseMislabelledCanary(const data::Dataset& data, uint64_t seed);

}  // namespace asyncdp::models
