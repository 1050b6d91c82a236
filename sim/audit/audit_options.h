// Typed options of `asyncdp audit` (docs/audit.md, "Usage"): how many canary runs, which canary, which
// observer and statistic. Parsed once from the command line (apps/audit_command.cc); sim/audit/ never
// compares a string while running. The training itself is a TrainConfig, resolved by the same machinery
// as `asyncdp train` (sim/config_io.h), so an audit checks exactly the run a config describes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/privacy_assumptions.h"

namespace asyncdp::sim::audit {

enum class AuditMode {
  kMultiRun,  // N runs with the canary, N without: core/audit/multi_run.h
  kOneRun,    // one run with m canaries, each in with probability 1/2: core/audit/one_run.h
};

// What the observer sees (the threat model of the report, docs/design.md).
enum class AuditView {
  kWhiteBox,    // every (i, U) the audited client sends (the server's view)
  kFinalModel,  // only the final global model (other clients' noise on the canary coordinate too)
};

// The canary planted in the audited client's data.
enum class CanaryKind {
  kDirac,  // gradient canary C e on its own parameter; other records train normally (models/dirac_canary.h)
  kOpposite,     // Dirac canary, every other record of the client -C e: the replace-one worst case
                 // (fixed-size and shuffled batches; needs a sampler analysed under replace-one)
  kWholeClient,  // user-level (dp.unit = "client"): the audited client's whole data set is the canary — every
                 // record C e, so its round update is clip_{C_u}(s_t C e) — against the client without data
                 // (update 0): the add/remove-one-client neighbours of the user-level accounting
  kMislabelled,  // a real record with another label (models/data_canary.h), trained on by the configured
                 // model: the realistic black-box canary, scored by the final model's loss on it
};

enum class AuditStatistic {
  kAuto,             // likelihood ratio when some round subsamples (q < 1, Poisson or fixed-size), else sum
  kSum,              // sum_t x_t (Nasr et al. 2023; the final model's canary coordinate)
  kLikelihoodRatio,  // sum_t ln((1 - q_t) + q_t exp((2 x_t - 1) / (2 sigma_t^2))) (Neyman–Pearson)
  kNegativeLoss,     // -(the final model's loss on the canary record): mislabelled canaries
};

struct AuditOptions {
  AuditMode mode = AuditMode::kMultiRun;
  AuditView view = AuditView::kWhiteBox;
  CanaryKind canary = CanaryKind::kDirac;
  AuditStatistic statistic = AuditStatistic::kAuto;
  // Multi-run: runs per side (with / without the canary), >= 8. 2,000 a side resolve eps ~ 2-8
  // (docs/audit.md); a few hundred suffice for gross errors.
  int64_t runs = 1000;
  // One-run: canaries m >= 10 (each a record of the audited client; replace-one samplers need m <= N_c).
  int64_t canaries = 1000;
  int64_t client = 0;        // the audited client, in [0, clients.count)
  double confidence = 0.95;  // of eps_lower and of the VIOLATION test, (0, 1)
  // Parallel runs (each on the virtual runtime with one worker thread); 0 = all cores.
  int64_t jobs = 0;

  // Test-only switches that make the report WRONG on purpose, to show that the audit catches it. Both
  // are written into audit.json as "fault_injection"; never use them for a real audit.
  // The clients add noise noise_scale * sigma while the accountants account sigma (1 = honest).
  double noise_scale = 1.0;
  // Account the rounds as if batches were drawn by this sampler (none = the sampler actually run): e.g.
  // "poisson" for a fixed-size run replays the old replace-one pair (1-q)N(0) + qN(1) vs N(0).
  std::optional<SamplingModel> accounted_sampling;

  // Throws ConfigError naming the option if a value is out of range.
  void Validate() const;
};

AuditMode ParseAuditMode(std::string_view text);            // multi | one-run
AuditView ParseAuditView(std::string_view text);            // white-box | final-model
CanaryKind ParseCanaryKind(std::string_view text);          // dirac | opposite | mislabelled
AuditStatistic ParseAuditStatistic(std::string_view text);  // auto | sum | likelihood-ratio | loss

std::string_view ToString(AuditMode mode);
std::string_view ToString(AuditView view);
std::string_view ToString(CanaryKind canary);
std::string_view ToString(AuditStatistic statistic);

}  // namespace asyncdp::sim::audit
