// Discretisation of one round's privacy-loss distribution onto the grid {i * Delta} (pld.h explains how
// the two are used). Both take the pair (P, Q) of privacy_loss_pair.h and return P-masses per grid index.
#pragma once

#include <cstdint>
#include <vector>

#include "core/accounting/pld/privacy_loss_pair.h"

namespace asyncdp::accounting {

// P-masses at losses (offset + i) * Delta, plus mass at +infinity.
struct DiscretePld {
  int64_t offset = 0;
  std::vector<double> pmf;
  double infinity_mass = 0.0;
};

// Pessimistic "connect the dots" discretisation (Doroshenko et al. 2022): the P- and Q-mass of the
// outputs with loss in (i Delta, (i+1) Delta] go to the two end points with both totals preserved,
//   to (i+1): e^{(i+1)Delta} (dP - e^{i Delta} dQ) / (e^{(i+1)Delta} - e^{i Delta}),   to i: the rest.
// P-mass with loss above the grid goes to +infinity; below the grid it is moved up to the first point.
// `tail` bounds the P-mass beyond each end of the grid.
DiscretePld DiscretizeConnectTheDots(const PrivacyLossPair& pair, double delta_loss, double tail);

// Optimistic discretisation by post-processing: outputs are pooled into consecutive intervals, built
// from the highest loss down, each chosen (safeguarded Newton) so that its likelihood ratio
// P(pool) / Q(pool) is exactly e^{g Delta} for a grid point g; the low-loss remainder at the bottom is one
// pool with its loss rounded down. Pooling is a garbling of (P, Q), so by data processing the composed
// delta(eps) of these PLDs is a lower bound on the true one; P-mass beyond the `tail` quantiles is
// dropped (moved to loss -infinity), which only lowers it further.
DiscretePld DiscretizeByPooling(const PrivacyLossPair& pair, double delta_loss, double tail);

}  // namespace asyncdp::accounting
