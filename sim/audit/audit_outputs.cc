// audit.json and the CSV files of `asyncdp audit` (sim/audit/audit.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/accounting/privacy_curve.h"
#include "core/audit/threshold_sweep.h"
#include "sim/audit/audit.h"
#include "sim/audit/audit_json.h"
#include "sim/config_io.h"
#include "sim/json_number.h"
#include "sim/output_dir.h"
#include "sim/privacy.h"

namespace asyncdp::sim::audit {
namespace {

nlohmann::json BoundJson(const asyncdp::audit::ThresholdBound& b, int64_t in_runs, int64_t out_runs) {
  return {
      {"epsilon", FiniteOrNull(b.epsilon)},
      {"threshold", FiniteOrNull(b.threshold)},
      {"true_positives", b.true_positives},
      {"false_positives", b.false_positives},
      {"evaluation_in_runs", in_runs},
      {"evaluation_out_runs", out_runs},
      {"tpr", in_runs > 0 ? static_cast<double>(b.true_positives) / static_cast<double>(in_runs) : 0.0},
      {"fpr", out_runs > 0 ? static_cast<double>(b.false_positives) / static_cast<double>(out_runs) : 0.0},
      {"tpr_lower", FiniteOrNull(b.tpr_lower)},
      {"fpr_upper", FiniteOrNull(b.fpr_upper)}};
}

double Ratio(double lower, double reported) {
  return std::isfinite(reported) && reported > 0.0 ? lower / reported
                                                   : std::numeric_limits<double>::quiet_NaN();
}

std::string ThreatModel(const AuditReport& r) {
  const std::string view = r.options.view == AuditView::kWhiteBox
                               ? "the server, which sees every (i, U) client " +
                                     std::to_string(r.options.client) +
                                     " sends (white-box: each update projected on the canary direction)"
                               : "an observer of the final global model only (the canary coordinate of v̂ "
                                 "after training, which also "
                                 "carries the other clients' noise)";
  const std::string unit = r.options.canary == CanaryKind::kWholeClient
                               ? "User-level DP (dp.unit = client) of client " + std::to_string(r.options.client) +
                                     "'s whole data set (present with every record a canary, or without data)"
                               : "Record-level DP of client " + std::to_string(r.options.client) + "'s local data set";
  return unit + " against " + view +
         ". The observer knows the seed family but not the runs' randomness; each run draws its own noise, "
         "batches, initial model and latencies from its own seed (scores.csv)";
}

// The verdict, its line and rule, and eps_lower with how it was obtained.
void VerdictSection(const AuditReport& r, nlohmann::json& j) {
  const bool multi = r.options.mode == AuditMode::kMultiRun;
  j["verdict"] = r.violation ? "VIOLATION" : "consistent";
  j["verdict_line"] = VerdictLine(r);
  j["verdict_detail"] = r.verdict_detail;
  j["verdict_rule"] =
      multi ? "VIOLATION iff the reported profile delta(eps) (pointwise the smallest over the upper-bound "
              "accountants) is refuted at some eps by delta_lower(eps) = max(1 - FPR_hi - e^eps FNR_hi, "
              "1 - FNR_hi - e^eps FPR_hi) (Kairouz et al. 2015, Theorem 2.1; Clopper-Pearson bounds; one "
              "test at "
              "the stated confidence)"
            : "VIOLATION iff the one-run lower bound (Steinke, Nasr & Jagielski 2023, Corollary 5.4) exceeds "
              "an "
              "upper-bound accountant's epsilon at the run's delta";
  j["eps_lower"] = {
      {"epsilon", r.eps_lower},
      {"confidence", r.options.confidence},
      {"delta", r.delta},
      {"method",
       multi ? "definition: max(ln((TPR_lo - delta)/FPR_hi), ln((TNR_lo - delta)/FNR_hi)), threshold "
               "chosen on held-out runs, Clopper-Pearson bounds"
             : "one-run audit: largest eps whose p-value is below 1 - confidence, best of several guess "
               "counts (Bonferroni)"},
      {"assumes", multi ? "independent runs only" : "independent fair canary coins drawn before training"}};
}

// Every accountant's epsilon for the audited client, the headline, and eps_lower against the PLD's.
void ReportedSection(const AuditReport& r, nlohmann::json& j) {
  j["reported"] = ReportedEpsilonsJson(r.reported);
  j["headline"] = HeadlineJson({r.headline_accountant, r.headline_epsilon});
  double pld = std::numeric_limits<double>::quiet_NaN();
  for (const auto& e : r.reported) {
    if (e.accountant == accounting::AccountantKind::kPld) pld = e.epsilon;
  }
  nlohmann::json ratio = {{"eps_lower_over_pld", FiniteOrNull(Ratio(r.eps_lower, pld))}};
  if (r.options.mode == AuditMode::kMultiRun) {
    const auto& m = r.multi;
    ratio["gdp_counts_over_pld"] = FiniteOrNull(Ratio(m.gdp_counts.epsilon, pld));
    ratio["gdp_fit_over_pld"] = FiniteOrNull(Ratio(m.gdp_fit.epsilon, pld));
  }
  j["ratio"] = ratio;
}

// The multi-run audit's bounds: the definition's, the Gaussian diagnostics and the profile test.
nlohmann::json MultiRunJson(const AuditReport& r) {
  const auto& m = r.multi;
  nlohmann::json out;
  out["runs_per_side"] = r.options.runs;
  out["selection_runs"] = {{"in", m.selection_in}, {"out", m.selection_out}};
  out["evaluation_runs"] = {{"in", m.evaluation_in}, {"out", m.evaluation_out}};
  out["definition"] = BoundJson(m.definition, m.evaluation_in, m.evaluation_out);
  out["definition"]["complement"] = m.definition.complement;
  out["definition"]["assumes"] = "independent runs only";
  out["gdp_counts"] = BoundJson(m.gdp_counts, m.evaluation_in, m.evaluation_out);
  out["gdp_counts"]["mu_lower"] = FiniteOrNull(m.gdp_counts.mu_lower);
  out["gdp_counts"]["assumes"] =
      "a Gaussian trade-off curve (exact for the full-batch Dirac canary, CLT-approximate for many "
      "subsampled "
      "steps); a tightness diagnostic, never the verdict (Nasr et al. 2023)";
  out["gdp_fit"] = {
      {"epsilon", FiniteOrNull(m.gdp_fit.epsilon)},
      {"mu_hat", FiniteOrNull(m.gdp_fit.mu_hat)},
      {"mu_lower", FiniteOrNull(m.gdp_fit.mu_lower)},
      {"variance_ratio", FiniteOrNull(m.gdp_fit.variance_ratio)},
      {"assumes", "Gaussian scores of equal variance in and out, and a Gaussian trade-off curve"}};
  out["profile"] = {{"refuted", m.profile.refuted},
                    {"points", r.profile.size()},
                    {"most_contradicted_epsilon", FiniteOrNull(m.profile.epsilon)},
                    {"delta_reported", FiniteOrNull(m.profile.delta_reported)},
                    {"delta_lower", FiniteOrNull(m.profile.delta_lower)},
                    {"log_margin", FiniteOrNull(m.profile.log_margin)},
                    {"threshold", FiniteOrNull(m.profile_threshold)},
                    {"refuted_accountants", r.refuted_accountants},
                    {"assumes", "independent runs only"}};
  out["roc_area"] = m.roc_area;
  return out;
}

nlohmann::json OneRunJson(const AuditReport& r) {
  int64_t planted = 0;
  for (const uint8_t c : r.included) planted += c;
  return OneRunCountsJson(r.one_run, r.fdp, planted);
}

// How the audit ran, what it audited and any test-only fault.
void SetupSection(const AuditReport& r, nlohmann::json& j) {
  // Each mode's own sizes; the other mode's are null (a one-run audit trains once, a multi-run audit plants
  // one canary), as `asyncdp audit` refuses them.
  const bool one_run = r.options.mode == AuditMode::kOneRun;
  const auto only = [](bool read, auto value) { return read ? nlohmann::json(value) : nlohmann::json(); };
  j["audit"] = {{"mode", std::string(ToString(r.options.mode))},
                {"view", std::string(ToString(r.options.view))},
                {"canary", std::string(ToString(r.options.canary))},
                {"statistic", r.statistic},
                {"runs_per_side", only(!one_run, r.options.runs)},
                {"canaries", only(one_run, r.options.canaries)},
                {"client", r.options.client},
                {"confidence", r.options.confidence},
                {"jobs", only(!one_run, r.options.jobs)},
                {"runtime", "virtual (every run on the deterministic runtime, one worker thread)"},
                {"seeds", "run r: seed * 1000003 + 2r + 1 (out) or + 2r + 2 (in); listed in scores.csv"}};
  if (r.options.noise_scale != 1.0 || r.options.accounted_sampling) {
    j["fault_injection"] = {
        {"noise_scale", r.options.noise_scale},
        {"accounted_sampling", r.accounted_sampling},
        {"note",
         "TEST ONLY: the reported epsilons are deliberately wrong (noise added = noise_scale * accounted "
         "sigma; accounted sampler may differ from the one run)"}};
  } else {
    j["fault_injection"] = nullptr;
  }
  j["audited"] = {{"client", r.options.client},
                  {"records", r.client_records},
                  {"rounds", r.rounds},
                  {"sampling", r.sampling},
                  {"accounted_sampling", r.accounted_sampling},
                  {"neighbours", r.neighbours},
                  {"sigma", r.sigma},
                  {"delta", r.delta},
                  {"clip", r.resolved_config.dp.clip}};
}

std::string CanaryText(const AuditReport& r) {
  const bool multi = r.options.mode == AuditMode::kMultiRun;
  switch (r.options.canary) {
    case CanaryKind::kDirac:
      return "Dirac gradient canary (Nasr et al. 2023): clipped gradient exactly C on its own parameter, "
             "which no other record's gradient touches; the other records train the configured model";
    case CanaryKind::kOpposite:
      return "Dirac canary +C e with every other record of the client at -C e: a batch's canary "
             "coordinate moves by 2C when the canary displaces a record (the replace-one worst case)";
    case CanaryKind::kWholeClient:
      return "whole-client canary (user-level DP): every record of the audited client is a Dirac canary C e, "
             "so "
             "each round update is clip_{C_u}(s_t C e) + noise, against the same client without data (update "
             "0 + noise): add/remove one client's data set; scores projected on e / C_u";
    case CanaryKind::kMislabelled:
      return multi
                 ? "mislabelled record: a copy of one of the client's records with another label (chosen "
                   "from "
                   "the seed), trained on by the configured model; score = -(final model's loss on it), "
                   "black-box"
                 : "mislabelled records: copies of m distinct records of the client, each with another label "
                   "(from the seed), planted as part of the data set the run trains on and accounts "
                   "(Poisson: "
                   "added, N_c grows; fixed-size and shuffle: each replaces a record); score = -(final "
                   "model's "
                   "loss on it), black-box";
  }
  return "";
}

}  // namespace

nlohmann::json AuditJson(const AuditReport& r) {
  nlohmann::json j;
  VerdictSection(r, j);
  ReportedSection(r, j);
  if (r.options.mode == AuditMode::kMultiRun) {
    j["multi_run"] = MultiRunJson(r);
  } else {
    j["one_run"] = OneRunJson(r);
  }
  SetupSection(r, j);
  j["threat_model"] = ThreatModel(r);
  j["public"] = kPublicAssumption;
  j["canary"] = CanaryText(r);
  j["trainings"] = r.trainings;
  j["wall_seconds"] = r.wall_seconds;
  j["seconds_per_training"] = r.trainings > 0 ? r.wall_seconds / static_cast<double>(r.trainings) : 0.0;
  j["config"] = ToToml(r.resolved_config);
  j["asyncdp_version"] = ASYNCDP_VERSION;
  return j;
}

void WriteAuditOutputs(const AuditReport& r, const std::string& out_dir) {
  OutputDirectory out(out_dir);
  out.Write("audit.json", AuditJson(r).dump(2) + "\n");
  out.Write("config.resolved.toml",
            "# asyncdp " ASYNCDP_VERSION " resolved configuration (audited)\n" + ToToml(r.resolved_config));
  if (r.options.mode == AuditMode::kMultiRun) {
    std::string scores = "side,run,seed,score\n";
    for (size_t i = 0; i < r.in_scores.size(); ++i) {
      scores += fmt::format("in,{},{},{:.17g}\n", i, r.in_seeds[i], r.in_scores[i]);
    }
    for (size_t i = 0; i < r.out_scores.size(); ++i) {
      scores += fmt::format("out,{},{},{:.17g}\n", i, r.out_seeds[i], r.out_scores[i]);
    }
    out.Write("scores.csv", scores);
    const auto [in_lo, in_hi] = std::minmax_element(r.in_scores.begin(), r.in_scores.end());
    const auto [out_lo, out_hi] = std::minmax_element(r.out_scores.begin(), r.out_scores.end());
    const double lo = std::min(*in_lo, *out_lo), hi = std::max(*in_hi, *out_hi);
    constexpr int kBins = 40;
    const auto in_hist = asyncdp::audit::Histogram(r.in_scores, lo, hi, kBins);
    const auto out_hist = asyncdp::audit::Histogram(r.out_scores, lo, hi, kBins);
    std::string histogram = "bin_low,bin_high,in_count,out_count\n";
    for (int b = 0; b < kBins; ++b) {
      histogram +=
          fmt::format("{:.9g},{:.9g},{},{}\n", lo + (hi - lo) * b / kBins, lo + (hi - lo) * (b + 1) / kBins,
                      in_hist[static_cast<size_t>(b)], out_hist[static_cast<size_t>(b)]);
    }
    out.Write("histogram.csv", histogram);
    // The ROC beside the most TPR the reported privacy curve allows at each FPR, 1 − β(FPR), with β the
    // trade-off curve of the tested profile (core/accounting/privacy_curve.h; docs/audit.md, "Outputs").
    std::vector<accounting::CurvePoint> profile;
    for (const auto& p : r.profile) profile.push_back({p.epsilon, p.delta});
    const auto points = asyncdp::audit::RocCurve(r.in_scores, r.out_scores);
    std::vector<double> fprs;
    for (const auto& p : points) fprs.push_back(std::clamp(p.false_positive_rate, 0.0, 1.0));
    const auto allowed = accounting::TradeoffFromProfile(profile, fprs);
    std::string roc = "threshold,fpr,tpr,tpr_allowed\n";
    for (size_t i = 0; i < points.size(); ++i) {
      roc += fmt::format("{:.9g},{:.9g},{:.9g},{:.9g}\n", points[i].threshold, points[i].false_positive_rate,
                         points[i].true_positive_rate, 1.0 - allowed[i].y);
    }
    out.Write("roc.csv", roc);
    std::string tradeoff = "alpha,beta,tpr_allowed\n";
    std::vector<double> alphas;
    for (int j = 0; j <= 80; ++j) alphas.push_back(std::pow(10.0, -4.0 + 4.0 * j / 80));  // 1e-4 … 1
    for (const auto& p : accounting::TradeoffFromProfile(profile, alphas)) {
      tradeoff += fmt::format("{:.9g},{:.9g},{:.9g}\n", p.x, p.y, 1.0 - p.y);
    }
    out.Write("tradeoff.csv", tradeoff);
  } else {
    std::string scores = "canary,included,score\n";
    for (size_t i = 0; i < r.canary_scores.size(); ++i) {
      scores += fmt::format("{},{},{:.17g}\n", i, static_cast<int>(r.included[i]), r.canary_scores[i]);
    }
    out.Write("scores.csv", scores);
  }
  out.Commit();
}

}  // namespace asyncdp::sim::audit
