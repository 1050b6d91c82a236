#include "tests/models/synthetic_data.h"

#include <Eigen/SparseCore>

#include <algorithm>
#include <set>

namespace asyncdp::models::synthetic {

data::Dataset MakeSyntheticData(uint64_t seed, int64_t rows, int64_t features, int num_classes, bool sparse,
                                int nnz_per_row) {
  RandomStream stream(StreamKey{seed, 0, 0, StreamPurpose::kTest});
  Eigen::MatrixXd planted(num_classes, features);
  for (int64_t i = 0; i < planted.size(); ++i) planted.data()[i] = stream.NextNormal();

  data::Dataset out;
  out.source = "synthetic";
  out.format = data::DataFormat::kSynthetic;
  out.is_sparse = sparse;
  for (int c = 0; c < num_classes; ++c) out.class_names.push_back(std::to_string(c));
  data::DenseMatrix dense = data::DenseMatrix::Zero(rows, features);
  for (int64_t r = 0; r < rows; ++r) {
    if (sparse) {
      std::set<int64_t> columns;
      while (static_cast<int>(columns.size()) < std::min<int64_t>(nnz_per_row, features)) {
        columns.insert(static_cast<int64_t>(stream.NextBelow(features)));
      }
      for (const int64_t j : columns) dense(r, j) = static_cast<float>(stream.NextNormal());
    } else {
      for (int64_t j = 0; j < features; ++j) dense(r, j) = static_cast<float>(stream.NextNormal());
    }
    Eigen::Index label;
    (planted * dense.row(r).cast<double>().transpose()).maxCoeff(&label);
    out.labels.push_back(static_cast<int32_t>(label));
  }
  if (sparse) {
    out.sparse = dense.sparseView();
    out.sparse.makeCompressed();
  } else {
    out.dense = std::move(dense);
  }
  return out;
}

data::Dataset ConvertStorage(const data::Dataset& data) {
  data::Dataset out = data;
  if (data.is_sparse) {
    out.is_sparse = false;
    out.dense = data.sparse.toDense();
    out.sparse = data::SparseMatrix();
  } else {
    out.is_sparse = true;
    out.sparse = data.dense.sparseView();
    out.sparse.makeCompressed();
    out.dense = data::DenseMatrix();
  }
  return out;
}

std::vector<double> RandomParams(uint64_t seed, int64_t size, double scale) {
  RandomStream stream(StreamKey{seed, 0, 0, StreamPurpose::kTest});
  std::vector<double> params(size);
  for (int64_t i = 0; i < size; ++i) params[i] = scale * stream.NextNormal();
  return params;
}

std::vector<ModelCase> AllModelCases() {
  std::vector<ModelCase> cases;
  auto add = [&](std::string name, std::string kind, bool sparse, int classes) -> ModelOptions& {
    ModelCase c;
    c.name = std::move(name);
    c.options.kind = std::move(kind);
    c.sparse = sparse;
    c.num_classes = classes;
    cases.push_back(c);
    return cases.back().options;
  };
  add("logistic_sparse", "logistic", true, 2);
  add("logistic_dense", "logistic", false, 2);
  add("logistic_l2_sparse", "logistic_l2", true, 2).l2_lambda = 0.3;
  {
    ModelOptions& o = add("logistic_l2_literal_unregularised_bias_dense", "logistic_l2", false, 2);
    o.l2_lambda = 2.0;
    o.regularizer_convention = RegularizerConvention::kLiteral;
    o.regularizer_num_records = 5;
    o.regularize_bias = false;
  }
  add("linear_sparse", "linear", true, 3);
  add("linear_l2_dense", "linear", false, 2).l2_lambda = 0.2;
  add("svm_sparse", "svm", true, 2);
  add("svm_l2_dense", "svm", false, 2).l2_lambda = 0.25;
  add("softmax_sparse", "softmax", true, 4);
  {
    ModelOptions& o = add("softmax_l2_unregularised_bias_dense", "softmax", false, 3);
    o.l2_lambda = 0.1;
    o.regularize_bias = false;
  }
  add("mlp_relu_sparse", "mlp", true, 3).hidden = {6, 5};
  {
    ModelOptions& o = add("mlp_tanh_l2_dense", "mlp", false, 4);
    o.hidden = {7};
    o.activation = Activation::kTanh;
    o.l2_lambda = 0.05;
  }
  add("mlp_relu_dense_binary", "mlp", false, 2).hidden = {8, 4};
  return cases;
}

}  // namespace asyncdp::models::synthetic
