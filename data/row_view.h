// Rows of a loaded data set by index, without copying them: a client's shard is a RowView into the one
// training set the run loaded, so the examples are in memory once (BENCHMARKS.md, "Memory").
// Reading row indices[j] of *data gives exactly the values a copied shard (Subset) would hold at row j, so a
// view and a copy train bit for bit alike.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "data/dataset.h"

namespace asyncdp::data {

struct RowView {
  const Dataset* data = nullptr;  // not owned; outlives the view
  std::vector<int64_t> indices;   // rows of *data, in the view's order (row j of the view = indices[j])

  int64_t rows() const { return static_cast<int64_t>(indices.size()); }
  std::span<const int64_t> index_span() const { return indices; }
  // The rows as a data set of their own (a copy: for consumers that need a Dataset, e.g. evaluation).
  Dataset Copy() const { return Subset(*data, indices); }
};

}  // namespace asyncdp::data
