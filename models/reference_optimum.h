// The reference optimum w* of a convex training objective: a full-batch, non-private solver run to a tight
// gradient-norm tolerance, so that a DP-SGD run's suboptimality F(ŵ_t) − F(w*) and distance ||ŵ_t − w*||²
// can be measured the way the convergence theory states its rates (models/convergence_measures.h).
//
// The objective is the model's own per-example loss f — exactly the f whose gradient ClippedGradientSum
// clips and whose mean Evaluate reports, regulariser convention and bias included — averaged over the
// training rows of every client:
//
//   F(w) = (1/N) Σ_p Σ_{r ∈ part p} f(w; x_r),        N = Σ_p rows(p)
//
// Solvers, by model (Model::Name()):
//   "logistic_l2", "logistic"  f = softplus(z) − y z + (μ/2)||w̄_reg||², z = w·x + b (models/linear_model.h).
//        Truncated Newton: conjugate gradients on H p = −∇F to a relative residual min(0.5, sqrt||∇F||)
//        (Hessian-vector products H v = (1/N) Σ s(1−s)(x̃·v) x̃ + μ v_reg, no d × d matrix), then a
//        backtracking Armijo line search. Quadratic convergence near w* for logistic_l2 (H ⪰ μ I). Plain
//        logistic on (partly) separable data has no minimiser; the iterates then run off to infinity along
//        the separating directions while F decreases to its infimum F*, which is what
//        suboptimality needs, and ||∇F|| still reaches the tolerance.
//   "geometric_median"         f = ||θ − x|| (models/geometric_median.h). Weiszfeld's iteration
//        θ⁺ = Σ w_r x_r / Σ w_r, w_r = 1/||θ − x_r||, with the modification of Vardi & Zhang (2000) when θ
//        coincides with data points: with η rows at θ and R = Σ_{x_r ≠ θ} (x_r − θ)/||x_r − θ||,
//        θ⁺ = (1 − γ) T + γ θ, γ = min(1, η/||R||) — θ is optimal iff ||R|| ≤ η. The reported gradient
//        norm is the minimum-norm subgradient, max(0, ||R|| − η)/N.
// Other models (non-convex, or convex without a solver here) have none: HasReferenceSolver is false.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <span>
#include <string>

#include "data/dataset.h"
#include "models/model.h"

namespace asyncdp::models {

struct ReferenceOptimumOptions {
  // Stop when ||∇F(w)|| (the minimum-norm subgradient for the geometric median) is at most this. Default
  // 1e-10: for logistic_l2 (modulus μ) F(w) − F* ≤ ||∇F||²/(2μ), negligible beside any run's
  // suboptimality; F itself is summed in double to ~1e-15 relative. Must be finite and > 0.
  double gradient_tolerance = 1e-10;
  // Iteration cap; 0 = the method's default (Newton: 200 outer iterations; Weiszfeld: 100,000).
  int64_t max_iterations = 0;
};

struct ReferenceOptimum {
  std::string model;       // Model::Name() of the objective
  std::string method;      // "newton_cg" or "weiszfeld"
  Eigen::VectorXd params;  // w*
  double objective = 0.0;  // F(w*), double precision
  // F(w*) as a run measures F: Model::Evaluate (the float path) on w* rounded to float, weighted over the
  // parts. Suboptimality is taken against this value so that float rounding cancels (see
  // models/convergence_measures.h).
  double evaluated_objective = 0.0;
  double gradient_norm = 0.0;  // ||∇F(w*)|| (geometric median: the minimum-norm subgradient)
  int64_t iterations = 0;      // outer iterations used
  int64_t records = 0;         // N
  bool converged = false;      // gradient_norm <= the tolerance
};

// Whether ComputeReferenceOptimum has a solver for `model` (see the table above).
bool HasReferenceSolver(const Model& model);

// w* of F over `parts` (each a client's shard; at least one row in total), started from w = 0 (logistic)
// or the centroid of the rows (geometric median): deterministic, no seed. Throws ConfigError on key
// "model.kind" when the model has no solver and on "reference.gradient_tolerance" for a bad tolerance. Does
// not throw when the iteration cap is reached first: `converged` is then false and gradient_norm says how
// far it got.
ReferenceOptimum ComputeReferenceOptimum(const Model& model, std::span<const data::Dataset* const> parts,
                                         const ReferenceOptimumOptions& options = {});

}  // namespace asyncdp::models
