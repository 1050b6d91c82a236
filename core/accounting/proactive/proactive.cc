#include "core/accounting/proactive/proactive.h"

#include <cmath>
#include <numbers>
#include <string>

#include "core/accounting/input_checks.h"
#include "core/accounting/log_math.h"
#include "core/check.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr double kE = std::numbers::e;

ConditionResult MakeCondition(std::string id, Relation relation, std::string statement, double lhs, double rhs) {
  ConditionResult c;
  c.id = std::move(id);
  c.relation = relation;
  c.statement = std::move(statement);
  c.lhs = lhs;
  c.rhs = rhs;
  c.margin = (c.relation == Relation::kAtLeast) ? lhs - rhs : rhs - lhs;
  // Exact equalities such as (35) evaluated at sigma = SigmaOfEpsilon(EpsilonOfSigma(sigma)) must not fail
  // by one rounding error, so "holds" tolerates 1e-12 relative.
  const double tolerance = 1e-12 * std::max(std::abs(lhs), std::abs(rhs));
  c.holds = c.relation == Relation::kBelow ? c.margin > 0.0 : c.margin >= -tolerance;
  c.relative_margin = (rhs != 0.0 && std::isfinite(rhs)) ? c.margin / std::abs(rhs) : c.margin;
  return c;
}

}  // namespace

std::string_view ToString(Relation relation) {
  switch (relation) {
    case Relation::kAtLeast:
      return ">=";
    case Relation::kAtMost:
      return "<=";
    case Relation::kBelow:
      return "<";
  }
  return "?";
}

double SigmaOfEpsilon(double epsilon, double delta) {
  return std::sqrt(2.0 * (epsilon + std::log(1.0 / delta)) / epsilon);
}

double EpsilonOfSigma(double sigma, double delta) {
  const double denominator = sigma * sigma - 2.0;
  if (denominator <= 0.0) return kInf;
  return 2.0 * std::log(1.0 / delta) / denominator;
}

double ProactiveH(double x) {
  // (sqrt(1 + t^2) - t)^2 with t = e/x, rewritten as 1 / (sqrt(1 + t^2) + t)^2 to avoid cancellation
  // for large x (t -> 0).
  const double t = kE / x;
  const double s = std::sqrt(1.0 + t * t) + t;
  return 1.0 / (s * s);
}

double ProactiveG(double x) { return std::min(1.0 / (kE * x), ProactiveH(x)); }

double GammaRhs(double sigma, double alpha_bar) {
  const double a = alpha_bar;
  if (a < 0.0 || a >= 1.0) return kInf;
  const double root_a = std::sqrt(a);
  const double inner_denominator = sigma * (1.0 - a) - 2.0 * kE * root_a;
  if (inner_denominator <= 0.0) return kInf;  // a >= h(sigma)
  const double bracket =
      sigma / ((1.0 - root_a) * (1.0 - root_a)) + (1.0 / inner_denominator) * (kE * kE * kE / sigma);
  return 2.0 / (1.0 - a) + (16.0 * a / (1.0 - a)) * bracket * std::exp(3.0 / (sigma * sigma));
}

std::string_view ToString(GammaMode mode) { return mode == GammaMode::kPaperLiteral ? "paper" : "exact"; }

GammaMode ParseGammaMode(std::string_view text, std::string_view key_path) {
  if (text == "paper" || text == "paper_literal") return GammaMode::kPaperLiteral;
  if (text == "exact") return GammaMode::kExact;
  throw ConfigError(std::string(key_path), "expected 'paper' or 'exact', got '" + std::string(text) + "'");
}

double SolveGamma(double sigma, double epsilon, double epochs, GammaMode mode) {
  auto rhs = [&](double gamma) { return GammaRhs(sigma, epsilon / (gamma * epochs)); };
  if (mode == GammaMode::kPaperLiteral) {
    // §6.2 steps 2-4 verbatim: stop at the first step with gamma_new - gamma <= 1e-4 gamma and keep the
    // gamma for which gamma_new was computed.
    double gamma = 2.0;
    for (int iteration = 0; iteration < 100000; ++iteration) {
      const double gamma_new = rhs(gamma);
      if (!std::isfinite(gamma_new)) return kInf;
      if (gamma_new - gamma <= 1e-4 * gamma) return gamma;
      gamma = gamma_new;
    }
    ASYNCDP_CHECK_MSG(false, "paper-literal gamma iteration did not stop");
  }
  // §5.3 [spec note]: phi(gamma) = gamma - F_gamma(sigma, eps/(gamma k)) is increasing where F is finite,
  // negative at the left end, so bisection on a bracket finds the smallest solution.
  auto phi = [&](double gamma) { return gamma - rhs(gamma); };
  double lo = 2.0;
  if (phi(lo) >= 0.0) return lo;  // eps = 0: F = 2
  double hi = 4.0;
  while (phi(hi) <= 0.0) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e15) return kInf;
  }
  while (hi - lo > 1e-12 * hi) {
    const double mid = 0.5 * (lo + hi);
    (phi(mid) > 0.0 ? hi : lo) = mid;
  }
  return hi;  // phi(hi) > 0: gamma >= F_gamma holds at the returned value
}

