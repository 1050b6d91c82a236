// Per-example L2 clipping, the first privacy-relevant stage of a DP-SGD round (docs/theory.md §2):
//
//   clip_C(x) = x / max(1, ||x||_2 / C)
//
// applied to each example's gradient separately, never to the sum. Clipping bounds every example's
// contribution to the round's sum by C, which is the sensitivity the Gaussian noise of §2.2 is scaled to.
//
// C = +infinity (models::kNoClip) disables clipping: every factor is 1. Models with a factored per-example
// gradient (models/) compute ||g|| without forming g and call ClipFactor directly; ClipInPlace is the
// reference for a gradient held in memory.
#pragma once

#include <cmath>
#include <span>

namespace asyncdp {

// The factor min(1, C / ||g||) that maps g to clip_C(g), given its pre-clip norm (§2.1). A zero norm
// gives 1 (nothing to scale). C must be > 0 (or +infinity).
template <typename Scalar>
inline Scalar ClipFactor(Scalar norm, Scalar clip) {
  return norm > clip ? clip / norm : Scalar{1};
}

// ||x||_2, accumulated in double whatever the element type.
double L2Norm(std::span<const float> x);
double L2Norm(std::span<const double> x);

// x <- clip_C(x) (§2.1). Returns the pre-clip norm ||x||_2 (diagnostics: mean norm, fraction clipped).
double ClipInPlace(std::span<float> x, double clip);
double ClipInPlace(std::span<double> x, double clip);

}  // namespace asyncdp
