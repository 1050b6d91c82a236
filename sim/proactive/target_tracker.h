// A client's accuracy target across its phases (Figure 15, steps 3–4; docs/theory.md §9): after the
// planned rounds of phase j the client checks the accuracy of the last global model it received on its own
// held-out rows. Below target it goes on with phase j+1 (lower σ, planned before training by the E.1
// calculator, sim/proactive/phase_plan.h); at or above target it pauses — stops computing, keeps receiving
// — and resumes with the next phase as soon as a received model falls below target. With no phase left,
// the client stops for good (target reached, or missed with its budget spent).
//
// Privacy note (docs/theory.md, "Proactive phases"): the decisions depend on the client's held-out rows,
// which are not part of the data set its ε protects; the pause/resume pattern the server sees is a
// function of DP outputs (the global models) and of those held-out rows only.
//
// Thread safety: none; owned by one ClientProtocol.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/check.h"

namespace asyncdp::sim {

enum class TargetEventKind {
  kPhaseEnd,  // the planned rounds of a phase are done; `accuracy` is the check
  kPause,     // at or above target: stops computing, keeps receiving
  kResume,    // a received model fell below target: re-joins with the next phase
  kStop,      // no phase left
};

struct TargetEvent {
  TargetEventKind kind = TargetEventKind::kPhaseEnd;
  int64_t phase = 0;         // the phase that ended (kPhaseEnd, kPause, kStop) or starts (kResume)
  int64_t local_round = 0;   // i when it happened
  int64_t global_round = 0;  // k of the model checked
  double accuracy = 0.0;     // on the client's held-out rows
};

enum class PhaseDecision { kContinue, kPause, kStopReached, kStopMissed };

class TargetTracker {
 public:
  // phase_ends: cumulative local rounds at which each phase ends (strictly increasing, last = plan length).
  TargetTracker(double accuracy_target, std::vector<int64_t> phase_ends)
      : target_(accuracy_target), phase_ends_(std::move(phase_ends)) {
    ASYNCDP_CHECK(!phase_ends_.empty());
  }

  // Before local round `local_round` starts holding v̂_k (k = global_round). `accuracy()` is evaluated
  // only at a phase end that has not been checked yet.
  template <typename AccuracyFn>
  PhaseDecision BeforeRound(int64_t local_round, int64_t global_round, const AccuracyFn& accuracy) {
    if (phase_ >= static_cast<int64_t>(phase_ends_.size()) || local_round != phase_ends_[phase_]) {
      return PhaseDecision::kContinue;
    }
    const double a = accuracy();
    const bool last = phase_ + 1 == static_cast<int64_t>(phase_ends_.size());
    events_.push_back({TargetEventKind::kPhaseEnd, phase_, local_round, global_round, a});
    const bool reached = a >= target_;
    if (last) {
      events_.push_back({TargetEventKind::kStop, phase_, local_round, global_round, a});
      phase_ = static_cast<int64_t>(phase_ends_.size());
      return reached ? PhaseDecision::kStopReached : PhaseDecision::kStopMissed;
    }
    ++phase_;
    if (!reached) return PhaseDecision::kContinue;
    events_.push_back({TargetEventKind::kPause, phase_ - 1, local_round, global_round, a});
    return PhaseDecision::kPause;
  }

  // While paused, a newer v̂_k whose held-out accuracy is `accuracy`: true = resume (strictly below target).
  bool OnModelWhilePaused(int64_t local_round, int64_t global_round, double accuracy) {
    ++paused_checks_;
    if (accuracy >= target_) return false;
    events_.push_back({TargetEventKind::kResume, phase_, local_round, global_round, accuracy});
    return true;
  }

  // A tracker as it stood at the end of a run on another process (the MPI runtime gathers each client's
  // on rank 0: sim/runtime/mpi_transport.h), from what its accessors return.
  static TargetTracker Restore(double accuracy_target, std::vector<int64_t> phase_ends, int64_t phase,
                               int64_t paused_checks, std::vector<TargetEvent> events) {
    TargetTracker tracker(accuracy_target, std::move(phase_ends));
    ASYNCDP_CHECK(phase >= 0 && phase <= tracker.phases() && paused_checks >= 0);
    tracker.phase_ = phase;
    tracker.paused_checks_ = paused_checks;
    tracker.events_ = std::move(events);
    return tracker;
  }

  double target() const { return target_; }
  // The phase running (or to run after a resume); == phases() once none is left.
  int64_t phase() const { return phase_; }
  int64_t phases() const { return static_cast<int64_t>(phase_ends_.size()); }
  const std::vector<int64_t>& phase_ends() const { return phase_ends_; }
  const std::vector<TargetEvent>& events() const { return events_; }
  int64_t paused_checks() const { return paused_checks_; }

 private:
  double target_;
  std::vector<int64_t> phase_ends_;
  int64_t phase_ = 0;
  int64_t paused_checks_ = 0;
  std::vector<TargetEvent> events_;
};

}  // namespace asyncdp::sim
