// Privacy-loss-distribution (PLD) accountant for subsampled Gaussian rounds, composed with the FFT.
//
// For one round, the pair of output distributions (P, Q) on neighbouring data sets is written as the law of
// the privacy loss L = ln(p/q) under P, discretised on a grid {i * Delta}:
//   * upper bound: "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022): the P- and
//     Q-mass between two grid points is split onto both end points so that both masses are preserved.
//     The discrete pair dominates (P, Q) (it is the most spread-out pair with that support and those
//     masses), so every delta(eps) computed from it, alone or composed, is an upper bound.
//   * lower bound: an optimistic discretisation that is a post-processing (Blackwell garbling) of (P, Q):
//     outputs are grouped into intervals whose pooled likelihood ratio is exactly e^{i Delta}; by data
//     processing, delta(eps) of the composition of the grouped pairs never exceeds the true one.
// Both discretisations err only to second order in Delta, so the bracket [lower, upper] is narrow.
// Composition: the PMFs of all rounds live on one grid; each group {q, sigma, count} is Fourier
// transformed once and raised to the power `count` pointwise (exponentiation by squaring), the product
// over groups is transformed back once. The output window is chosen from a Chernoff bound on the
// composed loss so that the mass outside it is below `tail_mass`; in the upper bound that mass (and the
// mass wrapped around by the circular convolution) is charged to delta in full, in the lower bound it is
// dropped.
// Neighbour relations: Poisson sampling / add-remove composes both directions (remove: P = (1-q)N(0,s^2) +
// q N(1,s^2) vs Q = N(0,s^2); add: the reverse) and reports the worse (Lebeda et al. 2024 show that one
// direction is not enough). Fixed-size sampling without replacement / replace-one is dominated by
// ((1-q) N(0) + q N(2C), N(0)) and its reverse (Zhu, Dong, Wang 2022; Lebeda et al. 2024): the same two
// directions with the noise multiplier halved. (The symmetric pair (1-q)N(0)+qN(1) vs (1-q)N(0)+qN(-1)
// of Koskela et al.'s substitute relation is NOT an upper bound for sampling without replacement: the
// rest of a fixed-size batch differs between "record in" and "record out".)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/accounting/pld/pld_options.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {


// The composed PLD of a schedule. Holds the discrete distributions (one per direction and per bound) so
// that many epsilon/delta queries cost no more composition work.
// Thread safety: immutable after construction; concurrent const calls are safe.
// The smallest delta at which ComposedPld::EpsilonLower reports more than the trivial 0.
inline constexpr double kMinLowerBoundDelta = 1e-9;

class PldPrefixComposer;
struct DiscretePld;

namespace pld_detail {
// delta(eps) of one composed direction (grid {(offset + i) delta_loss}), without its slack: what every
// Delta* method of ComposedPld evaluates; declared here for its test against the point-by-point sum.
double DeltaOf(const PldDistribution& d, double delta_loss, double epsilon);
}  // namespace pld_detail

// Which bound a set of discrete PLDs is (ComposedPld::FromDiscrete).
enum class PldBound { kUpper, kLower };

class ComposedPld {
 public:
  // Composes every round of `schedule` under `sampling` (kPoisson or kFixedSizeWithoutReplacement).
  // Throws ConfigError for an invalid schedule/options or a grid larger than max_log2_fft_size.
  ComposedPld(const Schedule& schedule, SamplingModel sampling, const PldOptions& options = {});

  // delta(eps) of the composition: an upper bound, and (if compute_lower_bound) a lower bound.
  double DeltaUpper(double epsilon) const;
  double DeltaLower(double epsilon) const;
  // Smallest eps >= 0 with delta(eps) <= delta; +inf when even eps -> inf is not enough (delta at most
  // the mass at infinity). EpsilonLower is a lower bound on the true epsilon; below delta =
  // kMinLowerBoundDelta (or tail_mass) it is the trivial 0: there the composed masses are at the level of
  // the FFT's round-off and of the tail mass the pooled bound drops, and the pooled bound was seen above
  // the true epsilon (q = 1e-6 at delta = 1e-20; 10^5 Gaussian rounds at delta = 1e-10).
  double EpsilonUpper(double delta) const;
  double EpsilonLower(double delta) const;

  // Composes `count` copies of each of `directions` (one discrete PLD per direction, all on the grid
  // {i delta_loss}): PLDs that are not one subsampled Gaussian round, such as random allocation's
  // (random_allocation/allocation_pld.h, allocation_pld_lower.h). `bound` says which bound the PLDs are
  // (dominating: tail and round-off charged to delta, queried by the Upper methods; dominated: taken off
  // it, queried by the Lower methods; they may be sub-probabilities). nullopt when the composed window
  // needs an FFT longer than 2^max_log2_fft_size (the caller coarsens the grid).
  static std::optional<ComposedPld> FromDiscrete(const std::vector<DiscretePld>& directions, int64_t count,
                                                 double delta_loss, double tail_mass, int max_log2_fft_size,
                                                 PldBound bound = PldBound::kUpper);

  // One direction's bound (index in the order composed; the methods above take the worst).
  double DeltaUpperOf(size_t direction, double epsilon) const;
  double EpsilonUpperOf(size_t direction, double delta) const;
  double DeltaLowerOf(size_t direction, double epsilon) const;
  double EpsilonLowerOf(size_t direction, double delta) const;

  double discretization() const { return discretization_; }
  int64_t fft_size() const { return fft_size_; }
  bool has_lower_bound() const { return !lower_.empty(); }

  using Distribution = PldDistribution;

 private:
  friend class PldPrefixComposer;

 public:
  ComposedPld() = default;  // no rounds composed yet (a workspace to compose into; query nothing before)

 private:

  double discretization_ = 0.0;
  double tail_mass_ = 0.0;
  int64_t fft_size_ = 0;
  std::vector<Distribution> upper_;  // one per direction
  std::vector<Distribution> lower_;
};

struct PldEpsilonResult {
  double epsilon_upper = 0.0;  // guarantee
  double epsilon_lower = 0.0;  // the true epsilon is at least this (0 when not computed)
  double discretization = 0.0;
  int64_t fft_size = 0;
};

// Convenience: compose and query once.
PldEpsilonResult PldEpsilon(const Schedule& schedule, SamplingModel sampling, double delta,
                            const PldOptions& options = {});

}  // namespace asyncdp::accounting
