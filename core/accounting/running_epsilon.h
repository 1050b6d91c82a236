// The upper-bound epsilon of growing parts of one mechanism: a training run's running-epsilon column asks,
// at every evaluation, for the rounds each client has applied so far, which are always a part of the
// client's whole plan. With the PLD accountant the whole plan is discretised and Fourier transformed once
// (pld/pld_prefix.h), so a part costs a power per group and one inverse FFT instead of a fresh composition;
// other accountants, and a part that is not one of the whole (a round the plan lacks), go through Account.
// Every value is an upper bound of the part's epsilon; the whole's is the PLD accountant's own bit for bit.
// Not thread-safe: Of reuses one workspace (one RunningEpsilon per recorder).
#pragma once

#include <optional>

#include "core/accounting/account.h"
#include "core/accounting/pld/pld_prefix.h"

namespace asyncdp::accounting {

class RunningEpsilon {
 public:
  RunningEpsilon(const DpEvent& whole, AccountantKind kind, double delta, const AccountingPrecision& precision);

  // Epsilon of `part` at the delta given; ConfigError (key "dp.accountant") when the accountant cannot
  // account it.
  double Of(const DpEvent& part) const;
  // Whether the parts are composed on the whole's transformed grid (false: each by Account).
  bool incremental() const { return composer_.has_value(); }

 private:
  AccountantKind kind_;
  double delta_;
  AccountingPrecision precision_;
  SamplingModel sampling_ = SamplingModel::kPoisson;
  std::optional<PldPrefixComposer> composer_;
  mutable PldPrefixComposer::Workspace workspace_;
};

}  // namespace asyncdp::accounting
