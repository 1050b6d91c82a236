#include "core/accounting/proactive/proactive_calculator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/gdp/gdp.h"
#include "core/accounting/input_checks.h"
#include "core/accounting/log_math.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

// floor(x) as an integer sample size: 0 for NaN or x < 0, INT64_MAX beyond its range (tiny T_min makes
// s_max astronomically large; converting such a double to int64_t directly is undefined behaviour).
int64_t SaturatedFloor(double x) {
  if (!(x >= 0.0)) return 0;
  if (x >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::floor(x));
}

// Uniform-sampling GDP epsilon of batch size s (unrounded) over `epochs` passes: q = s / N, T = epochs N / s.
double FdpEpsilon(double s, double n, double epochs, double sigma, double delta) {
  if (!(s > 0.0)) return kInf;
  return GdpEpsilon(GdpMuUniform(s / n, sigma, epochs * n / s), delta);
}

// One E.1 candidate (§6.3 steps 1-6) for the phases so far plus batch size s in the current phase.
struct Candidate {
  bool usable = false;
  std::string failure;  // which check failed
  double epsilon = 0.0;
  double sigma = 0.0;
  double gamma = 0.0;
  double theta = 0.0;
  double s_bar = 0.0;
};

struct SettledPhase {
  double s;
  double rounds;
  double iterations;
};

Candidate EvaluateCandidate(const MultiPhaseInputs& in, const std::vector<SettledPhase>& settled,
                            const CalculatorPhase& phase, double s) {
  const double n = in.n_records;
  double rounds = phase.iterations / s;
  double total_k = phase.iterations;
  double largest = s;
  for (const SettledPhase& p : settled) {
    rounds += p.rounds;
    total_k += p.iterations;
    largest = std::max(largest, p.s);
  }
  Candidate c;
  c.s_bar = total_k / rounds;
  c.theta = largest / c.s_bar;
  const bool derive_sigma = std::isnan(phase.sigma);
  const double eps_sigma = derive_sigma ? 0.0 : EpsilonOfSigma(phase.sigma, in.delta);
  // Step 3 as functions of gamma: eps (smallest allowed by (34), or (35) for a given sigma), sigma,
  // alpha_bar.
  auto eps_of = [&](double gamma) {
    return std::max(eps_sigma, gamma * c.theta * c.theta * c.s_bar * total_k / (n * n));
  };
  auto sigma_of = [&](double gamma) {
    return derive_sigma ? SigmaOfEpsilon(eps_of(gamma), in.delta) : phase.sigma;
  };
  auto rhs = [&](double gamma) { return GammaRhs(sigma_of(gamma), eps_of(gamma) * n / (gamma * total_k)); };
  double gamma = 2.0;
  if (in.mode == GammaMode::kPaperLiteral) {
    // Steps 4-5 with the one-sided stop rule, as in the D.4 calculator.
    for (int iteration = 0;; ++iteration) {
      ASYNCDP_CHECK_MSG(iteration < 100000, "E.1 gamma iteration did not stop");
      const double gamma_new = rhs(gamma);
      if (!std::isfinite(gamma_new)) {
        gamma = kInf;
        break;
      }
      if (gamma_new - gamma <= 1e-4 * gamma) break;
      gamma = gamma_new;
    }
  } else {
    // Exact: the root of gamma - F(sigma(gamma), alpha_bar(gamma)), increasing in gamma (§6.3 step 5).
    auto phi = [&](double g) { return g - rhs(g); };
    if (phi(gamma) < 0.0) {
      double lo = gamma;
      double hi = 2.0 * gamma;
      while (phi(hi) <= 0.0 && hi < 1e15) {
        lo = hi;
        hi *= 2.0;
      }
      if (hi >= 1e15) {
        gamma = kInf;
      } else {
        while (hi - lo > 1e-12 * hi) {
          const double mid = 0.5 * (lo + hi);
          (phi(mid) > 0.0 ? hi : lo) = mid;
        }
        gamma = hi;
      }
    }
  }
  c.gamma = gamma;
  if (!std::isfinite(gamma)) {
    c.failure = "(33): no finite gamma (alpha_bar >= h(sigma))";
    return c;
  }
  c.epsilon = eps_of(gamma);
  c.sigma = sigma_of(gamma);
  if (c.s_bar > ProactiveG(SigmaOfEpsilon(c.epsilon, in.delta)) / c.theta * n) {
    c.failure = "(32): s_bar > g(sigma(eps, delta)) / theta * N";
  } else if (c.epsilon > gamma * ProactiveH(c.sigma) * total_k / n) {
    c.failure = "(33): eps > gamma h(sigma) K / N";
  } else if (c.epsilon > in.epsilon_target) {
    c.failure = "eps > eps_target";
  } else {
    c.usable = true;
  }
  return c;
}

}  // namespace

