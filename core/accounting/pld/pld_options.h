// The PLD accountant's options and its composed distributions, apart from the accountant (pld.h) so that
// the composition steps (pld_compose.h) need not include the class that runs them.
#pragma once

#include <cstdint>
#include <vector>

namespace asyncdp::accounting {

struct PldOptions {
  // Grid spacing Delta of the privacy loss (nats); 0 = automatic: `relative_discretization` times the
  // rms over rounds of one round's loss spread, min(standard deviation, interquartile range / 1.349).
  // Both discretisations err to second order in Delta / spread (the composed loss variance changes by at
  // most T Delta^2 / 4), so 0.1 keeps the bracket [lower, upper] within ~1e-3 relative for typical
  // DP-SGD rounds while 10^5 rounds need an FFT of only ~2^17 points. The automatic Delta never makes one
  // round's grid longer than 2^17 points (extremely heavy-tailed rounds then get a wider bracket).
  double value_discretization = 0.0;
  double relative_discretization = 0.1;
  // Largest FFT (points) the automatic spacing may use; beyond it Delta is coarsened (very long schedules).
  // 2^20 complex doubles = 16 MiB per buffer.
  int64_t max_grid_points = int64_t{1} << 20;
  // Probability mass allowed outside the grids, shared by all rounds and by the composed window. Charged
  // to delta in the upper bound, so it must stay far below the deltas queried (1e-15 vs typical 1e-5).
  double tail_mass = 1e-15;
  // Also compose the optimistic discretisation (doubles the work) so that lower bounds are available.
  bool compute_lower_bound = true;
  // Hard limit on the FFT length (log2) for an explicit value_discretization; larger requests are refused
  // with a ConfigError rather than exhausting memory. 2^24 complex doubles = 256 MiB.
  int max_log2_fft_size = 24;

  friend bool operator==(const PldOptions&, const PldOptions&) = default;
};

// The longest schedule the PLD accountant composes. Beyond ~10^9 rounds the composed loss is so wide
// (its standard deviation grows like sqrt(T) grid points) that no grid of max_grid_points resolves a round,
// and powers z^T of the Fourier coefficients lose their phase accuracy; longer schedules get a ConfigError
// pointing to the RDP accountant, which composes up to 2^53 rounds exactly.
inline constexpr int64_t kMaxPldRounds = int64_t{1} << 30;

// One composed direction: P-masses at losses (offset + i) * Delta, plus mass at +infinity.
struct PldDistribution {
  int64_t offset = 0;
  std::vector<double> pmf;
  double infinity_mass = 0.0;
  // Extra delta charged to (upper) or subtracted from (lower) every query: tail and aliasing mass.
  double slack = 0.0;
};

}  // namespace asyncdp::accounting
