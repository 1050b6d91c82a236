#include "core/accounting/pld/fft.h"

#include <cmath>
#include <numbers>
#include <utility>

#include "core/check.h"

namespace asyncdp::accounting {

FftPlan::FftPlan(int log2_size) : size_(size_t{1} << log2_size), log2_size_(log2_size) {
  ASYNCDP_CHECK(log2_size >= 1 && log2_size <= 30);
  // Twiddles of the last pass, exp(-2 pi i k / n) for k < n/2, from exact sincos at multiples of 64 times
  // a small exact table: each within a few ulps, at 1/64 of the cost of n/2 sincos calls. Pass h uses
  // every (n/2h)-th of them.
  const size_t half = size_ / 2;
  std::vector<std::complex<double>> last(half);
  constexpr size_t kBlock = 64;
  const double step = -2.0 * std::numbers::pi / static_cast<double>(size_);
  std::vector<std::complex<double>> fine(std::min(kBlock, half));
  for (size_t k = 0; k < fine.size(); ++k) fine[k] = std::polar(1.0, step * static_cast<double>(k));
  for (size_t base = 0; base < half; base += kBlock) {
    const std::complex<double> coarse = std::polar(1.0, step * static_cast<double>(base));
    for (size_t k = 0; k < fine.size() && base + k < half; ++k) last[base + k] = coarse * fine[k];
  }
  twiddles_.resize(size_ - 1);
  for (size_t h = 1; h <= half; h <<= 1) {
    const size_t stride = half / h;
    for (size_t k = 0; k < h; ++k) twiddles_[h - 1 + k] = last[k * stride];
  }
  bit_reversed_.resize(size_);
  bit_reversed_[0] = 0;
  for (size_t i = 1; i < size_; ++i) {
    bit_reversed_[i] = (bit_reversed_[i >> 1] >> 1) | (static_cast<uint32_t>(i & 1u) << (log2_size_ - 1));
  }
}

void FftPlan::Forward(std::span<std::complex<double>> data) const { Transform(data, false); }

void FftPlan::Inverse(std::span<std::complex<double>> data) const {
  Transform(data, true);
  const double scale = 1.0 / static_cast<double>(size_);
  for (auto& v : data) v *= scale;
}

void FftPlan::Transform(std::span<std::complex<double>> data, bool inverse) const {
  ASYNCDP_CHECK(data.size() == size_);
  for (size_t i = 0; i < size_; ++i) {
    if (i < bit_reversed_[i]) std::swap(data[i], data[bit_reversed_[i]]);
  }
  // Work on interleaved doubles: std::complex multiplication carries NaN/inf checks that block
  // vectorisation; the butterflies below are the plain formulas.
  double* d = reinterpret_cast<double*>(data.data());
  // First pass (h = 1): the twiddle is 1.
  for (size_t start = 0; start < size_; start += 2) {
    double* lo = d + 2 * start;
    const double xr = lo[2];
    const double xi = lo[3];
    lo[2] = lo[0] - xr;
    lo[3] = lo[1] - xi;
    lo[0] += xr;
    lo[1] += xi;
  }
  const double sign = inverse ? -1.0 : 1.0;  // conjugate twiddles for the inverse
  for (size_t half = 2; half < size_; half <<= 1) {
    const double* tw = reinterpret_cast<const double*>(twiddles_.data() + (half - 1));
    for (size_t start = 0; start < size_; start += 2 * half) {
      double* lo = d + 2 * start;
      double* hi = d + 2 * (start + half);
      for (size_t k = 0; k < half; ++k) {
        const double wr = tw[2 * k];
        const double wi = sign * tw[2 * k + 1];
        const double xr = hi[2 * k] * wr - hi[2 * k + 1] * wi;
        const double xi = hi[2 * k] * wi + hi[2 * k + 1] * wr;
        hi[2 * k] = lo[2 * k] - xr;
        hi[2 * k + 1] = lo[2 * k + 1] - xi;
        lo[2 * k] += xr;
        lo[2 * k + 1] += xi;
      }
    }
  }
}

}  // namespace asyncdp::accounting
