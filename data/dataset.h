// An in-memory labelled data set: sparse CSR (LIBSVM) or dense row-major (images) features, float values,
// integer class labels. Rows are examples. Exactly one of `sparse` / `dense` holds the features.
#pragma once

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/data_format.h"

namespace asyncdp::data {

// Image bytes 0..255 are stored as floats in [0, 1] (MNIST/Fashion-MNIST IDX files, CIFAR-10 batches).
inline constexpr float kPixelScale = 1.0f / 255.0f;

using SparseMatrix = Eigen::SparseMatrix<float, Eigen::RowMajor, int32_t>;  // N × d, compressed
using DenseMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;  // N × d

// Image layout of dense rows (CHW order in each row); all zero for non-image data.
struct ImageShape {
  int channels = 0;
  int height = 0;
  int width = 0;
  bool empty() const { return channels == 0; }
};

struct Dataset {
  std::string source;  // where it was read from (path, or a description)
  DataFormat format = DataFormat::kSynthetic;  // what it was read from (kSynthetic: made in memory)
  bool is_sparse = true;
  SparseMatrix sparse;  // used when is_sparse
  DenseMatrix dense;    // used when !is_sparse
  // labels[r] in [0, num_classes()): the normalised class index of row r.
  std::vector<int32_t> labels;
  // class_names[c] = the label token as written in the file for class c (e.g. "-1", "+1", "3").
  // Binary LIBSVM labels are normalised so that the negative/zero label is class 0 and the positive one
  // class 1; this vector records that mapping.
  std::vector<std::string> class_names;
  ImageShape image;
  // Empty (the usual case): every row's features are here. Otherwise only rows r with held[r] carry their
  // features; the others keep their label and are stored with no entries. A process that needs some rows
  // only (an MPI rank: its clients' rows) reads this way (LibsvmOptions::rows_held); Holds() is what code
  // that uses a row's features asserts.
  std::vector<bool> held;
  // Every stored sparse value is exactly 1 (one-hot LIBSVM sets such as a9a): the linear models then read
  // the column indices only (models/linear_kernel.h, BinarySparseRows), the same arithmetic in fewer
  // loads. False is always safe. Set by MarkBinaryValues; code that writes stored values keeps it true
  // only when every value it writes is 1 (data/dataset.cc, models/data_canary.cc).
  bool binary_values = false;

  int64_t rows() const { return static_cast<int64_t>(labels.size()); }
  int64_t features() const { return is_sparse ? sparse.cols() : dense.cols(); }
  int num_classes() const { return static_cast<int>(class_names.size()); }
  int64_t nnz() const;
  bool Holds(int64_t row) const { return held.empty() || held[static_cast<size_t>(row)]; }
  bool HoldsEveryRow() const { return std::find(held.begin(), held.end(), false) == held.end(); }
};

// Sets data.binary_values: sparse, and every stored value exactly 1. O(nnz); the LIBSVM reader calls it.
void MarkBinaryValues(Dataset& data);

// counts[c] = the number of rows with label c, for c in [0, num_classes()).
std::vector<int64_t> ClassCounts(const Dataset& data);

// The rows `indices` (in that order) as a new data set with the same features, classes and shape.
Dataset Subset(const Dataset& data, std::span<const int64_t> indices);

}  // namespace asyncdp::data
