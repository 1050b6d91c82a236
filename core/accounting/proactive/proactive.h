// Closed forms of the Proactive-DP paper (Section 3 and Appendix B; docs/theory.md §5): relation (6) between sigma and
// (eps, delta), the helper functions h, g and F_gamma, the constant gamma of Theorems 3.1 / B.4, and a
// checker that evaluates every condition of both theorems and reports which fails and by how much.
// These are Poisson-sampling / add-remove statements (the paper's analysis, §2.6).
#pragma once

#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace asyncdp::accounting {

// (1), (6), (35), (62): sigma = sqrt(2 (eps + ln(1/delta)) / eps); eps > 0, delta in (0, 1).
double SigmaOfEpsilon(double epsilon, double delta);

// Exact inverse of (6): eps = 2 ln(1/delta) / (sigma^2 - 2); needs sigma^2 > 2 (else +inf).
double EpsilonOfSigma(double sigma, double delta);

// §5.3: h(x) = (sqrt(1 + (e/x)^2) - e/x)^2, x > 0.
double ProactiveH(double x);

// §5.3: g(x) = min(1/(e x), h(x)), x > 0.
double ProactiveG(double x);

// §5.3 F_gamma(sigma, a): the right-hand side of the gamma condition at alpha_bar = a. Defined for
// 0 <= a < h(sigma) (then sigma (1 - a) - 2 e sqrt(a) > 0); +inf outside.
double GammaRhs(double sigma, double alpha_bar);

// How gamma is obtained from gamma >= F_gamma(sigma, eps / (gamma k)).
enum class GammaMode {
  // §6.2 [spec note]: the paper's calculator, fixed-point iteration from gamma = 2 with the one-sided stop
  // rule `gamma_new - gamma <= 1e-4 gamma`, keeping the gamma before the first decrease. Reproduces
  // Tables 9-11; larger (more conservative) than the smallest solution.
  kPaperLiteral,
  // §5.3 [spec note]: the smallest solution, i.e. the unique root of gamma - F_gamma(sigma, eps/(gamma k)),
  // found by bracketing and bisection to relative tolerance 1e-12.
  kExact,
};

std::string_view ToString(GammaMode mode);
GammaMode ParseGammaMode(std::string_view text, std::string_view key_path);  // "paper" | "exact"

// gamma for (sigma, eps, epochs k = K/N). Returns +inf when no gamma exists (eps/(2k) >= h(sigma) in
// paper mode; no finite root in exact mode).
double SolveGamma(double sigma, double epsilon, double epochs, GammaMode mode);

// The relation of a theorem's inequality `lhs REL rhs`.
enum class Relation { kAtLeast, kAtMost, kBelow };  // >=, <=, <
std::string_view ToString(Relation relation);     // ">=", "<=", "<" (as written in the outputs)

// One inequality `lhs REL rhs` of a theorem. margin = lhs - rhs for ">=" and rhs - lhs for "<=" and "<", so
// margin >= 0 (> 0 for "<") iff it holds; relative_margin = margin / |rhs|.
struct ConditionResult {
  std::string id;         // "(7)", "(8)", "(32)" ... "(35)", "eps<0.5", "delta<=1/N", "eps/(2k)<=h", ...
  Relation relation = Relation::kAtLeast;
  std::string statement;  // the inequality in words, with the paper's symbols
  double lhs = 0.0;
  double rhs = 0.0;
  bool holds = false;
  double margin = 0.0;
  double relative_margin = 0.0;
};

// Inputs of Theorems 3.1 / B.4 for one client.
struct ProactiveInputs {
  double n_records = 0.0;         // N
  double iterations = 0.0;        // K = sum of s_i
  double mean_sample_size = 0.0;  // s_bar = K / T  (T = K / s_bar rounds)
  double theta = 1.0;             // s_max / s_bar (1 for a constant sample size)
  double sigma = 0.0;             // noise multiplier
  double delta = 0.0;             // target delta
  // Target epsilon; NaN = the smallest eps allowed by (6) for sigma, i.e. EpsilonOfSigma(sigma, delta).
  double epsilon = std::numeric_limits<double>::quiet_NaN();
  GammaMode gamma_mode = GammaMode::kExact;
};

struct ProactiveCheck {
  double epsilon = 0.0;
  double gamma = 0.0;
  double epochs = 0.0;  // k = K / N
  double rounds = 0.0;  // T = K / s_bar
  // Theorem 3.1: (6) as (35), delta <= 1/N, eps < 0.5, N >= 10000, theta <= 6.85, (7), (8).
  // Theorem B.4: (32), (33), (34), (35), and "eps/(2k)<=h" (eps N / (2K) <= h(sigma), which its proof
  // needs, spec §5.5).
  std::vector<ConditionResult> conditions;
  bool theorem_3_1 = false;  // every Theorem 3.1 condition holds
  bool theorem_b4 = false;   // every Theorem B.4 condition holds

  const ConditionResult* Find(std::string_view id) const;  // nullptr if absent
};

// Throws ConfigError for non-positive / non-finite inputs.
ProactiveCheck CheckProactiveConditions(const ProactiveInputs& inputs);

}  // namespace asyncdp::accounting
