// The Proactive-DP paper's DP calculators (Appendix D.4; docs/theory.md §6 and §6.3):
//   * the simplified calculator of Appendix D.4 (Theorem 3.1): from (sigma or eps, theta, N, K, delta) to
//     gamma, T_min, s_max and the asymptotic T_min_asym, s_max_asym; with the Theorem 3.1 / B.4 conditions
//     evaluated at the resulting batch size; `paper` mode reproduces Tables 9-11;
//   * the multi-phase adaptive calculator of Appendix E.1 (Theorem B.4): phases with their own K_j and
//     sigma_j, theta recomputed over all phases, the batch size of each phase increased by 1 until (32),
//     (33) or eps <= eps_target fails.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/accounting/proactive/proactive.h"

namespace asyncdp::accounting {

struct CalculatorInputs {
  double n_records = 0.0;   // N
  double iterations = 0.0;  // K (gradient computations); k = K / N epochs
  double delta = 0.0;       // the paper uses 1/N
  // Exactly one of sigma / epsilon: with epsilon, sigma = SigmaOfEpsilon(epsilon, delta) (6); with sigma,
  // epsilon = EpsilonOfSigma(sigma, delta) (§6.2 step 1).
  double sigma = std::numeric_limits<double>::quiet_NaN();
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  double theta = 1.0;  // s_max / s_bar
  GammaMode mode = GammaMode::kPaperLiteral;
};

struct CalculatorResult {
  double epsilon = 0.0;
  double sigma = 0.0;
  double delta = 0.0;
  double gamma = 0.0;
  double epochs = 0.0;           // k
  double t_min = 0.0;            // gamma theta^2 k^2 / eps  (not rounded)
  double s_max_real = 0.0;       // k N / T_min
  int64_t s_max = 0;             // floor(s_max_real)
  double t_min_asym = 0.0;       // theta^2 k^2 / (2 eps)
  double s_max_asym_real = 0.0;  // k N / T_min_asym
  int64_t s_max_asym = 0;        // floor(s_max_asym_real)
  // Theorem 3.1 / B.4 conditions at s_bar = s_max (at s_bar = 1 if s_max < 1), T = K / s_bar.
  ProactiveCheck check;
  // The paper's eps_fDP columns: uniform-sampling GDP/CLT at the unrounded batch sizes (approximations).
  // eps_fdp_s_max uses k epochs; the s_max_asym column is given both with k epochs (consistent) and with
  // 2k epochs, which is how the paper's printed numbers were obtained (spec §8.7, reason unstated).
  double eps_fdp_s_max = 0.0;
  double eps_fdp_s_max_asym = 0.0;
  double eps_fdp_s_max_asym_paper = 0.0;
};

// Throws ConfigError for missing/invalid inputs (both or neither of sigma/epsilon, N, K <= 0, ...).
CalculatorResult RunSimplifiedCalculator(const CalculatorInputs& inputs);

// One phase of the E.1 calculator: K_j more gradient computations at noise sigma_j.
struct CalculatorPhase {
  double iterations = 0.0;  // K_j
  // sigma_j; NaN in phase 0 = derive sigma from (35) with equality (the paper's case j = 0).
  double sigma = std::numeric_limits<double>::quiet_NaN();
};

struct MultiPhaseInputs {
  double n_records = 0.0;
  double delta = 0.0;           // the paper uses 1/N
  double epsilon_target = 0.0;  // a-priori budget that may never be exceeded
  std::vector<CalculatorPhase> phases;
  GammaMode mode = GammaMode::kPaperLiteral;
};

struct PhaseResult {
  bool admissible = false;  // false: no batch size s >= 1 works ("cannot participate"); later phases skipped
  int64_t sample_size = 0;  // s_j, the largest admissible (fewest rounds)
  double rounds = 0.0;      // T_j = K_j / s_j (not rounded)
  double epsilon = 0.0;     // eps after this phase (covers all phases so far)
  double sigma = 0.0;
  double gamma = 0.0;
  double theta = 0.0;
  double mean_sample_size = 0.0;  // s_bar over all phases so far
  std::string stop_reason;        // which check failed for s_j + 1 (or for s = 1)
};

struct MultiPhaseResult {
  std::vector<PhaseResult> phases;  // one per input phase until the first inadmissible one (inclusive)
  bool can_participate = false;     // every phase admissible
};

MultiPhaseResult RunMultiPhaseCalculator(const MultiPhaseInputs& inputs);

}  // namespace asyncdp::accounting
