// The composition machinery of the PLD accountant, shared by ComposedPld (pld.h, one schedule) and
// PldPrefixComposer (pld_prefix.h, many parts of one schedule on one grid). Internal to the PLD unit:
// pld.h explains the method; this header only splits it into the steps both callers run.
//   Prepare      validate, choose the grid spacing, discretise every group per direction (a Channel),
//                take each group's log-MGF on the lambda grid and choose the composed window;
//   Spectrum     one group's two directions in one complex FFT;
//   Accumulate   multiply the running products by a group's spectrum raised to its count;
//   Finish       one inverse FFT and unpack both directions into composed distributions.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

#include "core/accounting/pld/fft.h"
#include "core/accounting/pld/pld_options.h"
#include "core/accounting/schedule.h"
#include "core/privacy_assumptions.h"
#include "core/accounting/pld/pld_discretization.h"
#include "core/accounting/pld/privacy_loss_pair.h"

namespace asyncdp::accounting::pld_detail {

using Complex = std::complex<double>;

// The Chernoff windows try lambda = 2^k for k in [kLambdaLog2Min, kLambdaLog2Max].
inline constexpr int kLambdaLog2Min = -12;
inline constexpr int kLambdaLog2Max = 8;
inline constexpr int kLambdas = kLambdaLog2Max - kLambdaLog2Min + 1;

// ln M_g(+lambda) and ln M_g(-lambda) of one group's discrete PLD (finite part), each lambda = 2^k, with the
// grid index measured from the far end of the support (up: from the top, down: from the bottom) so that
// the weights stay in (0, 1]; `top`/`bottom` are those ends' grid indices.
struct GroupMgf {
  std::array<double, kLambdas> up{};
  std::array<double, kLambdas> down{};
  int64_t top = 0;
  int64_t bottom = 0;
};
GroupMgf MgfOf(const DiscretePld& d, double delta_loss);

// One real sequence to compose: every group's PMF for one direction and one bound.
struct Channel {
  std::vector<DiscretePld> pmfs;  // parallel to the compact schedule
  std::vector<GroupMgf> mgfs;
  std::vector<int64_t> counts;
  bool upper = true;
  // Output window [window_lo, window_lo + fft_size) and the mass bound outside [window_lo, window_hi].
  int64_t window_lo = 0;
  int64_t window_hi = 0;
  double outside_mass = 0.0;
};

// Sets the channel's window for its counts (a group with count 0 takes no part) and the bound on the mass
// outside it: mass(S >= t) <= exp(sum_g count_g ln M_g(lambda) - lambda t), the best lambda of the grid.
void ChooseWindow(Channel& channel, double delta_loss, double tail_mass);

struct Prepared {
  bool empty = false;              // no rounds: the loss is 0 with certainty
  std::vector<PairKind> directions;
  double discretization = 0.0;
  double tail_mass = 0.0;
  std::vector<Channel> channels;   // upper bound per direction, then (lower_too) lower bound per direction
  int log2_size = 0;               // FFT length covering every channel's window
};
// Everything up to the FFT for `schedule` (ComposedPld's constructor documents the errors thrown).
Prepared Prepare(const Schedule& schedule, SamplingModel sampling, const PldOptions& options, bool lower_too);

// The FFT of a + i b on the plan's grid, each PMF folded from its own offset (b may be null).
std::vector<Complex> Spectrum(const FftPlan& plan, const DiscretePld& a, const DiscretePld* b);
// product_a[k] *= A_k^count_a and product_b[k] *= B_k^count_b, where A and B are the transforms of a and b
// unpacked from their joint spectrum (count_b < 0: no b).
void Accumulate(const std::vector<Complex>& spectrum, int64_t count_a, int64_t count_b,
                std::vector<Complex>& product_a, std::vector<Complex>& product_b);
// One inverse FFT of product_a + i product_b, unpacked into each channel's window (b may be null). Uses
// the channels' counts for the grid base, the mass at infinity and the window.
void Finish(const FftPlan& plan, std::vector<Complex>& product_a, const std::vector<Complex>& product_b,
            const Channel& a, const Channel* b, PldDistribution& out_a, PldDistribution* out_b);

}  // namespace asyncdp::accounting::pld_detail
