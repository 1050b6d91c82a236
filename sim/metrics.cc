#include "sim/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

#include "core/accounting/account.h"
#include "core/check.h"
#include "core/error.h"
#include "models/convergence_measures.h"

namespace asyncdp::sim {
namespace {

constexpr int64_t kGradientChunk = 256;  // rows per gradient batch of the gradient-norm diagnostic

// (q, σ, count) per group of the compacted schedule: schedules with the same multiset of rounds share it.
using CompactScheduleKey = std::vector<std::tuple<double, double, int64_t>>;

CompactScheduleKey CompactKey(const accounting::Schedule& schedule) {
  CompactScheduleKey key;
  for (const accounting::RoundGroup& g : accounting::CompactSchedule(schedule)) key.emplace_back(g.q, g.sigma, g.count);
  return key;
}

// Whether every group (q, sigma) of `part` is in `whole` with at least as many rounds (both compact: sorted
// by (q, sigma), one entry each).
bool Dominates(const CompactScheduleKey& whole, const CompactScheduleKey& part) {
  auto w = whole.begin();
  for (const auto& [q, sigma, count] : part) {
    while (w != whole.end() && std::tie(std::get<0>(*w), std::get<1>(*w)) < std::tie(q, sigma)) ++w;
    if (w == whole.end() || std::get<0>(*w) != q || std::get<1>(*w) != sigma || std::get<2>(*w) < count)
      return false;
  }
  return true;
}

}  // namespace

MetricsRecorder::MetricsRecorder(const Experiment& experiment) : experiment_(experiment) {
  every_ = std::max<int64_t>(1, LongestPlan(experiment) / std::max<int64_t>(1, experiment.config.eval.points));
  // eval.points = 0: no evaluation during the run, only the final one (OnFinish).
  next_eval_ = experiment.config.eval.points > 0 ? every_ : std::numeric_limits<int64_t>::max();
  if (experiment.data.reference) {
    parts_.reserve(experiment.data.shards.size());
    for (const auto& shard : experiment.data.shards) {
      parts_.push_back(shard.Copy());
      ASYNCDP_CHECK(parts_.back().HoldsEveryRow());  // an MPI rank 0 reads every row for this (sim/experiment.cc)
    }
    for (const auto& part : parts_) part_ptrs_.push_back(&part);
  }
  if (experiment.config.output.diagnostics && experiment.config.eval.gradient_norm) {
    workspace_ = experiment.model->NewWorkspace(kGradientChunk);
  }
}

const accounting::RunningEpsilon& MetricsRecorder::RunningOf(size_t client) {
  if (client_running_.empty()) client_running_.resize(experiment_.plans.size(), nullptr);
  if (client_running_[client] == nullptr) {
    // Rounds applied so far are a part of the client's whole plan (budget halts only shorten it): the
    // whole plan's composition is prepared once and shared by clients with the same plan.
    const PrivacySetup& privacy = experiment_.privacy;
    const RoundPlan& plan = experiment_.plans[client];
    const accounting::Schedule whole = privacy.ClientSchedule(plan, plan.rounds());
    auto key = CompactKey(whole);
    auto it = running_.find(key);
    if (it == running_.end()) {
      it = running_.emplace(std::move(key), std::make_unique<accounting::RunningEpsilon>(
                                                *privacy.EventOf(whole), privacy.accountant, privacy.delta,
                                                privacy.precision())).first;
    }
    client_running_[client] = it->second.get();
  }
  return *client_running_[client];
}

double MetricsRecorder::EpsilonSoFar(const ServerProtocol& server) {
  const PrivacySetup& privacy = experiment_.privacy;
  if (!privacy.enabled) return std::numeric_limits<double>::infinity();
  struct Applied {
    size_t client;
    accounting::Schedule schedule;
    CompactScheduleKey key;
    int64_t rounds;
  };
  std::vector<Applied> applied;
  for (size_t c = 0; c < experiment_.plans.size(); ++c) {
    const auto client = static_cast<int64_t>(c);
    const int64_t prefix = server.delivered_prefix(client);
    const std::set<int64_t>& early = server.early_rounds(client);
    if (prefix == 0 && early.empty()) continue;
    accounting::Schedule schedule = privacy.AppliedSchedule(experiment_.plans[c], prefix, early);
    CompactScheduleKey key = CompactKey(schedule);
    int64_t rounds = 0;
    for (const auto& group : key) rounds += std::get<2>(group);
    applied.push_back({c, std::move(schedule), std::move(key), rounds});
  }
  // The worst client only: one whose rounds (per (q, sigma)) are all among another's adds nothing to the
  // maximum. Composing more rounds never lowers the true epsilon, so the other client's reported upper bound
  // bounds its own true epsilon and hence the dominated client's. With identical plans (the paper's tables)
  // that is one composition per evaluation instead of one per client.
  std::stable_sort(applied.begin(), applied.end(),
                   [](const Applied& a, const Applied& b) { return a.rounds > b.rounds; });
  std::vector<const CompactScheduleKey*> counted;
  double worst = 0.0;
  for (const Applied& a : applied) {
    const bool dominated = std::any_of(counted.begin(), counted.end(), [&](const CompactScheduleKey* other) {
      return Dominates(*other, a.key);
    });
    if (dominated) continue;
    auto it = epsilon_cache_.find(a.key);
    if (it == epsilon_cache_.end()) {
      it = epsilon_cache_.emplace(a.key, RunningOf(a.client).Of(*privacy.EventOf(a.schedule))).first;
    }
    worst = std::max(worst, it->second);
    counted.push_back(&it->first);
  }
  return worst;
}

void MetricsRecorder::Record(const ServerProtocol& server, const RunClock& clock) {
  const auto& params = server.model();
  const std::span<const float> view(params.data(), static_cast<size_t>(params.size()));
  MetricsRow row;
  row.global_round = server.global_round();
  row.time = clock.time;
  row.gradients = clock.gradients;
  const auto epsilon_start = std::chrono::steady_clock::now();
  row.epsilon = EpsilonSoFar(server);
  epsilon_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - epsilon_start).count();
  if (experiment_.privacy.adaptive_clip) {
    double sum = 0.0;
    int64_t clients = 0;
    for (size_t c = 0; c < experiment_.plans.size(); ++c) {
      const double clip = server.last_clip(static_cast<int64_t>(c));
      if (clip > 0) {
        sum += clip;
        ++clients;
      }
    }
    row.clip = clients > 0 ? sum / static_cast<double>(clients) : experiment_.config.dp.clip;
  }
  const auto test = experiment_.model->Evaluate(view, experiment_.data.test);
  row.test_loss = test.loss;
  // A non-finite model has no accuracy (what NaN scores compare to is an artefact), as in summary.json.
  const bool diverged = !params.allFinite() || !std::isfinite(test.loss);
  row.test_accuracy = diverged ? std::numeric_limits<double>::quiet_NaN() : test.accuracy;
  // A loss on client records: a non-private diagnostic, not even computed without output.diagnostics.
  row.train_loss = experiment_.config.output.diagnostics && experiment_.data.train_eval.rows() > 0
                       ? experiment_.model->Evaluate(view, experiment_.data.train_eval).loss
                       : std::numeric_limits<double>::quiet_NaN();
  if (experiment_.config.output.diagnostics && experiment_.data.reference) {
    const models::ConvergencePoint point =
        models::MeasureConvergence(*experiment_.model, part_ptrs_, *experiment_.data.reference, view);
    row.suboptimality = point.suboptimality;
    row.distance_sq = point.distance_sq;
  }
  if (workspace_ && experiment_.data.train_eval.rows() > 0) {
    row.gradient_norm = models::GradientNorm(*experiment_.model, experiment_.data.train_eval, view,
                                             *workspace_, kGradientChunk);
  }
  rows_.push_back(row);
}

