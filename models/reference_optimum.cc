#include "models/reference_optimum.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "core/error.h"
#include "models/geometric_median.h"
#include "models/linear_kernel.h"
#include "models/linear_losses.h"
#include "models/linear_model.h"
#include "models/objective.h"

namespace asyncdp::models {
namespace {

using linear_internal::DenseRows;
using linear_internal::SparseRows;
using Parts = std::span<const data::Dataset* const>;

template <typename Fn>
decltype(auto) WithRows(const data::Dataset& data, Fn&& fn) {
  if (data.is_sparse) return fn(SparseRows(data.sparse));
  return fn(DenseRows(data.dense));
}

int64_t TotalRows(Parts parts) {
  int64_t n = 0;
  for (const data::Dataset* part : parts) n += part->rows();
  return n;
}

// ---- logistic regression: truncated Newton ----------------------------------------------------------

// The objective of models/linear_model.h with the logistic loss: parameters (w, b), d = w's size.
class LogisticObjective {
 public:
  LogisticObjective(const LinearModel& model, Parts parts)
      : parts_(parts),
        d_(model.options().num_features),
        mu_(model.l2_coefficient()),
        regularize_bias_(model.options().l2.regularize_bias),
        n_(static_cast<double>(TotalRows(parts))) {
    for (const data::Dataset* part : parts) curvature_.emplace_back(part->rows());
  }

  int64_t size() const { return d_ + 1; }

  // F(w̄) = (1/N) Σ l(z_r, y_r) + (μ/2)||w̄_reg||²; with `gradient` non-null also ∇F, and the curvatures
  // s_r(1 − s_r) and Hessian diagonal that HessianTimes and HessianDiagonal use (at this w̄).
  double Evaluate(const Eigen::VectorXd& w, Eigen::VectorXd* gradient) {
    double loss = 0.0;
    if (gradient != nullptr) {
      gradient->setZero(size());
      diagonal_.setZero(size());
    }
    for (size_t p = 0; p < parts_.size(); ++p) {
      const data::Dataset& data = *parts_[p];
      WithRows(data, [&](const auto& rows) {
        for (int64_t r = 0; r < data.rows(); ++r) {
          double wx = 0.0, x_sq = 0.0;
          rows.DotAndSquaredNorm(r, w.data(), wx, x_sq);
          const double z = wx + w[d_];
          const int32_t y = data.labels[r];
          loss += LogisticLoss::Value(z, y);
          if (gradient == nullptr) continue;
          const double s = 1.0 / (1.0 + std::exp(-z));
          curvature_[p][r] = s * (1.0 - s);
          const double a = s - static_cast<double>(y);
          rows.Axpy(r, a, gradient->data());
          (*gradient)[d_] += a;
          AddSquares(rows, r, curvature_[p][r], diagonal_.data());
          diagonal_[d_] += curvature_[p][r];
        }
      });
    }
    const Eigen::VectorXd reg = Regularized(w);
    if (gradient != nullptr) {
      *gradient = *gradient / n_ + mu_ * reg;
      diagonal_ /= n_;
      diagonal_.head(d_).array() += mu_;
      if (regularize_bias_) diagonal_[d_] += mu_;
    }
    return loss / n_ + 0.5 * mu_ * reg.squaredNorm();
  }

  // diag(H) at the point of the last Evaluate with a gradient (the CG preconditioner).
  const Eigen::VectorXd& HessianDiagonal() const { return diagonal_; }

  // H v at the point of the last Evaluate with a gradient.
  Eigen::VectorXd HessianTimes(const Eigen::VectorXd& v) const {
    Eigen::VectorXd out = Eigen::VectorXd::Zero(size());
    for (size_t p = 0; p < parts_.size(); ++p) {
      const data::Dataset& data = *parts_[p];
      WithRows(data, [&](const auto& rows) {
        for (int64_t r = 0; r < data.rows(); ++r) {
          double xv = 0.0, x_sq = 0.0;
          rows.DotAndSquaredNorm(r, v.data(), xv, x_sq);
          const double scale = curvature_[p][r] * (xv + v[d_]);
          rows.Axpy(r, scale, out.data());
          out[d_] += scale;
        }
      });
    }
    return out / n_ + mu_ * Regularized(v);
  }

 private:
  // w̄_reg: w̄ with the bias zeroed unless it is regularised.
  Eigen::VectorXd Regularized(const Eigen::VectorXd& w) const {
    Eigen::VectorXd reg = w;
    if (!regularize_bias_) reg[d_] = 0.0;
    return reg;
  }

  Parts parts_;
  int64_t d_;
  double mu_;
  bool regularize_bias_;
  double n_;
  // out[j] += scale · x_rj² over the stored entries of row r.
  static void AddSquares(const SparseRows& rows, int64_t r, double scale, double* out) {
    for (int32_t p = rows.outer[r]; p < rows.outer[r + 1]; ++p) {
      const double v = rows.values[p];
      out[rows.inner[p]] += scale * v * v;
    }
  }
  static void AddSquares(const DenseRows& rows, int64_t r, double scale, double* out) {
    for (int64_t j = 0; j < rows.cols; ++j) {
      const double v = rows.x[r * rows.cols + j];
      out[j] += scale * v * v;
    }
  }

