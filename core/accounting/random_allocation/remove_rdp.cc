#include "core/accounting/random_allocation/remove_rdp.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace asyncdp::accounting {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ln sum_k exp(terms[k]) for terms not all -inf, with one exp per term.
double LogSumExp(std::span<const double> terms) {
  double top = kNegInf;
  for (double t : terms) top = std::max(top, t);
  if (top == kNegInf) return kNegInf;
  double sum = 0.0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

// c = a * b truncated to degree <= max_degree, all three in log space (positive coefficients only).
std::vector<double> LogProduct(std::span<const double> a, std::span<const double> b, size_t max_degree) {
  std::vector<double> out(max_degree + 1, kNegInf);
  std::vector<double> terms;
  terms.reserve(max_degree + 1);
  for (size_t n = 0; n <= max_degree; ++n) {
    terms.clear();
    for (size_t k = 0; k <= n; ++k) {
      if (k < a.size() && n - k < b.size()) terms.push_back(a[k] + b[n - k]);
    }
    if (!terms.empty()) out[n] = LogSumExp(terms);
  }
  return out;
}

// ln of the coefficients g_n, n = 0..max_degree, of g = f^power, where lf[k] = ln f_k and f_0 = 1.
std::vector<double> LogSeriesPower(std::span<const double> lf, int64_t power, size_t max_degree) {
  ASYNCDP_CHECK(lf.size() > max_degree && lf[0] == 0.0 && power >= 1);
  std::vector<double> lg(max_degree + 1, kNegInf);
  lg[0] = 0.0;
  if (static_cast<double>(max_degree) < static_cast<double>(power) + 1.0) {
    // Miller: f g' = power f' g gives n g_n = sum_{k=1..n} ((power + 1) k - n) f_k g_{n-k}; every weight is
    // positive because n <= max_degree < power + 1, so the sum has no cancellation.
    const double power_plus_one = static_cast<double>(power) + 1.0;
    std::vector<double> terms;
    terms.reserve(max_degree);
    for (size_t n = 1; n <= max_degree; ++n) {
      terms.clear();
      const double dn = static_cast<double>(n);
      for (size_t k = 1; k <= n; ++k) {
        terms.push_back(std::log(power_plus_one * static_cast<double>(k) - dn) + lf[k] + lg[n - k]);
      }
      lg[n] = LogSumExp(terms) - std::log(dn);
    }
    return lg;
  }
  // Few steps, high orders: exponentiation by squaring with truncated products (all coefficients positive).
  std::vector<double> base(lf.begin(), lf.begin() + static_cast<std::ptrdiff_t>(max_degree + 1));
  bool first = true;
  for (int64_t e = power; e > 0; e >>= 1) {
    if (e & 1) {
      lg = first ? base : LogProduct(lg, base, max_degree);
      first = false;
    }
    if (e > 1) base = LogProduct(base, base, max_degree);
  }
  return lg;
}

double LogFactorial(double n) { return std::lgamma(n + 1.0); }

}  // namespace

std::vector<double> GaussianLogMoments(double sigma, double participation, int max_order) {
  ASYNCDP_CHECK(sigma > 0.0 && participation > 0.0 && participation <= 1.0 && max_order >= 1);
  const double inv_two_var = 1.0 / (2.0 * sigma * sigma);
  std::vector<double> out(static_cast<size_t>(max_order) + 1, 0.0);
  if (participation == 1.0) {
    for (int p = 0; p <= max_order; ++p) out[static_cast<size_t>(p)] = p * (p - 1.0) * inv_two_var;
    return out;
  }
  // mu_p(p0) = sum_j C(p, j) (1 - p0)^(p - j) p0^j e^{j (j - 1) / (2 sigma^2)}.
  const double log_p0 = std::log(participation);
  const double log_q0 = std::log1p(-participation);
  std::vector<double> terms;
  for (int p = 2; p <= max_order; ++p) {
    terms.clear();
    for (int j = 0; j <= p; ++j) {
      const double log_binomial = LogFactorial(p) - LogFactorial(j) - LogFactorial(p - j);
      terms.push_back(log_binomial + (p - j) * log_q0 + j * log_p0 + j * (j - 1.0) * inv_two_var);
    }
    out[static_cast<size_t>(p)] = LogSumExp(terms);
  }
  return out;
}

std::vector<double> AllocationRemoveRdp(int64_t steps, std::span<const double> log_moments) {
  ASYNCDP_CHECK(steps >= 1 && log_moments.size() >= 3);
  const size_t max_order = log_moments.size() - 1;
  // Exponential generating function f_p = mu_p / p!.
  std::vector<double> lf(max_order + 1);
  for (size_t p = 0; p <= max_order; ++p) lf[p] = log_moments[p] - LogFactorial(static_cast<double>(p));
  const std::vector<double> lg = LogSeriesPower(lf, steps, max_order);
  const double log_m = std::log(static_cast<double>(steps));
  std::vector<double> out(max_order + 1, 0.0);
  for (size_t alpha = 2; alpha <= max_order; ++alpha) {
    const double a = static_cast<double>(alpha);
    // E[L_bar^alpha] = m^-alpha alpha! g_alpha; the divergence is never negative (Jensen), so round-off
    // below zero is clamped.
    out[alpha] = std::max(0.0, (LogFactorial(a) + lg[alpha] - a * log_m) / (a - 1.0));
  }
  return out;
}

double AllocationRemoveRdpByPartitions(int64_t steps, int order, std::span<const double> log_moments) {
  ASYNCDP_CHECK(steps >= 1 && order >= 2 && log_moments.size() > static_cast<size_t>(order));
  const double m = static_cast<double>(steps);
  const double log_alpha_factorial = LogFactorial(order);
  std::vector<double> terms;
  // parts: a partition in non-increasing order. For each, the number of index tuples (i_1..i_m) that
  // realise it is m! / ((m - |parts|)! prod_v c_v!) ([FS] Claim F.2, c_v the multiplicity of value v).
  std::vector<int> parts;
  auto visit = [&] {
    // ln(m! / (m - |parts|)!) as a short exact sum: lgamma of large m would lose ~1e-9 absolute.
    double log_term = log_alpha_factorial;
    for (size_t i = 0; i < parts.size(); ++i) log_term += std::log(m - static_cast<double>(i));
    size_t run = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      log_term += log_moments[static_cast<size_t>(parts[i])] - LogFactorial(parts[i]);
      ++run;
      if (i + 1 == parts.size() || parts[i + 1] != parts[i]) {
        log_term -= LogFactorial(static_cast<double>(run));
        run = 0;
      }
    }
    terms.push_back(log_term);
  };
  // Depth-first enumeration: append a part no larger than the previous one, at most m parts.
  auto recurse = [&](auto& self, int remaining, int largest) -> void {
    if (remaining == 0) {
      visit();
      return;
    }
    if (static_cast<double>(parts.size()) >= m) return;
    for (int p = std::min(remaining, largest); p >= 1; --p) {
      parts.push_back(p);
      self(self, remaining - p, p);
      parts.pop_back();
    }
  };
  recurse(recurse, order, order);
  const double a = order;
  return std::max(0.0, (LogSumExp(terms) - a * std::log(m)) / (a - 1.0));
}

}  // namespace asyncdp::accounting
