// The clipped-gradient-sum kernel of the generalised linear models (models/linear_model.h), templated on
// the loss policy (models/linear_losses.h), the scalar type (float: fast path; double: gradient checks)
// and the row layout (sparse CSR or dense row-major). Internal to models/.
//
// Math. Parameters w_bar = (w, b), params[0..d) = w, params[d] = b. For example (x, y), x~ = (x, 1),
// z = w·x + b, a = l'(z, y) and mu the per-example L2 coefficient (models/regularizer.h), the per-example
// gradient is
//
//   g = a x~ + mu w_bar_reg                       (the regulariser enters BEFORE clipping, §8.2 note)
//
// and, expanding the square, its norm needs only three scalars per example plus one per batch:
//
//   ||g||^2 = a^2 ||x~||^2 + 2 a mu (w_bar_reg · x~) + mu^2 ||w_bar_reg||^2
//
// with ||x~||^2 = ||x||^2 + 1 and w_bar_reg · x~ = w·x + b (bias regularised) or w·x (not). So the clip
// factor c = min(1, C / ||g||) (§2.1) costs O(nnz) per example, and the clipped sum is
//
//   sum_r c_r g_r = sum_r (c_r a_r) x~_r + (sum_r c_r) mu w_bar_reg        — O(nnz + d) per batch,
//
// one scaled-row scatter per example and one axpy per batch. Nothing is allocated.
#pragma once

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "core/check.h"
#include "data/dataset.h"
#include "models/model.h"

namespace asyncdp::models::linear_internal {

// mu and whether the bias coordinate is in w_bar_reg.
struct Regularization {
  double mu = 0.0;
  bool regularize_bias = true;
};

// Rows of a CSR matrix: only the stored entries are visited.
struct SparseRows {
  const int32_t* outer;
  const int32_t* inner;
  const float* values;

  explicit SparseRows(const data::SparseMatrix& m)
      : outer(m.outerIndexPtr()), inner(m.innerIndexPtr()), values(m.valuePtr()) {
    ASYNCDP_CHECK(m.isCompressed());
  }
  // wx = w·x_r, sq = ||x_r||^2. Two independent accumulator pairs halve the dependency chain.
  template <typename S>
  void DotAndSquaredNorm(int64_t r, const S* w, S& wx, S& sq) const {
    int32_t p = outer[r];
    const int32_t end = outer[r + 1];
    S wx0{0}, wx1{0}, sq0{0}, sq1{0};
    for (; p + 1 < end; p += 2) {
      const S v0 = values[p], v1 = values[p + 1];
      wx0 += w[inner[p]] * v0;
      wx1 += w[inner[p + 1]] * v1;
      sq0 += v0 * v0;
      sq1 += v1 * v1;
    }
    if (p < end) {
      const S v = values[p];
      wx0 += w[inner[p]] * v;
      sq0 += v * v;
    }
    wx = wx0 + wx1;
    sq = sq0 + sq1;
  }
  // Hint the cache about row r's entries (random rows of a multi-MB matrix miss L2).
  void Prefetch(int64_t r) const {
    __builtin_prefetch(inner + outer[r]);
    __builtin_prefetch(values + outer[r]);
  }
  // grad[0..d) += scale * x_r
  template <typename S>
  void Axpy(int64_t r, S scale, S* grad) const {
    for (int32_t p = outer[r]; p < outer[r + 1]; ++p) grad[inner[p]] += scale * static_cast<S>(values[p]);
  }
};

// Rows of a CSR matrix whose stored values are all 1 (data::Dataset::binary_values: one-hot LIBSVM sets
// such as a9a). The value array is not read: a clipped sum over random rows is bound by their loads
// (BENCHMARKS.md, "Logistic regression on Zen 3"), and this halves the bytes a row brings in. The
// arithmetic is SparseRows' with v = 1, term for term: w·1 and s·1 are exact (with or without a fused
// multiply-add), and the squared norm counts entries, exact in float below 2^24, so the results are
// identical bit for bit (tests/models/linear_binary_rows_test.cc).
struct BinarySparseRows {
  const int32_t* outer;
  const int32_t* inner;

