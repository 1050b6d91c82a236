// summary.json's "privacy" object: formatting of the run's population report (sim/privacy_setup.h,
// core/accounting/population.h) — no accounting happens here. For every accountant: the largest epsilon
// over clients and the client attaining it; the proactive closed form with its theorem conditions checked
// for every client; the assumptions each number rests on, including the threat model and what is public.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "core/accounting/population.h"
#include "sim/experiment.h"
#include "sim/headline_epsilon.h"

namespace asyncdp::sim {

// Everything but "epsilon", which CommonSummaryJson writes from SummaryCore::epsilon (HeadlineEpsilons
// below).
nlohmann::json PrivacySummaryJson(const Experiment& e, const accounting::PopulationReport& report);

// The report's headline ε, one per accountant (its "epsilon" object): rdp, pld, pld_lower (a lower bound),
// gdp, proactive (none unless Theorem 3.1 or B.4 holds for every client: relation (6) is no bound
// otherwise), and random_allocation under that sampler; every value none without privacy.
std::vector<HeadlineEpsilon> HeadlineEpsilons(const Experiment& e,
                                              const accounting::PopulationReport& report);

// The assumption every report states about what is public.
inline constexpr const char* kPublicAssumption =
    "N_c (each client's record count), the planned sample sizes s_i (so q_i = s_i/N_c), the number of rounds "
    "T and delta are treated as public: they are not protected by any epsilon";

}  // namespace asyncdp::sim
