// Subnormal floats flushed to zero (FTZ) and read as zero (DAZ) while a CNN kernel runs on this thread,
// restored afterwards.
//
// Why: as LeNet trains with a small clip norm (Table 4: C = 0.025), a share of its backward-pass products
// fall below 2^-126. Intel cores take a microcode assist of the order of a hundred cycles for each such
// operand; AMD's Zen cores do not. Measured on an Intel Xeon (AVX-512), the 30-epoch Table 4 run spent
// 30.2 CPU-s in gradient work with subnormals and 23.0 CPU-s with them flushed (BENCHMARKS.md), while the
// same kernels on a clean benchmark batch ran at full speed — the cost appeared only on trained weights.
// Deep-learning frameworks flush on CPU for the same reason (TensorFlow by default, PyTorch's
// set_flush_denormal, oneDNN).
//
// What it changes: a value that would be subnormal (|x| < 1.2e-38) becomes 0. The clipping bound is
// unaffected in kind: each example's norm is computed from the very values that are summed, so
// ||c_r ∇f_r|| ≤ C holds up to float rounding as before (docs/theory.md §2); results differ from a run
// without flushing in their last bits. The scope is per thread, so every thread that runs a chunk or adds a
// partial sum sets it — bits stay independent of the thread count.
#pragma once

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace asyncdp::models::cnn {

class FlushSubnormals {
 public:
#if defined(__SSE__) || defined(__x86_64__)
  FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  ~FlushSubnormals() { _mm_setcsr(saved_); }
#else
  FlushSubnormals() = default;  // other architectures: IEEE subnormals, no fast path needed here
#endif
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
#if defined(__SSE__) || defined(__x86_64__)
  static constexpr unsigned kFlushToZero = 0x8000;       // MXCSR.FZ: subnormal results become 0
  static constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR.DAZ: subnormal inputs read as 0
  unsigned saved_;
#endif
};

}  // namespace asyncdp::models::cnn
