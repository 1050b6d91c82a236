// The allocator settings asyncdp runs with, in the CLI (apps/main.cc) and in the Python module
// (python/src/module.cc), so both measure what BENCHMARKS.md records.
#pragma once

namespace asyncdp::apps {

// Accounting composes privacy-loss distributions on grids of 0.5-2 MiB (core/accounting/pld/pld.h), many
// times per run (calibration probes, budget halts, the report). glibc's defaults hand such blocks back to
// the kernel on every free (mmap above a moving threshold, heap trimming above twice it), and faulting
// their pages in again cost ~25 ms of every ~35 ms composition on our VMs (Table 3 calibrated to
// epsilon = 1: accounting 0.54 -> 0.29 s). Keeps blocks below 4 MiB in the heap and trims it only above
// 64 MiB free. Measured: Table 4's peak RSS unchanged (238 MB; a 32 MiB threshold raised it to 264 MB),
// Table 3's within 1 MB. No effect where the C library is not glibc.
void TuneAllocator();

}  // namespace asyncdp::apps