  explicit BinarySparseRows(const data::SparseMatrix& m)
      : outer(m.outerIndexPtr()), inner(m.innerIndexPtr()) {
    ASYNCDP_CHECK(m.isCompressed());
  }
  template <typename S>
  void DotAndSquaredNorm(int64_t r, const S* w, S& wx, S& sq) const {
    int32_t p = outer[r];
    const int32_t end = outer[r + 1];
    S wx0{0}, wx1{0};
    for (; p + 1 < end; p += 2) {
      wx0 += w[inner[p]];
      wx1 += w[inner[p + 1]];
    }
    if (p < end) wx0 += w[inner[p]];
    wx = wx0 + wx1;
    sq = static_cast<S>(end - outer[r]);
  }
  void Prefetch(int64_t r) const { __builtin_prefetch(inner + outer[r]); }
  template <typename S>
  void Axpy(int64_t r, S scale, S* grad) const {
    for (int32_t p = outer[r]; p < outer[r + 1]; ++p) grad[inner[p]] += scale;
  }
};

// Rows of a dense row-major matrix (vectorised by Eigen).
struct DenseRows {
  const float* x;
  int64_t cols;

  explicit DenseRows(const data::DenseMatrix& m) : x(m.data()), cols(m.cols()) {}
  template <typename S>
  void DotAndSquaredNorm(int64_t r, const S* w, S& wx, S& sq) const {
    const Eigen::Map<const Eigen::VectorXf> row(x + r * cols, cols);
    const Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>> wv(w, cols);
    wx = row.template cast<S>().dot(wv);
    sq = row.template cast<S>().squaredNorm();
  }
  void Prefetch(int64_t r) const { __builtin_prefetch(x + r * cols); }
  template <typename S>
  void Axpy(int64_t r, S scale, S* grad) const {
    const Eigen::Map<const Eigen::VectorXf> row(x + r * cols, cols);
    Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>> g(grad, cols);
    g += scale * row.template cast<S>();
  }
};

// ||w_bar_reg||^2 of a (d + 1)-vector.
template <typename S>
inline S RegularizedSquaredNorm(std::span<const S> params, int64_t d, bool regularize_bias) {
  const Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>> w(params.data(), d);
  return w.squaredNorm() + (regularize_bias ? params[d] * params[d] : S{0});
}

// Examples per pass of ClippedSum; its per-example scalars live on the stack (6 x 64 x sizeof(S) bytes).
inline constexpr size_t kBlock = 64;
// How many examples ahead the dot-product pass prefetches rows.
inline constexpr size_t kPrefetchDistance = 4;

template <typename Loss, typename S, typename Rows>
ClipStats ClippedSum(const Rows& rows, const data::Dataset& data, int64_t d, const Regularization& reg,
                     std::span<const S> params, std::span<const int64_t> batch, double clip,
                     std::span<S> grad_sum, std::span<S> norms) {
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == d + 1);
  ASYNCDP_CHECK(static_cast<int64_t>(grad_sum.size()) == d + 1);
  ASYNCDP_CHECK(norms.empty() || norms.size() == batch.size());
  ASYNCDP_CHECK(clip > 0.0);
  const S* w = params.data();
  const S b = params[d];
  const S mu = static_cast<S>(reg.mu);
  const S reg_sq = mu == S{0} ? S{0} : RegularizedSquaredNorm(params, d, reg.regularize_bias);
  const S bias_in_reg = reg.regularize_bias ? b : S{0};
  const S clip_s = static_cast<S>(clip);
  const int64_t num_rows = data.rows();
  const int32_t* labels = data.labels.data();
  S* grad = grad_sum.data();
  std::fill(grad_sum.begin(), grad_sum.end(), S{0});

