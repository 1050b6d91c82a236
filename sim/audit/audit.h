// `asyncdp audit` end to end (docs/audit.md, "Usage"): the canary trainings of sim/audit/canary_runs.h
// run in parallel, their scores turned into an empirical lower bound on epsilon (core/audit/), set
// against the epsilon every accountant reports for the audited client, and a verdict.
//
// Verdict. Multi-run: VIOLATION iff the reported privacy profile — delta(eps) of the tightest
// upper-bound accountant (RDP, PLD) at every eps of a grid — is refuted by the assumption-free test of
// core/audit/profile_check.h at the stated confidence. One-run: VIOLATION iff the one-run lower bound
// exceeds the smallest reported upper bound at the run's delta. Either way one test at the stated
// confidence, so a correct report is flagged with probability <= 1 - confidence.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/audit/fdp_one_run.h"
#include "core/audit/multi_run.h"
#include "core/audit/one_run.h"
#include "sim/audit/audit_options.h"
#include "sim/audit/reported_epsilons.h"
#include "sim/config.h"
#include "sim/experiment.h"

namespace asyncdp::sim::audit {

struct AuditReport {
  AuditOptions options;
  TrainConfig resolved_config;     // with sigma and delta filled in
  std::string sampling;            // the sampler the runs used
  std::string accounted_sampling;  // the sampler the accountants assumed (differs only by fault injection)
  std::string neighbours;          // the neighbour relation audited
  std::string statistic;           // resolved: sum | likelihood-ratio
  double delta = 0.0;
  double sigma = 0.0;
  int64_t client_records = 0;  // N_c of the audited client
  int64_t rounds = 0;          // local rounds of the audited client (the accountants compose these)
  std::vector<ReportedEpsilon> reported;
  accounting::AccountantKind headline_accountant = accounting::AccountantKind::kPld;  // the eps on the verdict line
  double headline_epsilon = 0.0;

  // Multi-run: scores in run order, and the seed of every run.
  std::vector<double> in_scores, out_scores;
  std::vector<uint64_t> in_seeds, out_seeds;
  asyncdp::audit::MultiRunAuditResult multi;
  std::vector<asyncdp::audit::ProfilePoint> profile;  // the reported profile tested
  // One-run: each canary's score and coin.
  std::vector<double> canary_scores;
  std::vector<uint8_t> included;
  asyncdp::audit::OneRunAuditResult one_run;
  asyncdp::audit::FdpOneRunResult fdp;  // beside one_run, not in the verdict

  double eps_lower = 0.0;  // definition bound (multi) or one-run bound: assumption-free
  bool violation = false;
  std::vector<std::string> refuted_accountants;  // VIOLATION: the accountants whose claim is refuted
  std::string verdict_detail;                    // one sentence: why consistent / why VIOLATION
  double wall_seconds = 0.0;
  int64_t trainings = 0;
};

// Throws ConfigError when the configuration leaves nothing to audit: participation other than asynchronous
// rounds (random check-ins; on protocol.participation), or a budget that allows the audited client no round
// (on dp.epsilon). RunAudit calls both; the command calls the first before anything else is judged.
void RequireAuditableRun(const TrainConfig& config);
void RequireAuditedRounds(const Experiment& experiment, int64_t client);

AuditReport RunAudit(const TrainConfig& config, const AuditOptions& options);

// Why `asyncdp audit` does not read `key` of `config`, or nullopt when it does: the audit.* keys (they
// configure the one-run audit of `asyncdp train`; the command has flags), the runtime and its threads
// (every training runs on the virtual runtime with one worker thread, --jobs of them at a time), a run's
// evaluation and outputs (it scores canaries and writes audit.json), and the keys the run itself does not
// read (config_usage.h).
std::optional<std::string> AuditUnreadReason(const std::string& key, const TrainConfig& config);

// `eps_lower = 0.84 (95%) <= eps_reported(pld) = 2.01 : consistent`, or `... > ... : VIOLATION (...)`.
std::string VerdictLine(const AuditReport& report);

// audit.json: the verdict, every bound with its assumptions, the reported epsilons, the resolved
// configuration and audit options, the threat model.
nlohmann::json AuditJson(const AuditReport& report);

// Writes audit.json, config.resolved.toml, scores.csv, histogram.csv, roc.csv (multi-run) into out_dir
// atomically (sim/output_dir.h; the command judges out_dir with CheckOutputTarget before the trainings).
void WriteAuditOutputs(const AuditReport& report, const std::string& out_dir);

}  // namespace asyncdp::sim::audit
