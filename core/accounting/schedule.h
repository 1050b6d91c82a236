// A DP-SGD privacy schedule: which subsampled Gaussian rounds one client has run (or plans to run).
//
// Accountants compose rounds; composition is commutative, so a schedule is a multiset of rounds stored as
// groups of identical rounds {q, sigma, count}. Grouping is what makes heterogeneous schedules cheap: the
// PLD accountant raises one Fourier transform per group to the power `count`, the RDP accountant multiplies
// one RDP curve per group by `count`.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace asyncdp::accounting {

// `count` rounds, each a subsampled Gaussian mechanism with sampling rate q and noise multiplier sigma.
struct RoundGroup {
  double q = 0.0;      // sampling rate s_i / N in (0, 1]; the expected batch fraction for Poisson sampling
  double sigma = 0.0;  // noise multiplier: noise N(0, C^2 sigma^2 I) added once per round to the clipped sum
  int64_t count = 1;   // number of identical rounds, >= 0

  friend bool operator==(const RoundGroup&, const RoundGroup&) = default;
};

using Schedule = std::vector<RoundGroup>;

// Throws ConfigError (key path `where`, e.g. "schedule[3].q") unless every group has q in
// [kMinSamplingRate, 1], sigma in [kMinNoiseMultiplier, kMaxNoiseMultiplier], and count >= 0.
void ValidateSchedule(const Schedule& schedule, std::string_view where = "schedule");
// The same checks for one group, reported as `where`[index]; allocates only to build an error.
// The domain every accountant computes on (docs/theory.md, "Accountants' domain"): q in [1e-12, 1] and
// sigma in [1e-6, 1e300]. At sigma = 1e-6 a Gaussian release's epsilon already exceeds 1e11 (no privacy
// to report; a non-private run is dp.enabled = false); below it, and beyond 1e300, the PLD's loss grid
// and the random-allocation RDP lose their floating-point footing (both aborted on such inputs); q below
// 1e-12 means more than 10^12 records per expected example. Values outside are refused with ConfigError
// naming the bound.
inline constexpr double kMinSamplingRate = 1e-12;
inline constexpr double kMinNoiseMultiplier = 1e-6;
inline constexpr double kMaxNoiseMultiplier = 1e300;
void ValidateRoundGroup(const RoundGroup& group, std::string_view where, size_t index);
// The same bounds for one value (ConfigError at `key`).
void ValidateNoiseMultiplier(double sigma, std::string_view key);
void ValidateSamplingRate(double q, std::string_view key);

// The same multiset of rounds with groups of equal (q, sigma) merged and empty groups dropped, sorted by
// (q, sigma). Composition does not depend on order, so every accountant gives the same answer for both.
Schedule CompactSchedule(const Schedule& schedule);

// Total number of rounds.
int64_t TotalRounds(const Schedule& schedule);

// The first `rounds` rounds of a run-length schedule (in order).
Schedule SchedulePrefix(const Schedule& rounds_in_order, int64_t rounds);

}  // namespace asyncdp::accounting
