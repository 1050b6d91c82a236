#include "core/accounting/random_allocation/allocation_ratio_law.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include "core/accounting/log_math.h"
#include "core/accounting/pld/fft.h"
#include "core/accounting/random_allocation/pooling.h"
#include "core/check.h"

namespace asyncdp::accounting {
namespace {

using Complex = std::complex<double>;

// The Q-law of a partial sum S of n of the Y_i, as a mixture on two grids of N points each: `fine` (step
// h_f) holds the bulk, `coarse` (step h_c >= h_f) the tail above the bulk, so that the bulk is resolved
// finely however far the tail reaches. `excess` is the sum of E_Q[(S_b - cap_b)_+] over every cap applied
// to a block b inside it (each becomes P-mass excess / t at V = +inf in the end); `round_off` bounds the
// FFT round-off's effect on the final hockey-stick divergences.
struct SumLaw {
  int64_t n = 0;
  double h_f = 0.0;
  double h_c = 0.0;
  std::vector<double> fine;
  std::vector<double> coarse;
  double excess = 0.0;
  double round_off = 0.0;
};

// Mass m at x >= 0 onto a grid of step h: split between the two neighbouring points with the mean kept (a
// spread); above the last point it goes to the last point, and its excess is returned.
double Deposit(std::vector<double>& q, double h, double x, double m) {
  const double last = static_cast<double>(q.size() - 1);
  const double position = x / h;
  if (position >= last) {
    q.back() += m;
    return m * (x - last * h);
  }
  const double lower = std::floor(position);
  const double frac = position - lower;
  const auto i = static_cast<size_t>(lower);
  q[i] += m * (1.0 - frac);
  q[i + 1] += m * frac;
  return 0.0;
}

// Mass m at x onto the law: the fine grid if x is within its range, else the coarse one.
void DepositAtom(SumLaw& law, double x, double m) {
  if (x <= static_cast<double>(law.fine.size() - 1) * law.h_f) {
    Deposit(law.fine, law.h_f, x, m);
  } else {
    law.excess += Deposit(law.coarse, law.h_c, x, m);
  }
}

// The smallest multiple of h at or above x (x within round-off of a multiple counts as on it).
double CeilTo(double x, double h) { return std::ceil(x / h - 1e-9) * h; }

// The dominated law's counterpart of DepositAtom for a whole law: atoms (increasing x) pooled into runs
// whose means are grid points (pooling.h), each run on the fine grid when it starts within the fine grid's
// range, else on the coarse one. The last run (the top of the tail, short of its target) is dropped, which
// only lowers every divergence.
void PoolInto(SumLaw& law, const std::vector<Atom>& ascending) {
  const double fine_last = static_cast<double>(law.fine.size() - 1) * law.h_f;
  const double coarse_last = static_cast<double>(law.coarse.size() - 1) * law.h_c;
  bool on_fine = true;
  PoolUp(
      ascending,
      [&](double x) {
        on_fine = x <= fine_last;
        return on_fine ? std::min(CeilTo(x, law.h_f), fine_last) : std::min(CeilTo(x, law.h_c), coarse_last);
      },
      [&](double goal, double mass) {
        if (on_fine) {
          law.fine[static_cast<size_t>(std::llround(goal / law.h_f))] += mass;
        } else {
          law.coarse[static_cast<size_t>(std::llround(goal / law.h_c))] += mass;
        }
      });
}

// `q` (step h) re-gridded onto step h_new >= h: a spread (dominating), or pooled (dominated; the range
// only grows, so at most the last run's round-off is dropped).
std::vector<double> Regrid(const std::vector<double>& q, double h, double h_new, bool dominated) {
  if (h_new == h) return q;
  std::vector<double> out(q.size(), 0.0);
  if (dominated) {
    std::vector<Atom> atoms;
    for (size_t j = 0; j < q.size(); ++j) {
      if (q[j] > 0.0) atoms.push_back({static_cast<double>(j) * h, q[j]});
    }
    const double last = static_cast<double>(q.size() - 1) * h_new;
    PoolUp(
        atoms, [&](double x) { return std::min(CeilTo(x, h_new), last); },
        [&](double goal, double mass) { out[static_cast<size_t>(std::llround(goal / h_new))] += mass; });
    return out;
  }
  for (size_t j = 0; j < q.size(); ++j) {
    if (q[j] > 0.0) Deposit(out, h_new, static_cast<double>(j) * h, q[j]);
  }
  return out;
}

// sum_i a_i * b_i (linear convolutions of N-point sequences, 2N - 1 points) by FFT. Two measures keep the
// round-off small where it matters:
// * each operand has a transform of its own: packing two into one complex transform makes the smaller
//   one's error relative to the larger (the tail's masses, ~1e-13, drowned in the bulk's round-off);
// * exponential tilting: the operands are multiplied by e^{theta j} and the result by e^{-theta j} (an
//   identity: conv(a e^{theta .}, b e^{theta .})_j = e^{theta j} conv(a, b)_j). The FFT's round-off is
//   about the same absolute amount at every point of the transformed result, so untilted it shrinks like
//   e^{-theta j}: where S is large, and a Q-mass error weighs most (by up to 1 + S / t), it is up to
//   10^12 times smaller at the top.
// The round-off is measured by the most negative tilted "mass" (or the double precision of the largest).
// Points within 10 times it of zero are set to zero (they are round-off, and would otherwise move the
// caps), and `charge` receives 12 times it, untilted and summed over the points, each weighted by
// 1 + x / t (a Q-mass error at S = x moves either hockey-stick divergence by at most its size times
// E[V | S_block = x] <= 1 + x / t).
using Operand = const std::vector<double>*;
std::vector<double> Convolve(const std::vector<std::pair<Operand, Operand>>& pairs, double step, double t,
                             double& charge) {
  const size_t points = pairs.front().first->size();
  int log2_size = 1;
  while ((size_t{1} << log2_size) < 2 * points) ++log2_size;
  const FftPlan plan(log2_size);
  const size_t n = plan.size();
  // The tilt also raises the round-off below the result's peak k*, by up to e^{theta k*}: at most 10x
  // (light tails peak high on the grid), and at most 10^12 at the top (heavy tails peak near 0).
  auto peak = [&](Operand v) {
    return static_cast<double>(std::max_element(v->begin(), v->end()) - v->begin());
  };
  double top_peak = 1.0;
  for (const auto& [a, b] : pairs) top_peak = std::max(top_peak, peak(a) + peak(b));
  const double theta = std::min(std::log(1e12) / static_cast<double>(2 * points), std::log(10.0) / top_peak);
  auto spectrum = [&](Operand v) {
    std::vector<Complex> z(n, Complex(0.0));
    for (size_t j = 0; j < points; ++j) z[j] = (*v)[j] * std::exp(theta * static_cast<double>(j));
    plan.Forward(z);
    return z;
  };
  std::vector<Complex> total(n, Complex(0.0));
  for (const auto& [a, b] : pairs) {
    const std::vector<Complex> za = spectrum(a);
    const std::vector<Complex> zb = a == b ? std::vector<Complex>() : spectrum(b);
    const std::vector<Complex>& zb_ref = a == b ? za : zb;
    for (size_t k = 0; k < n; ++k) total[k] += za[k] * zb_ref[k];
  }
  plan.Inverse(total);
  std::vector<double> out(2 * points - 1);
  double most_negative = 0.0;
  double largest = 0.0;
  for (size_t j = 0; j < out.size(); ++j) {
    out[j] = total[j].real();
    most_negative = std::min(most_negative, out[j]);
    largest = std::max(largest, out[j]);
  }
  const double noise = std::max(-most_negative, 1e-16 * largest);
  double weighted = 0.0;
  for (size_t j = 0; j < out.size(); ++j) {
    const double untilt = std::exp(-theta * static_cast<double>(j));
    out[j] = out[j] <= 10.0 * noise ? 0.0 : out[j] * untilt;
    weighted += untilt * (1.0 + static_cast<double>(j) * step / t);
  }
  charge = 12.0 * noise * weighted;
  return out;
}

// The budgets of the computation (see AllocationRatioLaw).
struct Budgets {
  int64_t steps = 1;           // t: the final V is S_t / t
  double fine_tail = 1e-12;    // Q-mass of a block allowed above its fine grid (it goes to the coarse one)
  double single_excess = 0;    // E[(Y - cap)_+] of one step
  double excess_per_step = 0;  // a block of n steps may cap n times this
  bool dominated = false;      // compute the dominated law (pool, drop) instead of the dominating one
};

// Y = exp((2x - 1) / (2 sigma^2)), x ~ N(0, sigma^2): ln Y ~ N(-s^2/2, s^2), s = 1/sigma, E[Y] = 1.
// Interval (a, b] has Q-mass F(b) - F(a), F(y) = Phi((ln y + s^2/2) / s), and first moment G(b) - G(a),
// G(y) = E[Y; Y <= y] = Phi((ln y - s^2/2) / s); its mass goes to a and b with the mean kept. The fine
// grid reaches the (1 - fine_tail) quantile, the coarse one the cap where E[Y; Y > cap] = the budget
// (so E[(Y - cap)_+] <= it). The dominated law instead reports each interval as one output (the
// quantisation of x is a post-processing; its value is the interval's conditional mean), pools those atoms
// onto the grids and drops the Q-mass above the cap.
SumLaw SingleStepLaw(double sigma, size_t points, const Budgets& budgets) {
  const double s = 1.0 / sigma;
  const double fine_top = std::exp(-0.5 * s * s - NormalQuantile(budgets.fine_tail) * s);
  const double cap = std::exp(0.5 * s * s - NormalQuantile(budgets.single_excess) * s);
  SumLaw law;
  law.n = 1;
  law.h_f = fine_top / static_cast<double>(points - 1);
  law.h_c = std::max(cap / static_cast<double>(points - 1), law.h_f);
  law.fine.assign(points, 0.0);
  law.coarse.assign(points, 0.0);
  auto mass_arg = [&](double y) { return y <= 0.0 ? -kInf : (std::log(y) + 0.5 * s * s) / s; };
  auto moment_arg = [&](double y) { return y <= 0.0 ? -kInf : (std::log(y) - 0.5 * s * s) / s; };
  auto spread = [&](std::vector<double>& q, double h, size_t first, size_t last) {
    for (size_t j = first; j < last; ++j) {
      const double a = static_cast<double>(j) * h;
      const double b = static_cast<double>(j + 1) * h;
      const double mass = NormalIntervalMass(mass_arg(a), mass_arg(b));
      if (mass <= 0.0) continue;
      const double moment = NormalIntervalMass(moment_arg(a), moment_arg(b));
      // The conditional mean is in [a, b]; the part above a, over h, goes up.
      const double up = std::clamp((moment - a * mass) / h, 0.0, mass);
      q[j] += mass - up;
      q[j + 1] += up;
    }
  };
  if (budgets.dominated) {
    // Interval edges: the fine grid up to fine_top, then the coarse grid's points above it up to its top.
    std::vector<double> edges;
    for (size_t j = 0; j < points; ++j) edges.push_back(static_cast<double>(j) * law.h_f);
    for (double j = std::ceil(fine_top / law.h_c); j <= static_cast<double>(points - 1); j += 1.0) {
      if (j * law.h_c > edges.back()) edges.push_back(j * law.h_c);
    }
    std::vector<Atom> atoms;
    for (size_t j = 0; j + 1 < edges.size(); ++j) {
      const double mass = NormalIntervalMass(mass_arg(edges[j]), mass_arg(edges[j + 1]));
      if (mass <= 0.0) continue;
      const double moment = NormalIntervalMass(moment_arg(edges[j]), moment_arg(edges[j + 1]));
      atoms.push_back({std::clamp(moment / mass, edges[j], edges[j + 1]), mass});
    }
    PoolInto(law, atoms);
    return law;
  }
  spread(law.fine, law.h_f, 0, points - 1);
  // Above the fine grid: the coarse intervals from its top (the first one starts at fine_top: its mass
  // and mean go to fine_top's two coarse neighbours).
  const double first_edge = std::ceil(fine_top / law.h_c);
  {
    const double a = fine_top;
    const double b = first_edge * law.h_c;
    if (b > a) {
      const double mass = NormalIntervalMass(mass_arg(a), mass_arg(b));
      const double moment = NormalIntervalMass(moment_arg(a), moment_arg(b));
      if (mass > 0.0) DepositAtom(law, std::clamp(moment / mass, a, b), mass);
    }
  }
  spread(law.coarse, law.h_c, static_cast<size_t>(first_edge), points - 1);
  // Above the cap: Q-mass to the cap, P-mass E[(Y - cap)_+] to +inf.
  const double top = static_cast<double>(points - 1) * law.h_c;
  const double tail_mass = NormalSf(mass_arg(top));
  law.coarse.back() += tail_mass;
  law.excess = std::max(NormalSf(moment_arg(top)) - top * tail_mass, 0.0);
  return law;
}

// A convolution's two results (the bulk on step h, the tail on step big_h) onto `sum`'s new grids: spread
// (the caps' excess is kept for +inf), or pooled with the mass above the cap dropped (dominated).
struct Lattice {
  const std::vector<double>& q;
  double h;
};
void Place(SumLaw& sum, const Lattice& bulk, const Lattice& tail, double cap, bool pool) {
  if (!pool) {
    for (const Lattice& lattice : {bulk, tail}) {
      for (size_t j = 0; j < lattice.q.size(); ++j) {
        if (lattice.q[j] > 0.0) DepositAtom(sum, static_cast<double>(j) * lattice.h, lattice.q[j]);
      }
    }
    return;
  }
  // Both sequences' atoms up to the cap in increasing order.
  std::vector<Atom> atoms;
  size_t i = 0;
  size_t k = 0;
  while (i < bulk.q.size() || k < tail.q.size()) {
    const double xi = i < bulk.q.size() ? static_cast<double>(i) * bulk.h : kInf;
    const double xk = k < tail.q.size() ? static_cast<double>(k) * tail.h : kInf;
    const bool take_bulk = xi <= xk;
    const double x = take_bulk ? xi : xk;
    const double m = take_bulk ? bulk.q[i++] : tail.q[k++];
    if (x > cap) break;
    if (m > 0.0) atoms.push_back({x, m});
  }
  PoolInto(sum, atoms);
}

// The law of the sum of independent a and b: the bulk by FFT on the finer common fine step, the rest
// (every product with a coarse part) on the coarser common coarse step; then new grids: the fine one up
// to where at most fine_tail of the mass lies above, the coarse one up to a cap whose excess is within
// the block's budget.
SumLaw Add(const SumLaw& a, const SumLaw& b, const Budgets& budgets) {
  const size_t points = a.fine.size();
  const double h = std::max(a.h_f, b.h_f);
  const double big_h = std::max({a.h_c, b.h_c, h});
  const double t = static_cast<double>(budgets.steps);
  double charge_fine = 0.0;
  double charge_coarse = 0.0;
  const bool pool = budgets.dominated;
  const std::vector<double> af = Regrid(a.fine, a.h_f, h, pool);
  const std::vector<double> bf = &a == &b ? af : Regrid(b.fine, b.h_f, h, pool);
  const std::vector<double> bulk = Convolve({{&af, &a == &b ? &af : &bf}}, h, t, charge_fine);
  const std::vector<double> af_c = Regrid(a.fine, a.h_f, big_h, pool);
  const std::vector<double> bf_c = Regrid(b.fine, b.h_f, big_h, pool);
  const std::vector<double> ac = Regrid(a.coarse, a.h_c, big_h, pool);
  const std::vector<double> bc = Regrid(b.coarse, b.h_c, big_h, pool);
  std::vector<double> b_all(points);
  for (size_t j = 0; j < points; ++j) b_all[j] = bf_c[j] + bc[j];
  const std::vector<double> tail = Convolve({{&af_c, &bc}, {&ac, &b_all}}, big_h, t, charge_coarse);

  SumLaw sum;
  sum.n = a.n + b.n;
  sum.excess = pool ? 0.0 : a.excess + b.excess;
  sum.round_off = a.round_off + b.round_off + charge_fine + charge_coarse;
  // Atoms from the top down (both sequences), for the two caps: the fine top is the lowest atom position
  // with at most fine_tail of the mass above it; the coarse cap the lowest with excess within budget.
  const double budget = budgets.excess_per_step * static_cast<double>(sum.n);
  auto caps = [&](double& fine_top, double& cap) {
    // Merge the two sequences' positions from the top.
    int64_t i = static_cast<int64_t>(bulk.size()) - 1;
    int64_t k = static_cast<int64_t>(tail.size()) - 1;
    double mass_above = 0.0;
    double moment_above = 0.0;  // sum of x m above
    fine_top = -1.0;
    cap = -1.0;
    while (i >= 0 || k >= 0) {
      const double xi = i >= 0 ? static_cast<double>(i) * h : -1.0;
      const double xk = k >= 0 ? static_cast<double>(k) * big_h : -1.0;
      const bool take_bulk = xi >= xk;
      const double x = take_bulk ? xi : xk;
      // Capping at x leaves excess moment_above - x mass_above.
      if (cap < 0.0 && moment_above - x * mass_above > budget)
        cap = x + (moment_above - x * mass_above - budget) / mass_above;
      if (fine_top < 0.0 && mass_above > budgets.fine_tail) fine_top = x;
      if (cap >= 0.0 && fine_top >= 0.0) return;
      const double m = take_bulk ? bulk[static_cast<size_t>(i)] : tail[static_cast<size_t>(k)];
      mass_above += m;
      moment_above += x * m;
      if (take_bulk) {
        --i;
      } else {
        --k;
      }
    }
    if (cap < 0.0) cap = 0.0;
    if (fine_top < 0.0) fine_top = 0.0;
  };
  double fine_top = 0.0;
  double cap = 0.0;
  caps(fine_top, cap);
  // Resolution never below the operands' (the grids only coarsen) and never beyond what holds the mass.
  sum.h_f = std::max(fine_top / static_cast<double>(points - 1), h);
  sum.h_c = std::max(cap / static_cast<double>(points - 1), sum.h_f);
  sum.fine.assign(points, 0.0);
  sum.coarse.assign(points, 0.0);
  Place(sum, {bulk, h}, {tail, big_h}, cap, pool);
  return sum;
}

}  // namespace

LikelihoodRatioLaw AllocationRatioLaw(int64_t steps, double sigma, double participation,
                                      const AllocationPldOptions& options, LawBound bound) {
  ASYNCDP_CHECK(steps >= 1 && sigma > 0.0 && participation > 0.0 && participation <= 1.0);
  ASYNCDP_CHECK(options.log2_points >= 8 && options.log2_points <= 24 && options.tail > 0.0);
  // Few steps: V spreads down towards 0, where the add direction's loss -ln V needs fine cells (at 2^14
  // points, 10 steps at sigma = 0.8 left 3e-8 of Q-mass at V = 0, an infinite loss); 4x the points cost
  // little there, with at most 6 convolutions.
  const auto points = size_t{1} << (options.log2_points + (steps <= 64 ? 2 : 0));
  // The caps' excesses together: the single-step cap counts once per step, a cap on a block of n steps
  // t / n times, each divided by t in the end. A quarter of the tail for the single steps, the rest shared
  // by the (at most 2 log2 t) block caps, each in proportion to its n.
  int levels = 1;
  while ((int64_t{1} << levels) < steps) ++levels;
  Budgets budgets;
  budgets.steps = steps;
  budgets.single_excess = 0.25 * options.tail;
  budgets.excess_per_step = 0.75 * options.tail / (2.0 * levels);
  budgets.dominated = bound == LawBound::kDominated;
  budgets.fine_tail = options.fine_tail;
  SumLaw base = SingleStepLaw(sigma, points, budgets);
  SumLaw result;
  bool have_result = false;
  for (int64_t remaining = steps;;) {
    if (remaining & 1) {
      result = have_result ? Add(result, base, budgets) : base;
      have_result = true;
    }
    remaining >>= 1;
    if (remaining == 0) break;
    base = Add(base, base, budgets);
  }
  // The atoms of V = p0 S / t + 1 - p0.
  const double t = static_cast<double>(steps);
  LikelihoodRatioLaw law;
  auto add_atoms = [&](const std::vector<double>& q, double h) {
    for (size_t j = 0; j < q.size(); ++j) {
      if (q[j] <= 0.0) continue;
      law.ratio.push_back(participation * static_cast<double>(j) * h / t + 1.0 - participation);
      law.q.push_back(q[j]);
    }
  };
  add_atoms(result.fine, result.h_f);
  add_atoms(result.coarse, result.h_c);
  law.p_infinity = participation * result.excess / t;
  law.round_off = result.round_off;
  return law;
}

double LossSpacing(const LikelihoodRatioLaw& law, double relative) {
  double mean = 0.0;
  double second = 0.0;
  double total = 0.0;
  for (size_t j = 0; j < law.q.size(); ++j) {
    const double v = law.ratio[j];
    if (law.q[j] <= 0.0 || v <= 0.0) continue;
    const double p = v * law.q[j];
    const double loss = std::log(v);
    total += p;
    mean += p * loss;
    second += p * loss * loss;
  }
  if (!(total > 0.0)) return std::numeric_limits<double>::quiet_NaN();
  mean /= total;
  const double spread = std::sqrt(std::max(second / total - mean * mean, 0.0));
  return std::max(relative * spread, 1e-6);
}

}  // namespace asyncdp::accounting
