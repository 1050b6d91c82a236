#include "data/dataset.h"

#include <algorithm>

#include "core/check.h"

namespace asyncdp::data {

int64_t Dataset::nnz() const {
  return is_sparse ? sparse.nonZeros() : static_cast<int64_t>((dense.array() != 0.0f).count());
}

void MarkBinaryValues(Dataset& data) {
  const float* values = data.sparse.valuePtr();
  data.binary_values = data.is_sparse && std::all_of(values, values + data.sparse.nonZeros(),
                                                     [](float v) { return v == 1.0f; });
}

std::vector<int64_t> ClassCounts(const Dataset& data) {
  std::vector<int64_t> counts(data.class_names.size(), 0);
  for (int32_t label : data.labels) {
    ASYNCDP_CHECK(label >= 0 && label < data.num_classes());
    ++counts[label];
  }
  return counts;
}

Dataset Subset(const Dataset& data, std::span<const int64_t> indices) {
  Dataset out;
  out.source = data.source;
  out.format = data.format;
  out.is_sparse = data.is_sparse;
  out.binary_values = data.binary_values;  // its rows' values are copied unchanged
  out.class_names = data.class_names;
  out.image = data.image;
  if (!data.held.empty()) {
    out.held.reserve(indices.size());
    for (int64_t r : indices) out.held.push_back(data.Holds(r));
  }
  out.labels.reserve(indices.size());
  const auto n = static_cast<int64_t>(indices.size());
  if (data.is_sparse) {
    // Build the CSR arrays directly: rows are copied whole, in the given order.
    int64_t nnz = 0;
    for (int64_t r : indices) {
      ASYNCDP_CHECK(r >= 0 && r < data.rows());
      nnz += data.sparse.outerIndexPtr()[r + 1] - data.sparse.outerIndexPtr()[r];
    }
    out.sparse.resize(n, data.sparse.cols());
    out.sparse.resizeNonZeros(nnz);
    int32_t* outer = out.sparse.outerIndexPtr();
    int64_t pos = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = indices[i];
      outer[i] = static_cast<int32_t>(pos);
      for (int32_t p = data.sparse.outerIndexPtr()[r]; p < data.sparse.outerIndexPtr()[r + 1]; ++p, ++pos) {
        out.sparse.innerIndexPtr()[pos] = data.sparse.innerIndexPtr()[p];
        out.sparse.valuePtr()[pos] = data.sparse.valuePtr()[p];
      }
    }
    outer[n] = static_cast<int32_t>(pos);
  } else {
    out.dense.resize(n, data.dense.cols());
    for (int64_t i = 0; i < n; ++i) {
      ASYNCDP_CHECK(indices[i] >= 0 && indices[i] < data.rows());
      out.dense.row(i) = data.dense.row(indices[i]);
    }
  }
  for (int64_t r : indices) out.labels.push_back(data.labels[r]);
  return out;
}

}  // namespace asyncdp::data
