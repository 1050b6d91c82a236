// Huge pages for the large buffers a data set is loaded into.
//
// Loading Fashion-MNIST's training images touches ≈ 240 MB for the first time (the decompressed file, then
// 188 MB of floats). With 4 KiB pages that is ≈ 60,000 page faults; on a virtual machine a fault is a trap
// into the hypervisor's paravirtual MMU, and on the 2-core VM of BENCHMARKS.md ("Data layer benchmarks",
// first touch) they made a LeNet run's loading take ≈ 1.9 s instead of ≈ 0.9 s. Debian enables
// transparent huge pages only for memory that asks for them (/sys/kernel/mm/transparent_hugepage/enabled
// = madvise), so these helpers ask, before the first touch: one 2 MiB fault instead of 512. Purely
// advisory: where huge pages are off or the call is unsupported, nothing changes.
#pragma once

#include <cstddef>
#include <string>

namespace asyncdp::data {

// Asks the kernel to back the 2 MiB-aligned part of [data, data + bytes) with huge pages (madvise
// MADV_HUGEPAGE on Linux; a no-op elsewhere, for buffers under 4 MiB and when the call fails). Call it
// before the memory is first written: pages already present stay small.
void AdviseHugePages(void* data, size_t bytes);

// s.resize(size), with the storage of a growing string advised (AdviseHugePages) before its new bytes are
// zero-filled.
void ResizeWithHugePages(std::string& s, size_t size);

}  // namespace asyncdp::data
