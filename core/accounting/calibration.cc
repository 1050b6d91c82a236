#include "core/accounting/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/accounting/make_accountant.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void RequireTarget(double epsilon, double delta, const char* what) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon)) {
    throw ConfigError(std::string(what) + ".epsilon", "must be a positive finite number");
  }
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError(std::string(what) + ".delta", "must be in (0, 1)");
}

}  // namespace

Schedule SchedulePrefix(const Schedule& rounds_in_order, int64_t rounds) {
  Schedule prefix;
  for (const RoundGroup& g : rounds_in_order) {
    if (rounds <= 0) break;
    const int64_t take = std::min(g.count, rounds);
    if (take > 0) prefix.push_back({g.q, g.sigma, take});
    rounds -= take;
  }
  return prefix;
}

CalibrationResult CalibrateSigma(AccountantKind kind, const AccountantOptions& given,
                                 std::span<const Schedule> clients, double epsilon, double delta,
                                 const CalibrationOptions& calibration) {
  AccountantOptions options = given;
  options.pld.compute_lower_bound = false;  // only the upper bound certifies
  RequireTarget(epsilon, delta, "calibration");
  for (const Schedule& s : clients) ValidateSchedule(s, "calibration.schedule");
  if (!(calibration.relative_tolerance > 0.0 && calibration.relative_tolerance < 0.1)) {
    throw ConfigError("calibration.relative_tolerance", "must be in (0, 0.1)");
  }
  if (!(calibration.sigma_min > 0.0 && calibration.sigma_min < calibration.sigma_max) ||
      !std::isfinite(calibration.sigma_max)) {
    throw ConfigError("calibration.sigma_min", "must be positive and below a finite sigma_max");
  }
  const std::string limitation = MakeAccountant(kind, options)->Limitation();
  if (!limitation.empty()) throw ConfigError(std::string(ToString(kind)), limitation);
  // The largest epsilon over the clients with every noise multiplier scaled by sigma.
  auto worst = [&](double sigma) {
    double eps = 0.0;
    for (const Schedule& relative : clients) {
      std::unique_ptr<Accountant> accountant = MakeAccountant(kind, options);
      for (const RoundGroup& g : relative) {
        const double scaled = g.sigma * sigma;
        if (!(scaled > 0.0) || !std::isfinite(scaled)) return kInf;
        accountant->AddRounds(g.q, scaled, g.count);
      }
      try {
        eps = std::max(eps, accountant->Epsilon(delta).epsilon);
      } catch (const ConfigError&) {
        // This sigma is outside what the accountant can represent (e.g. a PLD grid beyond its limits):
        // never certified, so the search moves on.
        return kInf;
      }
    }
    return eps;
  };
  CalibrationResult result;
  // Start near the answer: a PLD composition at a small sigma is expensive (heavy-tailed rounds need long
  // grids), so the PLD search starts from the GDP estimate (a closed form; close to the PLD answer for
  // DP-SGD schedules). Bracket [lo, hi] with eps(lo) > target >= eps(hi) by factors of `step`.
  double start = 1.0, step = 2.0;
  if (kind == AccountantKind::kPld) {
    CalibrationOptions rough = calibration;
    rough.relative_tolerance = 1e-2;
    const CalibrationResult guess = CalibrateSigma(AccountantKind::kGdp, options, clients, epsilon, delta, rough);
    if (guess.found) {
      start = guess.sigma;
      step = 1.25;
    }
  }
  double hi = std::clamp(start, calibration.sigma_min, calibration.sigma_max);
  double eps_hi = worst(hi);
  while (eps_hi > epsilon) {
    if (hi >= calibration.sigma_max) return result;  // not found
    hi = std::min(step * hi, calibration.sigma_max);
    eps_hi = worst(hi);
  }
  double lo = hi;
  while (true) {
    if (lo <= calibration.sigma_min) return {hi, eps_hi, true};  // even sigma_min suffices
    lo = std::max(lo / step, calibration.sigma_min);
    const double eps_lo = worst(lo);
    if (eps_lo > epsilon) break;
    hi = lo;
    eps_hi = eps_lo;
  }
  while (hi / lo - 1.0 > calibration.relative_tolerance) {
    const double mid = std::sqrt(lo * hi);
    const double eps_mid = worst(mid);
    if (eps_mid <= epsilon) {
      hi = mid;
      eps_hi = eps_mid;
    } else {
      lo = mid;
    }
  }
  return {hi, eps_hi, true};
}

int64_t RoundsWithinBudget(AccountantKind kind, const AccountantOptions& given,
                           const Schedule& rounds_in_order, double budget, double delta) {
  AccountantOptions options = given;
  options.pld.compute_lower_bound = false;  // only the upper bound certifies
  if (!(budget > 0.0)) throw ConfigError("budget", "must be positive (or +inf for none)");
  if (!(delta > 0.0 && delta < 1.0)) throw ConfigError("delta", "must be in (0, 1)");
  ValidateSchedule(rounds_in_order, "budget.schedule");
  const int64_t total = TotalRounds(rounds_in_order);
  if (std::isinf(budget) || total == 0) return total;
  auto fits = [&](int64_t rounds) {
    std::unique_ptr<Accountant> accountant = MakeAccountant(kind, options);
    accountant->AddSchedule(SchedulePrefix(rounds_in_order, rounds));
    return accountant->Epsilon(delta).epsilon <= budget;
  };
  if (fits(total)) return total;
  // Invariant: `lo` rounds certified (0 rounds release nothing), `hi` rounds not.
  int64_t lo = 0;
  int64_t hi = total;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace asyncdp::accounting
