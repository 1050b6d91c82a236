#include "core/accounting/population.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Distinct clients: same N_c and same multiset of rounds give the same numbers.
using ClientKey = std::pair<double, std::vector<std::tuple<double, double, int64_t>>>;

ClientKey KeyOf(const ClientRounds& c) {
  ClientKey key{c.n_records, {}};
  for (const RoundGroup& g : CompactSchedule(c.schedule)) key.second.emplace_back(g.q, g.sigma, g.count);
  return key;
}

void Raise(WorstClient& worst, double epsilon, int64_t client, const EpsilonResult& result) {
  // NaN never raises; +inf does.
  if (worst.client < 0 || epsilon > worst.epsilon) {
    worst.epsilon = epsilon;
    worst.client = client;
    worst.result = result;
  }
}

}  // namespace

bool ProactiveInputsOf(const ClientRounds& client, double delta, ProactiveInputs& inputs, std::string& reason) {
  const Schedule groups = CompactSchedule(client.schedule);
  if (groups.empty()) {
    reason = "the client ran no round";
    return false;
  }
  const double sigma = groups.front().sigma;
  double iterations = 0.0, rounds = 0.0, s_max = 0.0;
  for (const RoundGroup& g : groups) {
    if (g.sigma != sigma) {
      reason = "relation (6) assumes one noise multiplier for all rounds";
      return false;
    }
    const double s = g.q * client.n_records;
    iterations += s * static_cast<double>(g.count);
    rounds += static_cast<double>(g.count);
    s_max = std::max(s_max, s);
  }
  inputs = ProactiveInputs{};
  inputs.n_records = client.n_records;
  inputs.iterations = iterations;
  inputs.mean_sample_size = iterations / rounds;
  inputs.theta = std::max(1.0, s_max / inputs.mean_sample_size);  // 1 up to rounding for constant s
  inputs.sigma = sigma;
  inputs.delta = delta;
  return true;
}

