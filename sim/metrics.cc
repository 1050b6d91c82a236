#include "sim/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/accounting/accountant.h"

namespace asyncdp::sim {

MetricsRecorder::MetricsRecorder(const Experiment& experiment) : experiment_(experiment) {
  every_ = std::max<int64_t>(1, LongestPlan(experiment) / std::max<int64_t>(1, experiment.config.eval.points));
  // eval.points = 0: no evaluation during the run, only the final one (OnFinish).
  next_eval_ = experiment.config.eval.points > 0 ? every_ : std::numeric_limits<int64_t>::max();
}

double MetricsRecorder::EpsilonSoFar(const ServerProtocol& server) {
  const PrivacySetup& privacy = experiment_.privacy;
  if (!privacy.enabled) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (size_t c = 0; c < experiment_.plans.size(); ++c) {
    const auto client = static_cast<int64_t>(c);
    const int64_t prefix = server.delivered_prefix(client);
    const std::set<int64_t>& early = server.early_rounds(client);
    if (prefix == 0 && early.empty()) continue;
    const accounting::Schedule schedule = privacy.AppliedSchedule(experiment_.plans[c], prefix, early);
    std::vector<std::tuple<double, double, int64_t>> key;
    for (const accounting::RoundGroup& g : accounting::CompactSchedule(schedule)) key.emplace_back(g.q, g.sigma, g.count);
    auto it = epsilon_cache_.find(key);
    if (it == epsilon_cache_.end()) {
      accounting::AccountantOptions options = privacy.options;
      options.pld.compute_lower_bound = false;  // ε so far is the upper bound
      std::unique_ptr<accounting::Accountant> accountant = accounting::MakeAccountant(privacy.accountant, options);
      accountant->AddSchedule(schedule);
      it = epsilon_cache_.emplace(std::move(key), accountant->Epsilon(privacy.delta).epsilon).first;
    }
    worst = std::max(worst, it->second);
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
  row.epsilon = EpsilonSoFar(server);
  const auto test = experiment_.model->Evaluate(view, experiment_.test);
  row.test_loss = test.loss;
  row.test_accuracy = test.accuracy;
  // A loss on client records: a non-private diagnostic, not even computed without output.diagnostics.
  row.train_loss = experiment_.config.output.diagnostics && experiment_.train_eval.rows() > 0
                       ? experiment_.model->Evaluate(view, experiment_.train_eval).loss
                       : std::numeric_limits<double>::quiet_NaN();
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
  std::string out = fmt::format("global_round,{},gradients,epsilon,test_loss,test_accuracy{}\n", time_unit,
                                diagnostics ? ",diag_train_loss" : "");
  for (const auto& r : rows_) {
    out += fmt::format("{},{:.9g},{},{:.9g},{:.9g},{:.9g}", r.global_round, r.time, r.gradients, r.epsilon,
                       r.test_loss, r.test_accuracy);
    out += diagnostics ? fmt::format(",{:.9g}\n", r.train_loss) : "\n";
  }
  return out;
}

}  // namespace asyncdp::sim
