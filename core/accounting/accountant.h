// The accountant facade: one interface through which every epsilon of the tool is computed — noise
// calibration, the budget halt, the running epsilon of a run, the final report and `asyncdp account`
// (conventions.md §17; dp_accounting's PrivacyAccountant is the model).
//
// An accountant composes the rounds one client has run (or plans to run): each round a subsampled Gaussian
// mechanism with sampling rate q and noise multiplier sigma, its batches drawn by `sampling`. Rounds may
// differ from each other (heterogeneous q and sigma compose exactly: the schedule is kept as a multiset of
// groups). Then epsilon(delta) and delta(epsilon) are queried as often as needed.
//
// Families (one folder each): rdp/ (Renyi DP, an upper bound), pld/ (privacy-loss distribution, an upper
// bound and a lower bound), gdp/ (CLT approximation, never a guarantee), random_allocation/ (check-ins and
// balls-in-bins sampling, an upper bound). Later families implement the same interface and register in
// MakeAccountant (core/accounting/make_accountant.h, a unit of its own so that the families depend on this
// interface and not the other way round); an audit asks every kind in kMechanismAccountants whose
// Limitation() is empty.
//
// Thread safety: an accountant caches its composition, so concurrent calls on one object (const ones
// included) are not safe; give each thread its own (Clone()).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/accounting/assumptions.h"
#include "core/accounting/pld/pld.h"
#include "core/accounting/rdp/rdp.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

// What noise a round adds to its clipped sum.
enum class NoiseModel {
  kGaussian,  // N(0, C^2 sigma^2 I) from the reproducible sampler (core/noise.h)
  // Secure noise (core/secure_noise.h): the sum rounded to a lattice plus discrete Gaussian noise. The
  // sigma given to the accountant is the *effective* multiplier (noise / inflated sensitivity). Only the
  // RDP accountant covers it (rdp.h, DiscreteGaussianPoissonRdp).
  kDiscreteGaussian,
};

std::string_view ToString(NoiseModel noise);

// The window structure of random allocation / random check-ins (sampling kRandomAllocation): each record
// takes part in a window with probability `participation` and then joins `allocations` of its `steps`
// rounds, uniformly. Every round then has sampling rate q = participation * allocations / steps.
struct AllocationWindow {
  int64_t steps = 0;           // m, rounds per window, >= 1 (0: not set)
  int64_t allocations = 1;     // k, in [1, steps]
  double participation = 1.0;  // p0, in (0, 1]
};

struct AccountantOptions {
  SamplingModel sampling = SamplingModel::kPoisson;  // how every round's batch is drawn
  NoiseModel noise = NoiseModel::kGaussian;
  RdpOptions rdp;
  PldOptions pld;
  AllocationWindow allocation;  // random allocation only (AccountantKind::kRandomAllocation)
};

// One accountant's answer at one delta. Fields that do not apply to the accountant are NaN.
struct EpsilonResult {
  double epsilon = 0.0;  // >= 0, +inf when no finite epsilon holds
  // PLD: a lower bound on the true epsilon of the same mechanism (pooled discretisation).
  double epsilon_lower = std::numeric_limits<double>::quiet_NaN();
  double order = std::numeric_limits<double>::quiet_NaN();           // RDP: the order attaining the minimum
  double mu = std::numeric_limits<double>::quiet_NaN();              // GDP: the composed mu
  double discretization = std::numeric_limits<double>::quiet_NaN();  // PLD: loss grid spacing (nats)
};

class Accountant {
 public:
  virtual ~Accountant() = default;

  virtual AccountantKind kind() const = 0;
  // What Epsilon() is: kUpperBound (RDP, PLD) or kApproximation (GDP).
  virtual BoundKind bound() const = 0;
  // Empty if this accountant is valid for options().sampling and options().noise; otherwise why not (then
  // Epsilon and Delta throw ConfigError with that text).
  virtual std::string Limitation() const { return SamplingLimitation(); }

  // Adds `count` rounds with sampling rate q in (0, 1] and noise multiplier sigma > 0 (finite). Throws
  // ConfigError for invalid values or if the total would exceed kMaxRounds.
  void AddRounds(double q, double sigma, int64_t count = 1);
  void AddSchedule(const Schedule& schedule);

  // Smallest epsilon >= 0 at which the rounds so far are (epsilon, delta)-DP by this accountant (0 before
  // any round). delta in (0, 1), else ConfigError.
  virtual EpsilonResult Epsilon(double delta) const = 0;
  // Smallest delta at `epsilon` >= 0.
  virtual double Delta(double epsilon) const = 0;

  // The statement an Epsilon(delta) makes: accountant, bound kind, sampling, neighbours, delta, method.
  Assumptions Describe(double delta) const;

  const Schedule& schedule() const { return schedule_; }  // one group per distinct (q, sigma)
  int64_t rounds() const { return rounds_; }
  const AccountantOptions& options() const { return options_; }

  virtual std::unique_ptr<Accountant> Clone() const = 0;

  // Composition counts beyond this are refused (2^53: every count stays exact in a double).
  static constexpr int64_t kMaxRounds = int64_t{1} << 53;

 protected:
  explicit Accountant(AccountantOptions options);
  // The rounds the accountant actually composes: the schedule itself, or for shuffled batches one
  // full-batch round per started epoch (ReduceShuffledSchedule).
  Schedule AccountedSchedule() const;
  SamplingModel AccountedSampling() const;
  // The method text of Describe(), e.g. "Poisson-subsampled Gaussian RDP (Mironov-Talwar-Zhang 2019) ...".
  virtual std::string Method() const = 0;
  // Non-empty when options().sampling is random allocation and this is not the random-allocation
  // accountant: the subsampled-Gaussian accountants assume independent per-round sampling.
  std::string SamplingLimitation() const;
  // Called after rounds were added: drop cached compositions.
  virtual void Invalidate() {}
  // Throws ConfigError("delta", ...) unless 0 < delta < 1, and ConfigError with Limitation() if set.
  void RequireUsable(double delta) const;

 private:
  AccountantOptions options_;
  Schedule schedule_;
  int64_t rounds_ = 0;
};

// The accountants for one client's subsampled-Gaussian rounds, in report order.
inline constexpr AccountantKind kMechanismAccountants[] = {AccountantKind::kRdp, AccountantKind::kPld,
                                                          AccountantKind::kGdp};

// The schedule and sampling model the accountants evaluate for `sampling`: the identity for kPoisson and
// kFixedSizeWithoutReplacement; for kShuffle {q = 1, smallest sigma, ceil(sum q)} under fixed-size sampling
// (q = 1: every record is in the batch, a plain Gaussian with replace-one sensitivity 2C). Every record
// enters a shuffled epoch exactly once (core/sampling.h), so an epoch is one release of each record; its
// position in the epoch is random, and ignoring that (joint convexity) only over-estimates. A batch never
// spans two epochs and a planned s_i >= the records it takes, so ceil(sum q_i) counts every started epoch.
struct ReducedSchedule {
  Schedule schedule;
  SamplingModel sampling = SamplingModel::kPoisson;
};
ReducedSchedule ReduceShuffledSchedule(const Schedule& schedule, SamplingModel sampling);

}  // namespace asyncdp::accounting