PopulationReport ReportPopulation(std::span<const ClientRounds> clients, const PopulationOptions& options) {
  if (!(options.delta > 0.0 && options.delta < 1.0))
    throw ConfigError("delta", "must be in (0, 1), got " + std::to_string(options.delta));
  PopulationReport report;
  report.delta = options.delta;
  // Each client's rounds as a mechanism description (dp_event.h) of the run's sampler and noise.
  const auto event_of = [&](const Schedule& schedule) { return ScheduleEvent(schedule, options.accounting); };
  AccountQuery query;
  query.delta = options.delta;
  query.precision = PrecisionOf(options.accounting);
  // Accountants that cannot account this mechanism at all are reported as unavailable up front (the
  // mechanism without rounds: what applies depends on the sampler and the noise, not on the rounds).
  std::vector<AccountantKind> usable;
  for (const Accounted& probe : AccountAll(*event_of({}), options.accountants, query)) {
    if (!probe.available) {
      report.unavailable[probe.kind] = probe.reason;
    } else {
      usable.push_back(probe.kind);
      report.assumptions[probe.kind] = probe.assumptions;
      report.worst[probe.kind] = WorstClient{};
    }
  }
  ProactiveSummary& proactive = report.proactive;
  proactive.epsilon.epsilon = kNaN;
  if (options.accounting.sampling != SamplingModel::kPoisson) {
    proactive.not_applicable = "Theorems 3.1 and B.4 assume Poisson sampling";
  } else if (options.accounting.noise != NoiseModel::kGaussian) {
    proactive.not_applicable = "Theorems 3.1 and B.4 assume Gaussian noise";
  }
  bool proactive_defined = true;  // every client has a relation-(6) value
  // The PLD's lower bound (a second, pooled grid) is composed for the client with the largest PLD upper
  // bound only: its lower bound is a lower bound on the worst client's true epsilon, which is what the
  // report states, and a population of many distinct clients pays one pooled grid instead of one each.
  AccountQuery upper_only = query;
  upper_only.pld_lower_bound = false;
  std::map<ClientKey, std::pair<int64_t, bool>> seen;  // key -> (representative, proactive valid)
  for (const ClientRounds& c : clients) {
    ValidateSchedule(c.schedule, "client[" + std::to_string(c.client) + "].schedule");
    if (TotalRounds(c.schedule) == 0) continue;
    ++report.clients_with_rounds;
    const ClientKey key = KeyOf(c);
    auto it = seen.find(key);
    if (it != seen.end()) {
      // Same numbers as an earlier client: ties keep the earlier client, validity is the same.
      if (!it->second.second) proactive.invalid_clients.push_back(c.client);
      continue;
    }
    for (const Accounted& a : AccountAll(*event_of(c.schedule), usable, upper_only)) {
      if (!a.available) {
        report.unavailable[a.kind] = a.reason;
        continue;
      }
      Raise(report.worst[a.kind], a.result.epsilon, c.client, a.result);
    }
    // The closed form, for this client.
    bool valid = false;
    ProactiveInputs inputs;
    std::string reason;
    ProactiveCheck check;
    if (ProactiveInputsOf(c, options.delta, inputs, reason)) {
      inputs.gamma_mode = options.gamma_mode;
      const double eps = EpsilonOfSigma(inputs.sigma, options.delta);
      if (std::isfinite(eps)) {
        check = CheckProactiveConditions(inputs);
        valid = proactive.not_applicable.empty() && (check.theorem_3_1 || check.theorem_b4);
        Raise(proactive.epsilon, eps, c.client, EpsilonResult{eps});
      } else {
        proactive_defined = false;  // sigma^2 <= 2: relation (6) gives no epsilon
        reason = "sigma^2 <= 2: relation (6) gives no epsilon";
      }
    } else {
      proactive_defined = false;
    }
    if (!reason.empty() && proactive.undefined.empty()) {
      proactive.undefined = "client " + std::to_string(c.client) + ": " + reason;
    }
    if (!valid) {
      proactive.invalid_clients.push_back(c.client);
      // Show the first invalid client, preferring one whose conditions could be evaluated.
      if (proactive.shown_client < 0 || (proactive.shown.conditions.empty() && !check.conditions.empty())) {
        proactive.shown_client = c.client;
        proactive.shown = check;
      }
    }
    seen.emplace(key, std::make_pair(c.client, valid));
  }
  // The PLD's lower bound (a second, pooled grid) for the client with the largest PLD upper bound only.
  const auto pld_worst = report.worst.find(AccountantKind::kPld);
  const auto is_worst = [&](const ClientRounds& c) { return c.client == pld_worst->second.client; };
  const auto worst_rounds =
      pld_worst == report.worst.end() ? clients.end() : std::find_if(clients.begin(), clients.end(), is_worst);
  if (worst_rounds != clients.end() && query.pld_lower_bound) {
    WorstClient& pld = pld_worst->second;
    const Accounted a = Account(*event_of(worst_rounds->schedule), AccountantKind::kPld, query);
    if (a.available) {
      pld.result = a.result;  // the same upper bound (the upper grid does not depend on the lower one)
      if (!std::isnan(a.result.epsilon_lower)) report.pld_lower = {a.result.epsilon_lower, pld.client, a.result};
    }
  }
  for (auto& [kind, worst] : report.worst) {
    if (worst.client < 0) worst.epsilon = 0.0;  // nobody ran a round: nothing released
  }
  if (!proactive_defined) proactive.epsilon.epsilon = kNaN;
  proactive.valid = report.clients_with_rounds > 0 && proactive_defined && proactive.invalid_clients.empty();
  if (proactive.invalid_clients.empty() && proactive.epsilon.client >= 0) {
    // All valid: show the conditions of the client with the largest epsilon (recompute; cheap).
    for (const ClientRounds& c : clients) {
      if (c.client != proactive.epsilon.client) continue;
      ProactiveInputs inputs;
      std::string reason;
      if (ProactiveInputsOf(c, options.delta, inputs, reason)) {
        inputs.gamma_mode = options.gamma_mode;
        proactive.shown_client = c.client;
        proactive.shown = CheckProactiveConditions(inputs);
      }
      break;
    }
  }
  return report;
}

}  // namespace asyncdp::accounting
