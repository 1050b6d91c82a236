// Test oracle for the random-allocation window pair, written independently of core/accounting/
// random_allocation (no shared code, no partitions, no generating functions, no Gaussian closed forms):
// direct numerical integration of the m-dimensional expectation under Q = N(0, sigma^2)^m.
//
// Under Q the likelihood ratio of the check-in pair (p0 A_m(*) + (1 - p0) Q, Q) is
//   Lbar = 1 - p0 + (p0 / m) S,   S = Y_1 + ... + Y_m,   Y_i = exp(Z_i / sigma - 1 / (2 sigma^2)), Z_i ~ N(0,1).
// Every quantity we test is E_Q[g(S)] for some g:
//   Renyi moment          g(S) = Lbar^alpha                 (R_alpha = ln E / (alpha - 1))
//   remove hockey-stick   g(S) = (Lbar - e^eps)_+           (H_{e^eps}(P || Q))
//   add hockey-stick      g(S) = (1 - e^eps Lbar)_+          (H_{e^eps}(Q || P))
// E[g(S)] is computed as m nested one-dimensional integrals (Fubini): U_0 = g, U_k(s) = E[U_{k-1}(s + Y)],
// answer U_m(0). Each U_k is tabulated on a logarithmic grid of s and interpolated (cubic, in ln U when
// the values are positive everywhere, else in U); each one-dimensional integral over z uses composite
// Simpson on [-14, 14 + shift]. Accuracy ~1e-7 relative for moments, ~1e-5 for hockey-sticks (kinks).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

namespace asyncdp::testing {

class WindowOracle {
 public:
  // steps = m in [1, 8]; z_shift extends the upper integration limit (use alpha / sigma for moments).
  WindowOracle(int steps, double sigma, double z_shift) : steps_(steps) {
    const int intervals = 1600;  // even
    const double z_lo = -14.0;
    const double z_hi = 14.0 + std::max(0.0, z_shift);
    const double h = (z_hi - z_lo) / intervals;
    for (int i = 0; i <= intervals; ++i) {
      const double z = z_lo + i * h;
      const double simpson = (i == 0 || i == intervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
      const double density = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
      weights_.push_back(simpson * h / 3.0 * density);
      ys_.push_back(std::exp(z / sigma - 0.5 / (sigma * sigma)));
    }
    u_lo_ = -30.0;
    u_hi_ = std::log(ys_.back()) + std::log(static_cast<double>(steps_)) + 2.0;
    grid_ = 600;
    du_ = (u_hi_ - u_lo_) / (grid_ - 1);
  }

  // E_Q[g(S)]. `log_interpolation`: tabulate ln U_k (g must be positive everywhere).
  double Expectation(const std::function<double(double)>& g, bool log_interpolation) const {
    if (steps_ == 1) return Integrate([&](double y) { return g(y); });
    // U_1 on the grid, then U_2 .. U_{m-1}; the answer integrates U_{m-1}(Y).
    std::vector<double> table(static_cast<size_t>(grid_));
    for (int j = 0; j < grid_; ++j) {
      const double s = std::exp(u_lo_ + j * du_);
      table[static_cast<size_t>(j)] = Store(Integrate([&](double y) { return g(s + y); }), log_interpolation);
    }
    for (int k = 2; k < steps_; ++k) {
      std::vector<double> next(table.size());
      for (int j = 0; j < grid_; ++j) {
        const double s = std::exp(u_lo_ + j * du_);
        next[static_cast<size_t>(j)] = Store(
            Integrate([&](double y) { return Lookup(table, s + y, log_interpolation); }), log_interpolation);
      }
      table.swap(next);
    }
    return Integrate([&](double y) { return Lookup(table, y, log_interpolation); });
  }

  // R_alpha of the check-in pair with participation p0.
  double RenyiRemove(double alpha, double p0) const {
    const double m = steps_;
    const double moment = Expectation(
        [&](double s) { return std::pow(1.0 - p0 + p0 * s / m, alpha); }, true);
    return std::log(moment) / (alpha - 1.0);
  }
  double HockeyStickRemove(double epsilon, double p0) const {
    const double m = steps_;
    const double kappa = std::exp(epsilon);
    return Expectation([&](double s) { return std::max(0.0, 1.0 - p0 + p0 * s / m - kappa); }, false);
  }
  double HockeyStickAdd(double epsilon, double p0) const {
    const double m = steps_;
    const double kappa = std::exp(epsilon);
    return Expectation([&](double s) { return std::max(0.0, 1.0 - kappa * (1.0 - p0 + p0 * s / m)); },
                       false);
  }

 private:
  template <typename F>
  double Integrate(F f) const {
    double sum = 0.0;
    for (size_t i = 0; i < ys_.size(); ++i) sum += weights_[i] * f(ys_[i]);
    return sum;
  }
  static double Store(double value, bool log_interpolation) {
    return log_interpolation ? std::log(value) : value;
  }
  // Catmull-Rom cubic in u = ln s; below the grid the first value, above it linear extrapolation.
  double Lookup(const std::vector<double>& table, double s, bool log_interpolation) const {
    const double u = std::log(s);
    double value = 0.0;
    if (u <= u_lo_) {
      value = table.front();
    } else if (u >= u_hi_) {
      const double slope = (table[table.size() - 1] - table[table.size() - 2]) / du_;
      value = table.back() + slope * (u - u_hi_);
    } else {
      const double x = (u - u_lo_) / du_;
      const int i = std::min(static_cast<int>(x), grid_ - 2);
      const double t = x - i;
      auto at = [&](int k) { return table[static_cast<size_t>(std::clamp(k, 0, grid_ - 1))]; };
      const double p0 = at(i - 1), p1 = at(i), p2 = at(i + 1), p3 = at(i + 2);
      value = p1 + 0.5 * t * (p2 - p0 + t * (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3 + t * (3.0 * (p1 - p2) + p3 - p0)));
    }
    return log_interpolation ? std::exp(value) : std::max(0.0, value);
  }

  int steps_;
  std::vector<double> weights_;
  std::vector<double> ys_;
  double u_lo_ = 0.0;
  double u_hi_ = 0.0;
  int grid_ = 0;
  double du_ = 0.0;
};

}  // namespace asyncdp::testing
