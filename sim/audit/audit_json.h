// The blocks `asyncdp audit` (audit.json, sim/audit/audit_outputs.cc) and a training run's one-run audit
// (summary.json "audit", sim/audit/train_audit.cc) both write, written once.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/audit/fdp_one_run.h"
#include "core/audit/one_run.h"
#include "sim/audit/reported_epsilons.h"

namespace asyncdp::sim::audit {

// "reported": per accountant, its epsilon (null when unavailable or infinite), bound kind and assumptions.
nlohmann::json ReportedEpsilonsJson(const std::vector<ReportedEpsilon>& reported);

// "headline": the accountant on the verdict line and its epsilon.
nlohmann::json HeadlineJson(const Headline& headline);

// "one_run": the guessing game's counts behind eps_lower (`planted` = canaries whose coin came up IN).
nlohmann::json OneRunCountsJson(const asyncdp::audit::OneRunAuditResult& result,
                                const asyncdp::audit::FdpOneRunResult& fdp, int64_t planted);

}  // namespace asyncdp::sim::audit
