#include "sim/audit/train_audit.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/audit/canary_statistics.h"
#include "core/audit/one_run.h"
#include "core/check.h"
#include "core/error.h"
#include "core/random.h"
#include "core/sampling.h"
#include "sim/audit/audit_json.h"
#include "sim/audit/one_run_estimates.h"
#include "sim/audit/reported_epsilons.h"
#include "sim/experiment.h"
#include "sim/json_number.h"
#include "sim/privacy.h"

namespace asyncdp::sim::audit {
namespace {
std::string TrainAuditThreatModel(const TrainCanaries& t) {
  const std::string who = "client " + std::to_string(t.client);
  if (t.kind == CanaryKind::kDirac) {
    return "Record-level DP of " + who +
           "'s local data set against the server, which sees every (i, U) the client sends (white-box: each "
           "update projected on each canary's own parameter). One training run; the observer knows which "
           "records could be canaries but not their coins";
  }
  return "Record-level DP of " + who +
         "'s local data set against an observer of the final global model only (black-box: the model's loss "
         "on each candidate canary). One training run; the observer knows which records could be canaries but "
         "not their coins";
}

}  // namespace

TrainAuditRecorder::TrainAuditRecorder(const Experiment& e) : e_(e) {
  const TrainCanaries* t = e.train_canaries.get();
  ASYNCDP_CHECK(t != nullptr);
  if (t->kind != CanaryKind::kDirac) return;  // the final-model view needs no recording
  m_ = t->canaries;
  const int64_t rounds = e.plans[static_cast<size_t>(t->client)].rounds();
  projections_.assign(static_cast<size_t>(rounds * m_), 0.0);
  received_.assign(static_cast<size_t>(rounds), 0);
}

void TrainAuditRecorder::OnUpdate(const UpdateMessage& message, const RunClock& /*clock*/) {
  const TrainCanaries& t = *e_.train_canaries;
  if (m_ == 0 || message.client != t.client) return;
  const int64_t round = message.local_round;
  ASYNCDP_CHECK(round >= 0 && round < static_cast<int64_t>(received_.size()));
  const double clip = e_.config.dp.clip;
  for (int64_t j = 0; j < m_; ++j) {
    projections_[static_cast<size_t>(round * m_ + j)] =
        static_cast<double>(message.update[t.first_coordinate + j]) / clip;
  }
  received_[static_cast<size_t>(round)] = 1;
}

std::vector<double> TrainCanaryScores(const Experiment& e, const TrainAuditRecorder& recorder,
                                      const Eigen::VectorXf& final_model) {
  const TrainCanaries& t = *e.train_canaries;
  std::vector<double> scores(static_cast<size_t>(t.canaries), 0.0);
  if (t.kind == CanaryKind::kMislabelled) {
    // A lower loss on the relabelled record: the model has learnt it.
    const std::span<const float> params(final_model.data(), static_cast<size_t>(final_model.size()));
    for (int64_t j = 0; j < t.canaries; ++j) {
      const int64_t one[] = {j};
      scores[static_cast<size_t>(j)] = -e.model->Evaluate(params, data::Subset(t.canary_rows, one)).loss;
    }
    return scores;
  }
  // Per round: x_t = <U_t, e_j> / C ~ N(b_t, sigma_t^2), b_t the canary's presence in batch t (rate q_t).
  // The likelihood ratio when a round subsamples under Poisson or fixed-size sampling, else the sum.
  const RoundPlan& plan = e.plans[static_cast<size_t>(t.client)];
  bool subsampled = false;
  for (int64_t r = 0; r < plan.rounds(); ++r) subsampled = subsampled || plan.rate(r) < 1.0;
  const bool likelihood_ratio = subsampled && e.privacy.sampling() != SamplingModel::kShuffle;
  const auto& x = recorder.projections();
  const auto& received = recorder.received();
  for (int64_t j = 0; j < t.canaries; ++j) {
    double score = 0.0;
    for (size_t r = 0; r < received.size(); ++r) {
      if (received[r] == 0) continue;
      const double projection = x[r * static_cast<size_t>(t.canaries) + static_cast<size_t>(j)];
      score += likelihood_ratio ? asyncdp::audit::CanaryStepLogLikelihoodRatio(
                                      projection, plan.rate(static_cast<int64_t>(r)), plan.noise_multipliers[r])
                                : projection;
    }
    scores[static_cast<size_t>(j)] = score;
  }
  return scores;
}

TrainAuditOutcome AuditTrainingRun(const Experiment& e, const TrainAuditRecorder& recorder,
                                   const Eigen::VectorXf& final_model, int64_t rounds_done) {
  const TrainCanaries& t = *e.train_canaries;
  TrainAuditOutcome out;
  out.canary_scores = TrainCanaryScores(e, recorder, final_model);
  out.confidence = e.config.audit.confidence;
  out.rounds = rounds_done;
  const OneRunEstimates estimates =
      EstimateOneRun(out.canary_scores, t.included, e.privacy.delta, out.confidence);
  out.one_run = estimates.one_run;
  out.fdp = estimates.fdp;
  out.reported = ReportedEpsilons(e, t.client, rounds_done);
  out.refuted = RefutedAccountants(out.reported, out.one_run.epsilon);
  out.headline = ChooseHeadline(out.reported, e.privacy.accountant);
  return out;
}

namespace {

// The verdict and the accountants it refutes, as one line (logged and in the JSON).
std::string VerdictLine(const TrainAuditOutcome& outcome, const std::vector<std::string>& refuted) {
  const asyncdp::audit::OneRunAuditResult& result = outcome.one_run;
  return fmt::format(
      "eps_lower = {:.4g} ({:g}%) {} eps_reported({}) = {:.4g} : {}", result.epsilon,
      100.0 * outcome.confidence, result.epsilon <= outcome.headline.epsilon ? "<=" : ">",
      accounting::ToString(outcome.headline.accountant), outcome.headline.epsilon,
      outcome.violation()
          ? fmt::format("VIOLATION: the one-run lower bound exceeds the epsilon reported by {}",
                        fmt::join(refuted, ", "))
          : std::string("consistent"));
}

// Who was audited, on what: the client's records with and without canaries, its rounds and mechanism.
nlohmann::json AuditedJson(const Experiment& e, const TrainCanaries& t, int64_t rounds) {
  return {{"client", t.client},
          {"records_without_canaries", t.records_before},
          {"records", e.plans[static_cast<size_t>(t.client)].n_records},
          {"records_replaced_by_canaries", t.replaced},
          {"rounds", rounds},
          {"sampling", std::string(ToString(e.privacy.sampling()))},
          {"neighbours", std::string(ToString(NaturalNeighbours(e.privacy.sampling())))},
          {"sigma", e.privacy.sigma},
          {"delta", e.privacy.delta},
          {"clip", e.config.dp.clip}};
}

std::string CanaryDescription(CanaryKind kind) {
  return kind == CanaryKind::kDirac
             ? "Dirac gradient canaries (Nasr et al. 2023): canary j's clipped gradient is exactly C on its "
               "own "
               "model parameter, which no other record's gradient touches (a test-only model wrapper adds m "
               "parameters to every client's model); score = likelihood ratio (subsampled rounds) or sum of "
               "each "
               "update's projection on it"
             : "mislabelled records: copies of m distinct records of the client, each with another label "
               "(from "
               "the seed), trained on by the configured model; score = -(final model's loss on it)";
}

// What the bound rests on: the canaries are training data, how they entered N_c, whose guarantee it is.
nlohmann::json AssumptionsJson(const Experiment& e, const TrainCanaries& t) {
  const bool replace_one = NaturalNeighbours(e.privacy.sampling()) == NeighbourRelation::kReplaceOne;
  return {
      "The canaries are part of this run's training data: every reported epsilon (here and in summary.json "
      "\"privacy\") accounts the data set the run used, canaries included.",
      replace_one
          ? fmt::format("{} sampling (replace-one): each planted canary took the place of one of the "
                        "client's records ({} of them not trained on); N_c is unchanged.",
                        ToString(e.privacy.sampling()), t.replaced)
          : fmt::format("{} sampling (add/remove): the {} planted canaries were added to the "
                        "client's {} records; N_c = {} and the sampling rate of that data set are what "
                        "the accountants compose (N_c treated as public, as in every run).",
                        ToString(e.privacy.sampling()), t.planted, t.records_before,
                        e.plans[static_cast<size_t>(t.client)].n_records),
      "The bound holds for the audited client's record-level guarantee in the stated threat model; it says "
      "nothing about other clients.",
      kPublicAssumption};
}

nlohmann::json FaultInjectionJson(const TrainCanaries& t) {
  if (t.noise_scale == 1.0) return nullptr;
  return {{"noise_scale", t.noise_scale},
          {"note",
           "TEST ONLY: the audited client added noise_scale * sigma while every accountant accounts sigma: "
           "the reported epsilons are deliberately wrong"}};
}

}  // namespace

nlohmann::json TrainAuditJson(const Experiment& e, const TrainAuditOutcome& outcome) {
  const TrainCanaries& t = *e.train_canaries;
  const asyncdp::audit::OneRunAuditResult& result = outcome.one_run;
  std::vector<std::string> refuted;
  for (const accounting::AccountantKind a : outcome.refuted) refuted.push_back(std::string(accounting::ToString(a)));
  const bool violation = outcome.violation();
  const std::string line = VerdictLine(outcome, refuted);
  nlohmann::json j;
  j["verdict"] = violation ? "VIOLATION" : "consistent";
  j["verdict_line"] = line;
  j["verdict_rule"] =
      "VIOLATION iff the one-run lower bound (Steinke, Nasr & Jagielski 2023, Corollary 5.4) exceeds an "
      "upper-bound accountant's epsilon for the audited client at the run's delta";
  j["refuted_accountants"] = refuted;
  j["eps_lower"] = {
      {"epsilon", result.epsilon},
      {"confidence", outcome.confidence},
      {"delta", e.privacy.delta},
      {"method",
       "one-run audit: largest eps whose p-value is below 1 - confidence, best of several guess "
       "counts (Bonferroni)"},
      {"assumes", "independent fair canary coins drawn before training (from the run's seed)"}};
  j["reported"] = ReportedEpsilonsJson(outcome.reported);
  j["headline"] = HeadlineJson(outcome.headline);
  j["one_run"] = OneRunCountsJson(result, outcome.fdp, t.planted);
  j["audited"] = AuditedJson(e, t, outcome.rounds);
  j["canary"] = CanaryDescription(t.kind);
  j["threat_model"] = TrainAuditThreatModel(t);
  j["assumptions"] = AssumptionsJson(e, t);
  j["fault_injection"] = FaultInjectionJson(t);
  spdlog::log(violation ? spdlog::level::err : spdlog::level::info, "audit: {}", line);
  return j;
}

}  // namespace asyncdp::sim::audit
