// The mu-GDP accountant behind the facade (accountant.h): the central-limit APPROXIMATION of Dong, Roth,
// Su 2022 / Bu et al. 2020 (gdp.h). Its numbers are labelled kApproximation and are never used to
// calibrate noise or halt a client; they are reported for comparison with the f-DP literature.
#pragma once

#include <memory>
#include <string>

#include "core/accounting/accountant.h"

namespace asyncdp::accounting {

class GdpAccountant final : public Accountant {
 public:
  explicit GdpAccountant(AccountantOptions options) : Accountant(std::move(options)) {}

  AccountantKind kind() const override { return AccountantKind::kGdp; }
  BoundKind bound() const override { return BoundKind::kApproximation; }
  std::string Limitation() const override;
  EpsilonResult Epsilon(double delta) const override;  // epsilon and mu
  double Delta(double epsilon) const override;
  std::unique_ptr<Accountant> Clone() const override { return std::make_unique<GdpAccountant>(*this); }

 private:
  std::string Method() const override;
  double Mu() const;
};

}  // namespace asyncdp::accounting
