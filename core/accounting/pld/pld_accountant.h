// The privacy-loss-distribution accountant behind the facade (accountant.h): the rounds so far composed by
// FFT (pld.h) once per change, then any number of epsilon / delta queries. The tightest upper bound we
// have, with a lower bound on the true epsilon of the same mechanism beside it. Covers Poisson, fixed-size
// and shuffled batches with Gaussian noise; not secure (discrete Gaussian) noise.
// Cost: one composition per query after rounds were added (milliseconds for 10^3 rounds, tens of ms for
// 10^5); queries on an unchanged accountant reuse it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/accounting/accountant.h"
#include "core/accounting/pld/pld.h"

namespace asyncdp::accounting {

class PldAccountant final : public Accountant {
 public:
  explicit PldAccountant(AccountantOptions options) : Accountant(std::move(options)) {}

  AccountantKind kind() const override { return AccountantKind::kPld; }
  BoundKind bound() const override { return BoundKind::kUpperBound; }
  std::string Limitation() const override;
  // epsilon: the upper bound; epsilon_lower: the lower bound when options().pld.compute_lower_bound.
  EpsilonResult Epsilon(double delta) const override;
  double Delta(double epsilon) const override;
  std::unique_ptr<Accountant> Clone() const override { return std::make_unique<PldAccountant>(*this); }

 private:
  std::string Method() const override;
  void Invalidate() override { composed_.reset(); }
  const ComposedPld& Composed() const;

  mutable std::shared_ptr<const ComposedPld> composed_;  // from the process's cache (composed_pld_cache.h)
};

}  // namespace asyncdp::accounting
