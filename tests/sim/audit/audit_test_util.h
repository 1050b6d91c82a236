// The audited configuration shared by the audit tests: logistic regression on a9a, small and fast.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/accounting/assumptions.h"
#include "sim/audit/audit.h"
#include "sim/config.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim::audit::testing {

// 3 clients of `rows` a9a records, T = `rounds` rounds of s records at a constant step, δ = 1e-5, seed 5.
inline TrainConfig AuditConfig(const std::string& sampling, int64_t rows, int64_t sample_size, int64_t rounds,
                               double sigma) {
  TrainConfig c = sim::testing::SmallA9aConfig(3, rows);
  c.model.kind = "logistic";
  c.dp.sampling = EnumFromString<SamplingModel>(sampling).value();
  c.dp.sigma = sigma;
  c.dp.delta = 1e-5;
  c.schedule.sample_size = sample_size;
  sim::testing::UseRounds(c, rounds);
  c.schedule.step_rule = StepSizeSchedule::kConstant;
  c.seed = 5;
  return c;
}

// The ε the audit report quotes for `accountant` ("pld", "rdp", ...); NaN when the report has none.
inline double Reported(const AuditReport& r, const std::string& accountant) {
  for (const auto& e : r.reported) {
    if (accounting::ToString(e.accountant) == accountant) return e.epsilon;
  }
  return NAN;
}

}  // namespace asyncdp::sim::audit::testing
