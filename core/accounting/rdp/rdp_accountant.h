// The Renyi-DP accountant behind the facade (accountant.h): per-round RDP curves (rdp.h) summed over the
// rounds, converted to (epsilon, delta) with the improved conversion of Canonne, Kamath, Steinke 2020. An
// upper bound for every sampling model and for secure (discrete Gaussian) noise.
// Cost: one curve per distinct (q, sigma), cached (~0.1 ms each with the default orders); a query is
// O(orders x distinct rounds).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/accounting/accountant.h"

namespace asyncdp::accounting {

class RdpAccountant final : public Accountant {
 public:
  explicit RdpAccountant(AccountantOptions options);

  AccountantKind kind() const override { return AccountantKind::kRdp; }
  BoundKind bound() const override { return BoundKind::kUpperBound; }
  EpsilonResult Epsilon(double delta) const override;
  double Delta(double epsilon) const override;
  std::unique_ptr<Accountant> Clone() const override { return std::make_unique<RdpAccountant>(*this); }

  // RDP of the rounds so far at options().rdp.orders.
  std::vector<double> TotalRdp() const;

 private:
  std::string Method() const override;
  const std::vector<double>& Curve(double q, double sigma, SamplingModel sampling) const;

  struct CachedCurve {
    double q;
    double sigma;
    std::vector<double> rdp;
  };
  mutable std::vector<CachedCurve> curves_;
};

}  // namespace asyncdp::accounting