CalculatorResult RunSimplifiedCalculator(const CalculatorInputs& in) {
  RequirePositive(in.n_records, "calc.N");
  RequirePositive(in.iterations, "calc.K");
  RequireDelta(in.delta, "calc.delta");
  if (std::isnan(in.sigma) == std::isnan(in.epsilon)) {
    throw ConfigError("calc.sigma", "give exactly one of sigma and epsilon");
  }
  if (!(in.theta >= 1.0) || !std::isfinite(in.theta)) throw ConfigError("calc.theta", "must be >= 1");
  CalculatorResult r;
  r.delta = in.delta;
  if (std::isnan(in.epsilon)) {
    RequirePositive(in.sigma, "calc.sigma");
    r.sigma = in.sigma;
    r.epsilon = EpsilonOfSigma(in.sigma, in.delta);  // §6.2 step 1
    if (!std::isfinite(r.epsilon)) throw ConfigError("calc.sigma", "relation (6) needs sigma^2 > 2");
  } else {
    RequirePositive(in.epsilon, "calc.epsilon");
    r.epsilon = in.epsilon;
    r.sigma = SigmaOfEpsilon(in.epsilon, in.delta);  // (6)
  }
  const double n = in.n_records;
  const double theta2 = in.theta * in.theta;
  r.epochs = in.iterations / n;
  const double k = r.epochs;
  r.gamma = SolveGamma(r.sigma, r.epsilon, k, in.mode);  // steps 2-4
  r.t_min = r.gamma * theta2 * k * k / r.epsilon;        // step 5
  r.t_min_asym = theta2 * k * k / (2.0 * r.epsilon);
  r.s_max_real = k * n / r.t_min;  // step 6
  r.s_max_asym_real = k * n / r.t_min_asym;
  r.s_max = SaturatedFloor(r.s_max_real);
  r.s_max_asym = SaturatedFloor(r.s_max_asym_real);
  ProactiveInputs check;
  check.n_records = n;
  check.iterations = in.iterations;
  check.mean_sample_size = static_cast<double>(std::max<int64_t>(r.s_max, 1));
  check.theta = in.theta;
  check.sigma = r.sigma;
  check.delta = in.delta;
  check.epsilon = r.epsilon;
  check.gamma_mode = in.mode;
  r.check = CheckProactiveConditions(check);
  r.eps_fdp_s_max = FdpEpsilon(r.s_max_real, n, k, r.sigma, in.delta);
  r.eps_fdp_s_max_asym = FdpEpsilon(r.s_max_asym_real, n, k, r.sigma, in.delta);
  r.eps_fdp_s_max_asym_paper = FdpEpsilon(r.s_max_asym_real, n, 2.0 * k, r.sigma, in.delta);
  return r;
}

MultiPhaseResult RunMultiPhaseCalculator(const MultiPhaseInputs& in) {
  RequirePositive(in.n_records, "calc.N");
  RequireDelta(in.delta, "calc.delta");
  RequirePositive(in.epsilon_target, "calc.epsilon");
  if (in.phases.empty()) throw ConfigError("calc.phases", "needs at least one phase");
  for (size_t j = 0; j < in.phases.size(); ++j) {
    const std::string key = "calc.phases[" + std::to_string(j) + "]";
    RequirePositive(in.phases[j].iterations, key + ".K");
    if (std::isnan(in.phases[j].sigma)) {
      if (j > 0) throw ConfigError(key + ".sigma", "every phase after the first needs its sigma_j");
    } else {
      RequirePositive(in.phases[j].sigma, key + ".sigma");
    }
  }
  MultiPhaseResult out;
  std::vector<SettledPhase> settled;
  for (const CalculatorPhase& phase : in.phases) {
    PhaseResult result;
    Candidate saved;
    // §6.3 increases s_j from 1 by 1 until a check fails. After a first phase, small s_j make theta (and
    // so eps) large, so the admissible batch sizes need not start at 1 [spec note, ambiguity 16]: skip
    // inadmissible sizes until the first admissible one, then increase until a check fails. In a single
    // phase this is exactly the paper's rule. A batch cannot exceed the data set nor the phase's budget.
    const auto s_limit = static_cast<int64_t>(std::floor(std::min(in.n_records, phase.iterations)));
    int64_t largest = 0;
    std::string first_failure;
    for (int64_t s = 1;; ++s) {
      if (s > s_limit) {
        result.stop_reason = largest > 0 ? "s reached min(N, K_j)" : first_failure;
        break;
      }
      const Candidate c = EvaluateCandidate(in, settled, phase, static_cast<double>(s));
      if (!c.usable) {
        if (largest > 0) {
          result.stop_reason = c.failure;
          break;
        }
        if (first_failure.empty()) first_failure = c.failure;
        continue;
      }
      saved = c;
      largest = s;
    }
    result.admissible = largest > 0;
    if (result.admissible) {
      result.sample_size = largest;
      result.rounds = phase.iterations / static_cast<double>(result.sample_size);
      result.epsilon = saved.epsilon;
      result.sigma = saved.sigma;
      result.gamma = saved.gamma;
      result.theta = saved.theta;
      result.mean_sample_size = saved.s_bar;
      settled.push_back({static_cast<double>(result.sample_size), result.rounds, phase.iterations});
    }
    out.phases.push_back(result);
    if (!result.admissible) return out;  // cannot participate: later phases are not planned
  }
  out.can_participate = true;
  return out;
}

}  // namespace asyncdp::accounting
