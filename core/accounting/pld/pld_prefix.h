// The composed PLD of parts of one schedule, on that schedule's grid: a training run's running epsilon,
// whose rounds applied so far are always a part of each client's whole plan.
//
// ComposedPld discretises every group, searches the Chernoff window and Fourier transforms every group
// afresh for each schedule. Here the whole schedule is discretised and transformed once (pld.h explains
// the method); a part then costs a pointwise power per group, a window from the groups' stored log-MGFs
// and one inverse FFT. (A shorter FFT for short parts does not pay: one subsampled-Gaussian round's loss
// range already fills half of Table 3's window.)
// A part is composed exactly as ComposedPld composes it, except that it uses the whole schedule's grid
// spacing and per-round truncation (tail_mass / the whole schedule's rounds, tighter than the part's own),
// so every delta(eps) is an upper bound for the same reasons; for the whole schedule itself the result is
// ComposedPld's bit for bit. Upper bound only.
// Thread safety: immutable after construction; concurrent Compose calls are safe.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/accounting/pld/fft.h"
#include "core/accounting/pld/pld.h"
#include "core/accounting/pld/pld_compose.h"

namespace asyncdp::accounting {

class PldPrefixComposer {
 public:
  // The stored spectra take groups x FFT length x 16 bytes; beyond `max_spectrum_bytes` nothing is stored
  // and Compose always declines (the caller composes each part itself).
  PldPrefixComposer(const Schedule& whole, SamplingModel sampling, const PldOptions& options = {},
                    int64_t max_spectrum_bytes = int64_t{64} << 20);

  // The composition of `part`, or nullopt when `part` is not a part of the whole schedule (a group (q, sigma)
  // the whole lacks, or more rounds of it), its window is wider than the whole's FFT, or nothing was stored.
  std::optional<ComposedPld> Compose(const Schedule& part) const;

  // Buffers one caller reuses from part to part: after the first part nothing is allocated (on the VMs
  // this project runs on, faulting fresh pages in cost more than the FFT: ~10 ms of ~13 ms per part).
  struct Workspace {
    std::vector<std::complex<double>> product_a;
    std::vector<std::complex<double>> product_b;
    ComposedPld composed;
  };
  // Compose into `workspace`; the result lives there until the next call (null where Compose declines).
  const ComposedPld* Compose(const Schedule& part, Workspace& workspace) const;

 private:
  bool stored_ = false;
  Schedule groups_;  // CompactSchedule(whole): group g is channels' group g
  double discretization_ = 0.0;
  double tail_mass_ = 0.0;
  int log2_size_ = 0;
  std::optional<FftPlan> plan_;
  // The remove and add channels without their PMFs (offsets, infinity masses and log-MGFs are all a part
  // needs besides the spectra).
  std::vector<pld_detail::Channel> shells_;
  std::vector<std::vector<std::complex<double>>> spectra_;  // per group: remove + i add, transformed
};

}  // namespace asyncdp::accounting
