#include "sim/audit/audit_json.h"

#include <string>

#include "sim/json_number.h"

namespace asyncdp::sim::audit {

nlohmann::json ReportedEpsilonsJson(const std::vector<ReportedEpsilon>& reported) {
  nlohmann::json out = nlohmann::json::object();
  for (const ReportedEpsilon& r : reported) {
    out[std::string(accounting::ToString(r.accountant))] = {{"epsilon", FiniteOrNull(r.epsilon)},
                                                            {"bound", std::string(accounting::ToString(r.bound))},
                                                            {"assumptions", r.assumptions},
                                                            {"available", r.available}};
  }
  return out;
}

nlohmann::json HeadlineJson(const Headline& headline) {
  return {{"accountant", std::string(accounting::ToString(headline.accountant))},
          {"epsilon", FiniteOrNull(headline.epsilon)}};
}

nlohmann::json OneRunCountsJson(const asyncdp::audit::OneRunAuditResult& result, int64_t planted) {
  return {{"canaries", result.canaries},
          {"planted", planted},
          {"guesses", result.guesses},
          {"correct", result.correct},
          {"k_plus", result.k_plus},
          {"k_minus", result.k_minus},
          {"beta", result.beta},
          {"note",
           "the one-run bound is loose for the Gaussian mechanism by design (Steinke et al. 2023): expect it "
           "well below the reported epsilon"}};
}

}  // namespace asyncdp::sim::audit
