// Radix-2 complex FFT used by the PLD accountant to convolve privacy-loss PMFs.
//
// A plan owns the twiddle factors of one power-of-two length, so the many transforms of one composition
// share them. Iterative, in place, bit-reversal permutation then log2(n) butterfly passes.
// Thread safety: a plan is immutable after construction; Forward/Inverse on different buffers may run
// concurrently.
#pragma once

#include <complex>
#include <span>
#include <vector>

namespace asyncdp::accounting {

class FftPlan {
 public:
  // n = 2^log2_size, 1 <= log2_size <= 30.
  explicit FftPlan(int log2_size);

  // data[k] <- sum_j data[j] exp(-2 pi i j k / n).
  void Forward(std::span<std::complex<double>> data) const;
  // data[j] <- (1/n) sum_k data[k] exp(+2 pi i j k / n), the exact inverse of Forward.
  void Inverse(std::span<std::complex<double>> data) const;

  size_t size() const { return size_; }

 private:
  void Transform(std::span<std::complex<double>> data, bool inverse) const;

  size_t size_;
  int log2_size_;
  // Per butterfly pass of half-length h (1, 2, 4, ..., n/2): exp(-pi i k / h) for k < h, stored at
  // [h - 1, 2h - 1) so that every pass reads its twiddles contiguously.
  std::vector<std::complex<double>> twiddles_;
  std::vector<uint32_t> bit_reversed_;  // permutation
};

}  // namespace asyncdp::accounting
