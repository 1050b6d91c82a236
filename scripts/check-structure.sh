#!/usr/bin/env bash
# Structural rules that reviews asked for and greps can keep (docs/design.md, "One mechanism description,
# one privacy service"); run by .ci/run. Exit 1 naming the rule and the offending lines.
#   1. Accountants are made only inside core/accounting (MakeAccountant: the factory and the privacy
#      service, account.cc); library code everywhere else asks the service about an event.
#   2. One calibration entry point: accounting::Calibrate. No other bisection over sigma, no CalibrateSigma.
#   3. No PrivacyLedger (a fixed plan's halt is computed before training; nothing used the ledger).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
fail() { echo "check-structure: $1" >&2; echo "$2" | sed 's/^/    /' >&2; status=1; }
library=(core data models sim apps python/src)
if hits=$(grep -rn --include='*.cc' --include='*.h' 'MakeAccountant(' "${library[@]}" | grep -v '^core/accounting/'); then
  fail "MakeAccountant( outside core/accounting (use Account/AccountAll/Calibrate of core/accounting/account.h)" "$hits"
fi
if hits=$(grep -rn --include='*.cc' --include='*.h' 'MakeAccountant(' core/accounting | grep -v -E '^core/accounting/(make_accountant|account)\.(h|cc):'); then
  fail "MakeAccountant( inside core/accounting beyond the factory and the privacy service" "$hits"
fi
if hits=$(grep -rn --include='*.cc' --include='*.h' -E 'CalibrateSigma|PrivacyLedger|core/accounting/(calibration|ledger)\.h' "${library[@]}" bench tests); then
  fail "a second calibrator or the removed ledger" "$hits"
fi
exit $status
