#include "sim/audit/audit_options.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/sampling.h"

namespace asyncdp::sim::audit {
namespace {

[[noreturn]] void Unknown(std::string_view option, std::string_view text, std::string_view expected) {
  throw ConfigError(std::string(option),
                    "unknown value '" + std::string(text) + "' (expected " + std::string(expected) + ")");
}

}  // namespace

void AuditOptions::Validate() const {
  if (runs < 8 || runs > 10'000'000) throw ConfigError("--runs", "needs 8 <= runs per side <= 1e7");
  if (canaries < 10 || canaries > 10'000'000) throw ConfigError("--canaries", "needs 10 <= canaries <= 1e7");
  if (client < 0) throw ConfigError("--client", "must be >= 0");
  if (!(confidence > 0.0 && confidence < 1.0)) throw ConfigError("--confidence", "must be in (0, 1)");
  if (jobs < 0 || jobs > 4096) throw ConfigError("--jobs", "must be in [0, 4096] (0 = all cores)");
  if (!(std::isfinite(noise_scale) && noise_scale > 0.0 && noise_scale <= 1.0)) {
    throw ConfigError("--test-noise-scale", "must be in (0, 1]");
  }
  if (mode == AuditMode::kOneRun && canary == CanaryKind::kWholeClient) {
    throw ConfigError("--canary", "a whole-client canary is one client's data set, in or out of the run: use "
                                  "--mode multi");
  }
  if (mode == AuditMode::kOneRun && canary == CanaryKind::kOpposite) {
    throw ConfigError("--canary", "the one-run audit plants Dirac or mislabelled canaries: use --mode multi for "
                                  "'opposite'");
  }
  if (mode == AuditMode::kOneRun && canary == CanaryKind::kMislabelled && accounted_sampling) {
    throw ConfigError("--test-accounted-sampling", "not available for a one-run audit of mislabelled canaries");
  }
  const bool loss = statistic == AuditStatistic::kNegativeLoss;
  if (canary == CanaryKind::kMislabelled &&
      (view != AuditView::kFinalModel || !(loss || statistic == AuditStatistic::kAuto))) {
    throw ConfigError("--canary",
                      "a mislabelled canary is scored by the final model's loss on it: use --view "
                      "final-model (and --statistic auto or loss)");
  }
  if (loss && canary != CanaryKind::kMislabelled) {
    throw ConfigError("--statistic", "the loss statistic scores mislabelled canaries (--canary mislabelled)");
  }
}

AuditMode ParseAuditMode(std::string_view text) {
  if (text == "multi") return AuditMode::kMultiRun;
  if (text == "one-run") return AuditMode::kOneRun;
  Unknown("--mode", text, "multi | one-run");
}

AuditView ParseAuditView(std::string_view text) {
  if (text == "white-box") return AuditView::kWhiteBox;
  if (text == "final-model") return AuditView::kFinalModel;
  Unknown("--view", text, "white-box | final-model");
}

CanaryKind ParseCanaryKind(std::string_view text) {
  if (text == "dirac") return CanaryKind::kDirac;
  if (text == "opposite") return CanaryKind::kOpposite;
  if (text == "mislabelled") return CanaryKind::kMislabelled;
  if (text == "client") return CanaryKind::kWholeClient;
  Unknown("--canary", text, "dirac | opposite | mislabelled | client");
}

AuditStatistic ParseAuditStatistic(std::string_view text) {
  if (text == "auto") return AuditStatistic::kAuto;
  if (text == "sum") return AuditStatistic::kSum;
  if (text == "likelihood-ratio") return AuditStatistic::kLikelihoodRatio;
  if (text == "loss") return AuditStatistic::kNegativeLoss;
  Unknown("--statistic", text, "auto | sum | likelihood-ratio | loss");
}

std::string_view ToString(AuditMode mode) { return mode == AuditMode::kMultiRun ? "multi" : "one-run"; }
std::string_view ToString(AuditView view) {
  return view == AuditView::kWhiteBox ? "white-box" : "final-model";
}
std::string_view ToString(CanaryKind canary) {
  switch (canary) {
    case CanaryKind::kDirac:
      return "dirac";
    case CanaryKind::kOpposite:
      return "opposite";
    case CanaryKind::kMislabelled:
      return "mislabelled";
    case CanaryKind::kWholeClient:
      return "client";
  }
  return "?";
}
std::string_view ToString(AuditStatistic statistic) {
  switch (statistic) {
    case AuditStatistic::kAuto:
      return "auto";
    case AuditStatistic::kSum:
      return "sum";
    case AuditStatistic::kLikelihoodRatio:
      return "likelihood-ratio";
    case AuditStatistic::kNegativeLoss:
      return "loss";
  }
  return "?";
}

}  // namespace asyncdp::sim::audit