void MetricsRecorder::OnGlobalRound(const ServerProtocol& server, const RunClock& clock) {
  if (server.global_round() < next_eval_) return;
  while (next_eval_ <= server.global_round()) next_eval_ += every_;
  Record(server, clock);
}

void MetricsRecorder::OnFinish(const ServerProtocol& server, const RunClock& clock) {
  // The final model includes every applied update, also those after the last broadcast; if nothing was
  // applied since the last evaluation, that row already describes it.
  if (!rows_.empty() && rows_.back().global_round == server.global_round() &&
      rows_.back().gradients == clock.gradients) {
    return;
  }
  Record(server, clock);
}

std::string MetricsRecorder::ToCsv(const std::string& time_unit, bool diagnostics) const {
  const bool reference = diagnostics && experiment_.data.reference.has_value();
  const bool gradient_norm = diagnostics && experiment_.config.eval.gradient_norm;
  const bool adaptive = experiment_.privacy.adaptive_clip;
  std::string out = fmt::format("global_round,{},gradients,epsilon,test_loss,test_accuracy", time_unit);
  if (adaptive) out += ",clip";
  if (diagnostics) out += ",diag_train_loss";
  if (reference) out += ",diag_suboptimality,diag_distance_sq";
  if (gradient_norm) out += ",diag_gradient_norm";
  out += "\n";
  for (const auto& r : rows_) {
    out += fmt::format("{},{:.9g},{},{:.9g},{:.9g},{:.9g}", r.global_round, r.time, r.gradients, r.epsilon,
                       r.test_loss, r.test_accuracy);
    if (adaptive) out += fmt::format(",{:.9g}", r.clip);
    if (diagnostics) out += fmt::format(",{:.9g}", r.train_loss);
    if (reference) out += fmt::format(",{:.9g},{:.9g}", r.suboptimality, r.distance_sq);
    if (gradient_norm) out += fmt::format(",{:.9g}", r.gradient_norm);
    out += "\n";
  }
  return out;
}

}  // namespace asyncdp::sim
