// The one-run audit attached to a training run (audit.canaries = m; docs/audit.md, "Auditing a training
// run"): the observer that records the audited client's updates, the canaries' scores and the summary's
// "audit" block. The canaries themselves are planted by sim/audit/train_canaries.h, which explains them.
#pragma once

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "models/dirac_canary.h"
#include "models/model.h"
#include "sim/audit/audit_options.h"
#include "sim/audit/train_audit_outcome.h"
#include "sim/audit/train_canaries.h"
#include "sim/config.h"
#include "sim/round_plan.h"
#include "sim/runtime/run_observer.h"

namespace asyncdp::sim {
struct Experiment;
}

namespace asyncdp::sim::audit {

// The observer (the server's view): every update of the audited client projected on the Dirac canaries'
// coordinates. Called by the runtime's single observer thread.
class TrainAuditRecorder final : public RunObserver {
 public:
  explicit TrainAuditRecorder(const Experiment& e);
  void OnUpdate(const UpdateMessage& message, const RunClock& clock) override;

  // projections[t * m + j] = <U_t, e_j> / C; received[t] = round t arrived.
  const std::vector<double>& projections() const { return projections_; }
  const std::vector<uint8_t>& received() const { return received_; }

 private:
  const Experiment& e_;
  int64_t m_ = 0;
  std::vector<double> projections_;
  std::vector<uint8_t> received_;
};

// Each canary's score ("higher = looks planted") after the run.
std::vector<double> TrainCanaryScores(const Experiment& e, const TrainAuditRecorder& recorder,
                                      const Eigen::VectorXf& final_model);

// The audit after the run: the canaries' scores, eps_lower with its confidence, the epsilon of every
// accountant for the client's `rounds_done` rounds, the accountants it refutes and the verdict line's epsilon.
TrainAuditOutcome AuditTrainingRun(const Experiment& e, const TrainAuditRecorder& recorder,
                                   const Eigen::VectorXf& final_model, int64_t rounds_done);

// The summary's "audit" block written from the outcome: the verdict (consistent | VIOLATION) and its line,
// eps_lower, the reported epsilons, threat model, assumptions. Logs the verdict line.
nlohmann::json TrainAuditJson(const Experiment& e, const TrainAuditOutcome& outcome);

}  // namespace asyncdp::sim::audit