  std::vector<std::vector<double>> curvature_;  // per part, per row: s(1 − s)
  Eigen::VectorXd diagonal_;                    // diag(H)
};

// Conjugate gradients on H p = −g, preconditioned by diag(H) (a9a's one-hot features occur at very
// different rates, so H's diagonal spans orders of magnitude), to ||H p + g|| <= forcing · ||g||, at most
// `max_steps` steps. Stops at a direction of non-positive curvature (plain logistic is only positive
// semi-definite along separating directions), returning the iterate so far or, on the first step, the
// preconditioned steepest-descent direction.
Eigen::VectorXd NewtonDirection(const LogisticObjective& objective, const Eigen::VectorXd& g, double forcing,
                                int64_t max_steps) {
  const Eigen::VectorXd inverse_diagonal =
      objective.HessianDiagonal().unaryExpr([](double h) { return h > 0.0 ? 1.0 / h : 1.0; });
  Eigen::VectorXd p = Eigen::VectorXd::Zero(g.size());
  Eigen::VectorXd residual = -g;
  Eigen::VectorXd preconditioned = inverse_diagonal.cwiseProduct(residual);
  Eigen::VectorXd direction = preconditioned;
  double rz = residual.dot(preconditioned);
  const double target_sq = forcing * forcing * g.squaredNorm();
  for (int64_t step = 0; step < max_steps && residual.squaredNorm() > target_sq; ++step) {
    const Eigen::VectorXd hd = objective.HessianTimes(direction);
    const double curvature = direction.dot(hd);
    if (!(curvature > 0.0)) return step == 0 ? Eigen::VectorXd(direction) : p;
    const double alpha = rz / curvature;
    p += alpha * direction;
    residual -= alpha * hd;
    preconditioned = inverse_diagonal.cwiseProduct(residual);
    const double next_rz = residual.dot(preconditioned);
    direction = preconditioned + (next_rz / rz) * direction;
    rz = next_rz;
  }
  return p;
}

ReferenceOptimum SolveLogistic(const LinearModel& model, Parts parts, double tolerance,
                               int64_t max_iterations) {
  LogisticObjective objective(model, parts);
  ReferenceOptimum result;
  result.method = "newton_cg";
  Eigen::VectorXd w = Eigen::VectorXd::Zero(objective.size());
  Eigen::VectorXd g;
  double f = objective.Evaluate(w, &g);
  const int64_t cg_steps = std::max<int64_t>(50, 2 * objective.size());
  while (result.iterations < max_iterations && g.norm() > tolerance) {
    ++result.iterations;
    const double g_norm = g.norm();
    const Eigen::VectorXd p = NewtonDirection(objective, g, std::min(0.5, std::sqrt(g_norm)), cg_steps);
    const double slope = g.dot(p);
    if (!(slope < 0.0)) break;  // no descent direction left at double precision
    // Armijo backtracking from the full Newton step. Near w* the decrease |slope| falls below the
    // rounding of F (~1e-16 |F|); the full step is then accepted when it shrinks the gradient.
    const bool below_resolution = -slope < 1e-13 * std::max(1.0, std::abs(f));
    double step = 1.0;
    bool accepted = false;
    Eigen::VectorXd trial, trial_gradient;
    for (int halvings = 0; halvings < 60 && !accepted; ++halvings, step *= 0.5) {
      trial = w + step * p;
      const double trial_f = objective.Evaluate(trial, &trial_gradient);
      if (trial_f <= f + 1e-4 * step * slope || (below_resolution && trial_gradient.norm() < g_norm)) {
        w = trial;
        f = trial_f;
        g = trial_gradient;
        accepted = true;
      }
    }
    if (!accepted) {
      objective.Evaluate(w, &g);  // restore the curvatures of w
      break;
    }
  }
  result.params = std::move(w);
  result.objective = f;
  result.gradient_norm = g.norm();
  return result;
}

// ---- geometric median: Weiszfeld with the Vardi-Zhang step ------------------------------------------

struct WeiszfeldStep {
  Eigen::VectorXd weighted_sum;  // Σ_{x_r ≠ θ} x_r / ||θ − x_r||
  double weight_sum = 0.0;       // Σ_{x_r ≠ θ} 1 / ||θ − x_r||
  double coincident = 0.0;       // η: rows at θ (within models/geometric_median.h's coincidence radius)
  double objective = 0.0;        // Σ_r ||θ − x_r||
  const data::Dataset* coincident_part = nullptr;  // one of the coincident rows, if any
  int64_t coincident_row = -1;
};

WeiszfeldStep WeiszfeldSums(Parts parts, const Eigen::VectorXd& theta) {
  WeiszfeldStep s;
  s.weighted_sum = Eigen::VectorXd::Zero(theta.size());
  const double theta_sq = theta.squaredNorm();
  for (const data::Dataset* part : parts) {
    WithRows(*part, [&](const auto& rows) {
      for (int64_t r = 0; r < part->rows(); ++r) {
        double dot = 0.0, x_sq = 0.0;
        rows.DotAndSquaredNorm(r, theta.data(), dot, x_sq);
        const double dist_sq = theta_sq - 2.0 * dot + x_sq;
        if (dist_sq <= kCoincidenceRadius * kCoincidenceRadius * (theta_sq + x_sq)) {
          s.coincident += 1.0;
          s.coincident_part = part;
          s.coincident_row = r;
          continue;
        }
        const double dist = std::sqrt(dist_sq);
        s.objective += dist;
        s.weight_sum += 1.0 / dist;
        rows.Axpy(r, 1.0 / dist, s.weighted_sum.data());
      }
    });
  }
  return s;
}

ReferenceOptimum SolveGeometricMedian(const GeometricMedianModel& model, Parts parts, double tolerance,
                                      int64_t max_iterations) {
  const double n = static_cast<double>(TotalRows(parts));
  const int64_t d = model.NumParams();
  ReferenceOptimum result;
  result.method = "weiszfeld";
  // Start at the centroid (inside the convex hull, where the median lies).
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(d);
  for (const data::Dataset* part : parts) {
    WithRows(*part, [&](const auto& rows) {
      for (int64_t r = 0; r < part->rows(); ++r) rows.Axpy(r, 1.0 / n, theta.data());
    });
  }
  while (true) {
    const WeiszfeldStep s = WeiszfeldSums(parts, theta);
    // R = Σ_{x_r ≠ θ} (x_r − θ)/||x_r − θ|| = −N ∇F(θ) away from the data points.
    const Eigen::VectorXd pull = s.weighted_sum - s.weight_sum * theta;
    const double pull_norm = pull.norm();
    result.objective = s.objective / n;
    result.gradient_norm = std::max(0.0, pull_norm - s.coincident) / n;
    if (s.coincident > 0.0 && pull_norm <= s.coincident) {
      // Optimal at the data point θ is within the coincidence radius of: move onto it exactly (the
      // iterates approach such a median only sublinearly), then stop.
      Eigen::VectorXd row = Eigen::VectorXd::Zero(d);
      WithRows(*s.coincident_part, [&](const auto& rows) { rows.Axpy(s.coincident_row, 1.0, row.data()); });
      if (row != theta) {
        theta = std::move(row);
        continue;
      }
    }
    if (result.gradient_norm <= tolerance || result.iterations >= max_iterations || s.weight_sum == 0.0)
      break;
    ++result.iterations;
    const Eigen::VectorXd target = s.weighted_sum / s.weight_sum;  // T(θ)
    const double gamma = s.coincident > 0.0 ? std::min(1.0, s.coincident / pull_norm) : 0.0;
    Eigen::VectorXd next = (1.0 - gamma) * target + gamma * theta;
    if (next == theta) break;  // a fixed point at double precision
    theta = std::move(next);
  }
  result.params = std::move(theta);
  return result;
}

}  // namespace

bool HasReferenceSolver(const Model& model) {
  if (dynamic_cast<const GeometricMedianModel*>(&model) != nullptr) return true;
  const auto* linear = dynamic_cast<const LinearModel*>(&model);
  return linear != nullptr && linear->options().loss == LinearLoss::kLogistic;
}

ReferenceOptimum ComputeReferenceOptimum(const Model& model, Parts parts,
                                         const ReferenceOptimumOptions& options) {
  if (!HasReferenceSolver(model)) {
    throw ConfigError("model.kind",
                      "no reference-optimum solver for '" + model.Name() +
                          "' (convex objectives only: logistic, logistic_l2, geometric_median)");
  }
  if (!std::isfinite(options.gradient_tolerance) || options.gradient_tolerance <= 0.0) {
    throw ConfigError("reference.gradient_tolerance",
                      "must be a finite number > 0, got " + std::to_string(options.gradient_tolerance));
  }
  ASYNCDP_CHECK(options.max_iterations >= 0);
  const int64_t records = TotalRows(parts);
  ASYNCDP_CHECK_MSG(records > 0, "the reference optimum needs at least one row");
  ReferenceOptimum result;
  if (const auto* median = dynamic_cast<const GeometricMedianModel*>(&model)) {
    result = SolveGeometricMedian(*median, parts, options.gradient_tolerance,
                                  options.max_iterations > 0 ? options.max_iterations : 100000);
  } else {
    result = SolveLogistic(dynamic_cast<const LinearModel&>(model), parts, options.gradient_tolerance,
                           options.max_iterations > 0 ? options.max_iterations : 200);
  }
  result.model = model.Name();
  result.records = records;
  result.converged = result.gradient_norm <= options.gradient_tolerance;
  const Eigen::VectorXf rounded = result.params.cast<float>();
  result.evaluated_objective = ObjectiveValue(
      model, parts, std::span<const float>(rounded.data(), static_cast<size_t>(rounded.size())));
  return result;
}

}  // namespace asyncdp::models
