// The privacy of a federation of clients. Privacy here is per client, about that client's own local data
// set (record-level DP, docs/theory.md §4): each client's rounds are accounted separately, and
// a run reports, for EVERY accountant separately, the largest epsilon over the clients and which client
// attains it. (Picking one "worst" client by one accountant and reporting its other numbers under-reports:
// with unequal shards and a dropout, the client with the largest RDP epsilon need not have the largest
// PLD epsilon.)
//
// The paper's closed form (relation (6), Theorems 3.1 / B.4) is checked for every client: it is a
// guarantee only if every client that ran a round satisfies one of the theorems.
//
// Cost: one accountant composition per distinct (N_c, schedule) — clients with equal shards and equal
// rounds share it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/accounting/accountant.h"
#include "core/accounting/assumptions.h"
#include "core/accounting/proactive/proactive.h"
#include "core/accounting/schedule.h"

namespace asyncdp::accounting {

// The rounds one client ran.
struct ClientRounds {
  int64_t client = 0;
  double n_records = 0.0;  // N_c, treated as public (so are q_i = s_i / N_c, the rounds and delta)
  Schedule schedule;       // (q_i, sigma_i) groups; empty if the client ran no round
};

struct PopulationOptions {
  double delta = 1e-5;  // in (0, 1)
  AccountantOptions accounting;
  std::vector<AccountantKind> accountants = {AccountantKind::kRdp, AccountantKind::kPld,
                                             AccountantKind::kGdp};
  GammaMode gamma_mode = GammaMode::kExact;  // for the Theorem 3.1 / B.4 checks
};

// The largest value over clients and the client attaining it (the first such client on ties).
struct WorstClient {
  double epsilon = 0.0;  // 0 when no client ran a round; +inf possible
  int64_t client = -1;   // -1 when no client ran a round
  EpsilonResult result;  // that client's full answer (RDP order, GDP mu, PLD discretisation, ...)
};

struct ProactiveSummary {
  // Relation (6) for the client's sigma, the largest over clients (NaN if some sigma^2 <= 2 or a client's
  // sigma varies between rounds: (6) has no value then).
  WorstClient epsilon;
  // Every client that ran a round satisfies Theorem 3.1 or B.4, with Poisson sampling and Gaussian noise.
  bool valid = false;
  std::vector<int64_t> invalid_clients;  // clients for which neither theorem holds (or it does not apply)
  // The client whose conditions are shown: the first invalid client, else the client of `epsilon`.
  int64_t shown_client = -1;
  ProactiveCheck shown;           // its Theorem 3.1 / B.4 conditions (empty if not applicable)
  std::string not_applicable;     // why the closed form does not apply at all (empty if it does)
  // Why relation (6) has no value (epsilon NaN), for the first client without one: "client 0: relation (6)
  // assumes one noise multiplier for all rounds" (a phased or scheduled plan), or sigma^2 <= 2. Empty if
  // every client that ran a round has one.
  std::string undefined;
};

struct PopulationReport {
  double delta = 0.0;
  int64_t clients_with_rounds = 0;
  std::map<AccountantKind, WorstClient> worst;        // per requested accountant that could account
  // The PLD lower bound of the client with the largest PLD upper bound (when PLD was requested): a lower
  // bound on the worst client's true epsilon.
  WorstClient pld_lower;
  std::map<AccountantKind, Assumptions> assumptions;  // what each accountant's numbers state
  std::map<AccountantKind, std::string> unavailable;  // requested accountants that cannot, and why
  ProactiveSummary proactive;
};

// Throws ConfigError for invalid options or schedules.
PopulationReport ReportPopulation(std::span<const ClientRounds> clients, const PopulationOptions& options);

// Theorem 3.1 / B.4 inputs of one client's rounds: N, K = sum s_i, s_bar = K / T, theta = s_max / s_bar,
// sigma, delta. Returns false (with the reason) if the closed form does not apply: no rounds, or a
// sigma that varies between rounds.
bool ProactiveInputsOf(const ClientRounds& client, double delta, ProactiveInputs& inputs, std::string& reason);

}  // namespace asyncdp::accounting
