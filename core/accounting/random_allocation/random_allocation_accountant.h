// The random-allocation accountant behind the facade (accountant.h): rounds sampled by random allocation
// or random check-ins (options().sampling == kRandomAllocation, window options().allocation), accounted by
// every bound of random_allocation.h; Epsilon() is the reported (binding) value, Bounds() all of them.
//
// Rounds -> windows: the rounds added so far are cut into windows of m = allocation.steps rounds; a started
// window counts as a whole one (its released outputs are a prefix of the window's, a post-processing).
// Every round must have q = p0 k / m (the expected participation rate the window implies). Rounds with
// different sigma are accounted at the smallest sigma (more noise is a post-processing of less).
// Cost: one RandomAllocationEpsilon per distinct (delta, rounds), cached (m = 1000, E = 100: well under 1 s).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/accounting/accountant.h"
#include "core/accounting/random_allocation/random_allocation.h"

namespace asyncdp::accounting {

class RandomAllocationAccountant final : public Accountant {
 public:
  explicit RandomAllocationAccountant(AccountantOptions options,
                                      RandomAllocationOptions bound_options = RandomAllocationOptions{})
      : Accountant(std::move(options)), bound_options_(std::move(bound_options)) {
    // One window's PLD is built once per sigma and reused for every number of windows (the running epsilon
    // makes an accountant per evaluation point: the cache is the process's).
    if (bound_options_.pld_cache == nullptr) bound_options_.pld_cache = SharedAllocationInstanceCache();
  }

  AccountantKind kind() const override { return AccountantKind::kRandomAllocation; }
  BoundKind bound() const override { return BoundKind::kUpperBound; }
  std::string Limitation() const override;
  // epsilon: the reported bound; order: the Renyi order when the Renyi remove bound binds, else NaN.
  EpsilonResult Epsilon(double delta) const override;
  double Delta(double epsilon) const override;
  std::unique_ptr<Accountant> Clone() const override {
    return std::make_unique<RandomAllocationAccountant>(*this);
  }

  // Every bound at delta (the binding one first in importance: see RandomAllocationResult).
  const RandomAllocationResult& Bounds(double delta) const;
  // Every bound's delta at epsilon (Delta() is its value).
  RandomAllocationResult DeltaBounds(double epsilon) const;
  // The (m, k, E, sigma, p0) the rounds so far are accounted as; ConfigError if there are none or a round's
  // q does not match the window.
  RandomAllocationParams Params() const;

 private:
  std::string Method() const override;
  void Invalidate() override { cached_.reset(); }

  RandomAllocationOptions bound_options_;
  struct Cached {
    double delta;
    RandomAllocationResult result;
  };
  mutable std::optional<Cached> cached_;
};

}  // namespace asyncdp::accounting
