#include "core/accounting/ledger.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace asyncdp::accounting {
namespace {

constexpr size_t kMaxCachedCurves = 256;

}  // namespace

void LedgerOptions::Validate() const {
  if (!(delta > 0.0 && delta < 1.0))
    throw ConfigError("ledger.delta", "must be in (0, 1), got " + std::to_string(delta));
  if (!(epsilon_budget > 0.0))
    throw ConfigError("ledger.epsilon_budget", "must be positive (or +inf for no budget)");
  if (accountant != AccountantKind::kRdp && accountant != AccountantKind::kPld) {
    throw ConfigError("ledger.accountant",
                      "must be rdp or pld (gdp is an approximation and cannot enforce a budget)");
  }
  if (neighbours != NaturalNeighbours(sampling)) {
    throw ConfigError("ledger.neighbours",
                      std::string("sampling ") + std::string(ToString(sampling)) + " is accounted under " +
                          std::string(ToString(NaturalNeighbours(sampling))) + " neighbours");
  }
  if (rdp.orders.empty()) throw ConfigError("ledger.rdp.orders", "must not be empty");
  for (double a : rdp.orders) {
    if (!(a > 1.0) || !std::isfinite(a))
      throw ConfigError("ledger.rdp.orders", "every order must be finite and > 1");
  }
}

PrivacyLedger::PrivacyLedger(LedgerOptions options) : options_(std::move(options)) {
  options_.Validate();
  rdp_total_.assign(options_.rdp.orders.size(), 0.0);
  conversion_offsets_ = RdpConversionOffsets(options_.rdp.orders, options_.delta);
}

const std::vector<double>& PrivacyLedger::RdpCurve(double q, double sigma) const {
  for (const CurveCacheEntry& e : curve_cache_) {
    if (e.q == q && e.sigma == sigma) return e.rdp;
  }
  if (curve_cache_.size() >= kMaxCachedCurves) curve_cache_.clear();  // many distinct rounds: start over
  curve_cache_.push_back(
      {q, sigma, SubsampledGaussianRdpCurve(q, sigma, options_.rdp.orders, options_.sampling)});
  return curve_cache_.back().rdp;
}

void PrivacyLedger::RecordRound(double q, double sigma) { RecordRounds(q, sigma, 1); }

namespace {

// Adds `count` rounds of (q, sigma) to a compact schedule; the newest group is the usual match.
void AddRounds(Schedule& schedule, double q, double sigma, int64_t count) {
  const auto same = [&](const RoundGroup& g) { return g.q == q && g.sigma == sigma; };
  auto group = !schedule.empty() && same(schedule.back()) ? schedule.end() - 1
                                                          : std::find_if(schedule.begin(), schedule.end(), same);
  if (group == schedule.end()) {
    schedule.push_back({q, sigma, count});
  } else {
    group->count += count;
  }
}

}  // namespace

void PrivacyLedger::RecordRounds(double q, double sigma, int64_t count) {
  ValidateRoundGroup(RoundGroup{q, sigma, count}, "ledger.round", 0);
  if (count == 0) return;
  AddRounds(schedule_, q, sigma, count);
  rounds_ += count;
  if (options_.sampling != SamplingModel::kShuffle) AddRounds(unfolded_, q, sigma, count);
  epsilon_so_far_.reset();
}

void PrivacyLedger::FoldRdp() const {
  for (const RoundGroup& g : unfolded_) {
    const std::vector<double>& curve = RdpCurve(g.q, g.sigma);
    for (size_t k = 0; k < rdp_total_.size(); ++k) rdp_total_[k] += static_cast<double>(g.count) * curve[k];
  }
  unfolded_.clear();
}

Schedule PrivacyLedger::ScheduleWith(double q, double sigma, int64_t extra_count) const {
  Schedule schedule = schedule_;
  if (extra_count > 0) schedule.push_back({q, sigma, extra_count});
  return schedule;
}

double PrivacyLedger::RdpEpsilonWith(double q, double sigma, int64_t extra_count) const {
  if (options_.sampling == SamplingModel::kShuffle) {
    // Epochs, not rounds, are charged: recompute from the reduced schedule (a handful of groups).
    const AccountedSchedule reduced =
        ReduceShuffledSchedule(ScheduleWith(q, sigma, extra_count), options_.sampling);
    return RdpEpsilon(reduced.schedule, reduced.sampling, options_.delta, options_.rdp).epsilon;
  }
  if (rounds_ + extra_count == 0) return 0.0;
  FoldRdp();
  const std::vector<double>* extra = extra_count > 0 ? &RdpCurve(q, sigma) : nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < rdp_total_.size(); ++k) {
    const double rdp = rdp_total_[k] + (extra ? static_cast<double>(extra_count) * (*extra)[k] : 0.0);
    best = std::min(best, rdp + conversion_offsets_[k]);
  }
  return std::max(best, 0.0);
}

double PrivacyLedger::PldEpsilonWith(double q, double sigma, int64_t extra_count) const {
  const AccountedSchedule reduced =
      ReduceShuffledSchedule(ScheduleWith(q, sigma, extra_count), options_.sampling);
  PldOptions pld = options_.pld;
  pld.compute_lower_bound = false;  // the halt decision needs the guarantee only
  return ComposedPld(reduced.schedule, reduced.sampling, pld).EpsilonUpper(options_.delta);
}

bool PrivacyLedger::WouldExceed(double q, double sigma) const {
  ValidateRoundGroup(RoundGroup{q, sigma, 1}, "ledger.round", 0);
  if (std::isinf(options_.epsilon_budget)) return false;
  // RDP is an upper bound under either accountant: if it already certifies the round, no PLD is needed.
  if (RdpEpsilonWith(q, sigma, 1) <= options_.epsilon_budget) return false;
  if (options_.accountant == AccountantKind::kRdp) return true;
  return PldEpsilonWith(q, sigma, 1) > options_.epsilon_budget;
}

double PrivacyLedger::EpsilonSoFar() const {
  if (!epsilon_so_far_) {
    epsilon_so_far_ = options_.accountant == AccountantKind::kPld ? PldEpsilonWith(0.0, 0.0, 0)
                                                                  : RdpEpsilonWith(0.0, 0.0, 0);
  }
  return *epsilon_so_far_;
}

Assumptions PrivacyLedger::assumptions() const {
  ReportOptions options;
  options.delta = options_.delta;
  options.sampling = options_.sampling;
  options.rdp = options_.accountant == AccountantKind::kRdp;
  options.pld = options_.accountant == AccountantKind::kPld;
  options.gdp = false;
  options.rdp_options = options_.rdp;
  options.pld_options = options_.pld;
  // The assumption text does not depend on the rounds; evaluate it on an empty schedule (no work).
  const PrivacyReport report = ComputePrivacyReport({}, options);
  return report.rdp ? report.rdp->assumptions : report.pld->assumptions;
}

PrivacyReport PrivacyLedger::Report(bool rdp, bool pld, bool gdp) const {
  ReportOptions options;
  options.delta = options_.delta;
  options.sampling = options_.sampling;
  options.rdp = rdp;
  options.pld = pld;
  options.gdp = gdp;
  options.rdp_options = options_.rdp;
  options.pld_options = options_.pld;
  return ComputePrivacyReport(schedule_, options);
}

}  // namespace asyncdp::accounting
