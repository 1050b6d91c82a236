// Recursive truncated-Poisson bound for random allocation ([FS] Thm. 4.1, second part; spec R.3.2),
// composed over J instances with a union bound on the tail events (spec R.3.2 "Several instances").
//
// For one 1-out-of-m' allocation instance and any eps' > 0 (no DP assumption on the randomizer):
//   delta_rem_A(eps) <= delta_rem_{P(m', eta)}(eps) + tau           * delta_add_A(eps')
//   delta_add_A(eps) <= delta_add_{P(m', eta)}(eps) + tau e^{2 eps'} * delta_add_A(eps')
//   eta = e^{2 eps'} / m',   tau = 1 / (e^{eps'} (e^{eps'} - 1)).
// The posterior probability that the next step holds the record is (1/m') e^{add-direction loss so far}
// ([FS] Claim C.7); truncating it at eta changes the output only on the event "add loss >= 2 eps'", whose
// probability Claim C.12 (Kasiviswanathan & Smith) bounds by the add profile at eps'. The truncated scheme
// is dominated by Poisson at rate eta ([FS] Lemma C.8). Over J instances the Poisson parts form one Poisson
// scheme of J m' steps at rate eta and the tail terms add:
//   delta_dir(eps) <= delta_{P(J m', eta p0)}(eps) + J * tail_dir(eps').
// Abstention: the Poisson scheme of the p0-subsampled randomizer is the Gaussian one at rate eta p0 (spec
// R.4(c)); delta_add_A must then be an add-direction bound for the check-in pair of ONE instance.
// This is the bound that keeps the add direction useful for many windows (the AM-GM add bound grows like
// J / (2 sigma^2)).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/accounting/pld.h"

namespace asyncdp::accounting {

struct RecursiveBoundInputs {
  int64_t instance_steps = 1;  // m' = floor(m / k)
  int64_t instances = 1;       // J = k E
  double sigma = 0.0;
  double participation = 1.0;  // p0 applied to the Poisson rate (1 when abstention is not used)
  // A valid add-direction profile bound delta_add_A(eps') of ONE instance (non-increasing in eps').
  std::function<double(double)> single_instance_add_delta;
  PldOptions pld = {};
  // Shares f of delta given to the tail term when solving for epsilon; each costs one PLD composition of
  // J m' rounds (the best is kept). Each in (0, 1).
  std::vector<double> tail_shares = {0.5};
};

struct RecursiveEpsilon {
  double remove = 0.0;  // +inf when no admissible eps' was found
  double add = 0.0;
};

// Smallest eps per direction over the splits of delta between the Poisson part and the tail (the tail gets
// f delta for f in tail_shares; eps' is the smallest value with tail_add <= f delta; eta must be <= 1).
RecursiveEpsilon RecursiveAllocationEpsilon(const RecursiveBoundInputs& inputs, double delta);

// delta bound per direction at eps: the minimum over eps' in {eps/4, eps/2, min(eps/2, ln(max(2, m'))/4)}.
struct RecursiveDelta {
  double remove = 1.0;
  double add = 1.0;
};
RecursiveDelta RecursiveAllocationDelta(const RecursiveBoundInputs& inputs, double epsilon);

}  // namespace asyncdp::accounting