  ClipStats stats;
  stats.examples = static_cast<int64_t>(batch.size());
  double norm_sum = 0.0;
  S factor_sum{0};
  // Three passes per block of examples: all dot products first (independent across examples, so their
  // cache misses on random rows overlap), then the per-example scalars as vectorised array expressions
  // (exp, sqrt), then the scatters.
  using Block = Eigen::Array<S, Eigen::Dynamic, 1>;
  using BlockMap = Eigen::Map<Block>;
  alignas(64) S wx_buf[kBlock], x_sq_buf[kBlock], y_buf[kBlock], a_buf[kBlock], norm_buf[kBlock], scale_buf[kBlock];
  for (size_t start = 0; start < batch.size(); start += kBlock) {
    const size_t m = std::min(kBlock, batch.size() - start);
    const int64_t* rows_in_block = batch.data() + start;
    for (size_t i = 0; i < m; ++i) {
      const int64_t r = rows_in_block[i];
      ASYNCDP_CHECK(r >= 0 && r < num_rows);
      if (i + kPrefetchDistance < m) {
        const int64_t ahead = rows_in_block[i + kPrefetchDistance];
        if (ahead >= 0 && ahead < num_rows) rows.Prefetch(ahead);
      }
      rows.DotAndSquaredNorm(r, w, wx_buf[i], x_sq_buf[i]);
      y_buf[i] = static_cast<S>(labels[r]);
    }
    const auto size = static_cast<Eigen::Index>(m);
    BlockMap wx(wx_buf, size), x_sq(x_sq_buf, size), y(y_buf, size), a(a_buf, size), norm(norm_buf, size),
        scale(scale_buf, size);
    Loss::Derivatives(wx + b, y, a);
    // ||x~||^2 = ||x||^2 + 1 (the bias coordinate); w_bar_reg·x~ = w·x (+ b if the bias is regularised).
    if (mu == S{0}) {
      norm = a.abs() * (x_sq + S{1}).sqrt();
    } else {
      norm = (a.square() * (x_sq + S{1}) + mu * (S{2} * a * (wx + bias_in_reg) + mu * reg_sq)).max(S{0}).sqrt();
    }
    // c = min(1, C / ||g||) (§2.1, as core/clipping.h's ClipFactor); kept in scale until multiplied by a.
    scale = (norm > clip_s).select(clip_s / norm, S{1});
    factor_sum += scale.sum();
    stats.clipped += (norm > clip_s).count();
    norm_sum += norm.template cast<double>().sum();
    if (!norms.empty()) std::copy_n(norm_buf, m, norms.begin() + start);
    scale *= a;
    for (size_t i = 0; i < m; ++i) {
      rows.Axpy(rows_in_block[i], scale_buf[i], grad);
      grad[d] += scale_buf[i];
    }
  }
  if (mu != S{0}) {
    // + (sum_r c_r) mu w_bar_reg
    const S k = factor_sum * mu;
    for (int64_t j = 0; j < d; ++j) grad[j] += k * w[j];
    if (reg.regularize_bias) grad[d] += k * b;
  }
  stats.norm_sum = norm_sum;
  return stats;
}

// f(w_bar; x_r, y_r) = l(z_r, y_r) + (mu/2) ||w_bar_reg||^2.
template <typename Loss, typename S, typename Rows>
S ExampleLoss(const Rows& rows, const data::Dataset& data, int64_t d, const Regularization& reg,
              std::span<const S> params, int64_t r) {
  ASYNCDP_CHECK(r >= 0 && r < data.rows());
  S wx, x_sq;
  rows.DotAndSquaredNorm(r, params.data(), wx, x_sq);
  const S reg_term = static_cast<S>(reg.mu) / S{2} * RegularizedSquaredNorm(params, d, reg.regularize_bias);
  return Loss::Value(wx + params[d], data.labels[r]) + reg_term;
}

// Mean of f over all rows (loss in double) and accuracy of Loss::Predict.
template <typename Loss, typename Rows>
Evaluation Evaluate(const Rows& rows, const data::Dataset& data, int64_t d, const Regularization& reg,
                    std::span<const float> params) {
  Evaluation e;
  e.examples = data.rows();
  if (e.examples == 0) return e;
  double loss_sum = 0.0;
  int64_t correct = 0;
  for (int64_t r = 0; r < data.rows(); ++r) {
    float wx, x_sq;
    rows.DotAndSquaredNorm(r, params.data(), wx, x_sq);
    const double z = static_cast<double>(wx) + params[d];
    loss_sum += Loss::Value(z, data.labels[r]);
    correct += Loss::Predict(z, data.num_classes()) == data.labels[r];
  }
  const double reg_term = reg.mu / 2.0 * static_cast<double>(RegularizedSquaredNorm(params, d, reg.regularize_bias));
  e.loss = loss_sum / static_cast<double>(e.examples) + reg_term;
  e.accuracy = static_cast<double>(correct) / static_cast<double>(e.examples);
  return e;
}

// fn(SparseRows), fn(BinarySparseRows) or fn(DenseRows): one instantiation of a row loop per storage,
// chosen once per call.
template <typename Fn>
decltype(auto) WithRows(const data::Dataset& data, Fn&& fn) {
  if (data.is_sparse && data.binary_values) return fn(BinarySparseRows(data.sparse));
  if (data.is_sparse) return fn(SparseRows(data.sparse));
  return fn(DenseRows(data.dense));
}

}  // namespace asyncdp::models::linear_internal
