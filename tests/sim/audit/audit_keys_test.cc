// Which configuration keys `asyncdp audit` reads (AuditUnreadReason, sim/audit/audit.h), probed in both of
// its modes: every registry key set to another valid value alone either changes the audit's report, is
// refused with a message, or is called unread with a reason — and then leaves the report bit-identical. The
// command refuses an override (--set) of an unread key; this keeps that list true in both directions.
// Both modes use the black-box mislabelled canary, scored by the final model's loss: it reads the whole
// model. The white-box Dirac score reads only the audited client's canary coordinate, which most keys
// (other clients, the model kind, the delay rule) cannot move, so it would prove little here.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/audit/audit.h"
#include "sim/config_io.h"
#include "tests/sim/audit/audit_test_util.h"
#include "tests/sim/key_probe.h"

namespace asyncdp::sim::audit {
namespace {

// What an audit reports apart from its timings and the echo of its configuration: audit.json and scores.
std::string Report(const TrainConfig& config, const AuditOptions& options) {
  ValidateConfig(config, /*refuse_unused_keys=*/false);  // as the command does first
  const AuditReport r = RunAudit(config, options);
  nlohmann::json j = AuditJson(r);
  for (const char* key : {"wall_seconds", "seconds_per_training", "config"}) j.erase(key);
  j["in_scores"] = r.in_scores;
  j["out_scores"] = r.out_scores;
  j["canary_scores"] = r.canary_scores;
  return j.dump();
}

TEST(AuditUnreadReason, EveryKeyChangesTheAuditOrIsCalledUnreadAndChangesNothing) {
  TrainConfig base = testing::AuditConfig("poisson", 60, 30, 4, 2.0);
  // One straggler (client 2, 4x slower) keeps the clients out of step, so the timing keys (the delay rule
  // and tau, the gradient cost, the speeds, the delayed ids) change the one-run audit's scores in GCC's
  // release build and Clang's sanitizer build alike. With equal clients they changed them in GCC's build (by
  // ~1e-7 relative) and not at all in Clang's (scripts/asan-check.sh), so "called read but changed nothing"
  // depended on the compiler.
  base.clients.straggler_ids = {2};
  AuditOptions multi;
  multi.runs = 16;
  multi.jobs = 1;
  // A mislabelled record scored by the final model's loss on it (black box): the score reads the whole
  // final model, so most keys move it.
  multi.view = AuditView::kFinalModel;
  multi.canary = CanaryKind::kMislabelled;
  AuditOptions one_run;
  one_run.mode = AuditMode::kOneRun;
  one_run.canaries = 20;
  one_run.canary = CanaryKind::kMislabelled;  // planted in the run's data, scored by the final model's loss
  one_run.view = AuditView::kFinalModel;
  // Keys the audit reads that change nothing in this base, and why.
  const std::map<std::string, std::string> no_effect_here = {
      {"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
      {"data.features", "another column count is refused or pads columns no row uses"},
      {"protocol.allow_truncation", "the trainings complete: nothing to accept"},
      {"protocol.exclude_after", "no client is silent"},
      {"dp.halt_at_budget", "no budget halt is due in 4 rounds"},
      {"dp.sigma_schedule", "the one-entry schedule [1] multiplies sigma by 1"},
      {"clients.latency_mean",
       "one-run: its one training's scores stay bit-identical at 1.001 s (the multi-run"
       " trainings' scores move)"},
      {"clients.straggler_factor", "client 2 is the slowest at 5x as at 4x: the scores stay bit-identical"}};
  for (const AuditOptions& options : {multi, one_run}) {
    SCOPED_TRACE(std::string(ToString(options.mode)));
    const auto [read, unread] = ::asyncdp::testing::ProbeEveryKey(
        base, [&options](const TrainConfig& c) { return Report(c, options); }, AuditUnreadReason,
        no_effect_here, "the audit");
    EXPECT_GT(read, 25);
    // The one-run training refuses most unread keys itself (the InputError ProbeEveryKey skips).
    EXPECT_GT(unread, 5);
  }
}

}  // namespace
}  // namespace asyncdp::sim::audit
