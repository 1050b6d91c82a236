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

namespace {

nlohmann::json FdpEstimateJson(const asyncdp::audit::FdpEstimate& e) {
  return {{"epsilon", FiniteOrNull(e.epsilon)},
          {"guesses", e.guesses},
          {"correct", e.correct},
          {"k_plus", e.k_plus},
          {"k_minus", e.k_minus}};
}

// The f-DP one-run estimates (core/audit/fdp_one_run.h), reported beside eps_lower; not in the verdict,
// so the verdict keeps its stated confidence.
nlohmann::json FdpJson(const asyncdp::audit::FdpOneRunResult& fdp) {
  nlohmann::json gaussian = FdpEstimateJson(fdp.gaussian);
  gaussian["mu"] = fdp.gaussian.value;
  gaussian["assumes"] =
      "the training's trade-off curve is Gaussian (mu-GDP, e.g. the full-batch Gaussian mechanism); only "
      "then "
      "is this epsilon (of the rejected mu-GDP, at the run's delta) a lower bound on the training's";
  nlohmann::json approximate = FdpEstimateJson(fdp.approximate);
  approximate["assumes"] = "independent fair canary coins drawn before training (as eps_lower)";
  return {{"method",
           "f-DP one-run audit (Mahloujifar, Melis & Chaudhuri 2024; docs/theory.md, \"The f-DP one-run "
           "audit\"): the strongest trade-off of each family that the guesses reject at level beta, best of "
           "the same guess counts as eps_lower (Bonferroni)"},
          {"beta", fdp.beta},
          {"gaussian", gaussian},
          {"approximate_dp", approximate},
          {"in_verdict", false}};
}

}  // namespace

nlohmann::json OneRunCountsJson(const asyncdp::audit::OneRunAuditResult& result,
                                const asyncdp::audit::FdpOneRunResult& fdp, int64_t planted) {
  return {{"canaries", result.canaries},
          {"planted", planted},
          {"guesses", result.guesses},
          {"correct", result.correct},
          {"k_plus", result.k_plus},
          {"k_minus", result.k_minus},
          {"beta", result.beta},
          {"note",
           "the one-run bound is loose for the Gaussian mechanism by design (Steinke et al. 2023): expect it "
           "well below the reported epsilon"},
          {"fdp", FdpJson(fdp)}};
}

}  // namespace asyncdp::sim::audit