const ConditionResult* ProactiveCheck::Find(std::string_view id) const {
  for (const ConditionResult& c : conditions) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

ProactiveCheck CheckProactiveConditions(const ProactiveInputs& in) {
  RequirePositive(in.n_records, "proactive.N");
  RequirePositive(in.iterations, "proactive.K");
  RequirePositive(in.mean_sample_size, "proactive.s_bar");
  RequirePositive(in.sigma, "proactive.sigma");
  RequireDelta(in.delta, "proactive.delta");
  if (!(in.theta >= 1.0) || !std::isfinite(in.theta)) {
    throw ConfigError("proactive.theta",
                      "must be >= 1 (theta = s_max / s_bar), got " + std::to_string(in.theta));
  }
  ProactiveCheck out;
  out.epsilon = std::isnan(in.epsilon) ? EpsilonOfSigma(in.sigma, in.delta) : in.epsilon;
  if (!(out.epsilon > 0.0)) throw ConfigError("proactive.epsilon", "must be positive");
  const double n = in.n_records;
  const double k = in.iterations / n;
  const double s_bar = in.mean_sample_size;
  const double theta = in.theta;
  const double eps = out.epsilon;
  out.epochs = k;
  out.rounds = in.iterations / s_bar;
  out.gamma = SolveGamma(in.sigma, eps, k, in.gamma_mode);
  const double gamma = out.gamma;
  const double sigma_needed = std::isfinite(eps) ? SigmaOfEpsilon(eps, in.delta) : 0.0;

  auto& c = out.conditions;
  c.push_back(
      MakeCondition("(35)", Relation::kAtLeast, "sigma >= sqrt(2 (eps + ln(1/delta)) / eps)", in.sigma, sigma_needed));
  c.push_back(MakeCondition("delta<=1/N", Relation::kAtMost, "delta <= 1/N", in.delta, 1.0 / n));
  c.push_back(MakeCondition("eps<0.5", Relation::kBelow, "eps < 0.5", eps, 0.5));
  c.push_back(MakeCondition("N>=10000", Relation::kAtLeast, "N >= 10000", n, 10000.0));
  c.push_back(MakeCondition("theta<=6.85", Relation::kAtMost, "theta <= 6.85", theta, 6.85));
  c.push_back(MakeCondition("(7)", Relation::kAtLeast, "(2/e)^2 k^2 >= 1/2 + ln(1/delta)", (4.0 / (kE * kE)) * k * k,
                            0.5 + std::log(1.0 / in.delta)));
  c.push_back(MakeCondition("(8)", Relation::kAtLeast, "T >= gamma theta^2 k^2 / eps", out.rounds,
                            gamma * theta * theta * k * k / eps));
  c.push_back(MakeCondition("(32)", Relation::kAtMost, "s_bar <= g(sqrt(2 (eps + ln(1/delta)) / eps)) / theta * N", s_bar,
                            ProactiveG(sigma_needed) / theta * n));
  c.push_back(
      MakeCondition("(33)", Relation::kAtMost, "eps <= gamma h(sigma) K / N", eps, gamma * ProactiveH(in.sigma) * k));
  c.push_back(MakeCondition("(34)", Relation::kAtLeast, "eps >= gamma theta^2 (K/N) (s_bar/N)", eps,
                            gamma * theta * theta * k * (s_bar / n)));
  // The proof of Theorem B.4 also needs eps N / (2K) <= h(sigma), slightly stronger than (54) alpha_bar =
  // eps N / (gamma K) <= h(sigma) since gamma >= 2 (spec §5.5; the paper notes it holds in practice).
  c.push_back(MakeCondition("eps/(2k)<=h", Relation::kAtMost, "eps N / (2 K) <= h(sigma)", eps / (2.0 * k),
                            ProactiveH(in.sigma)));

  auto all = [&](std::initializer_list<const char*> ids) {
    for (const char* id : ids) {
      if (!out.Find(id)->holds) return false;
    }
    return true;
  };
  out.theorem_3_1 = all({"(35)", "delta<=1/N", "eps<0.5", "N>=10000", "theta<=6.85", "(7)", "(8)"});
  out.theorem_b4 = all({"(32)", "(33)", "(34)", "(35)", "eps/(2k)<=h"});
  return out;
}

}  // namespace asyncdp::accounting
