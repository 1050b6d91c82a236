// Oracle for the sliding-window check-in variant (one_client rule): the epsilon the run reports
// (AccountCheckIns: random allocation over m = W steps at sensitivity 2C, i.e. noise multiplier sigma/2) must
// bound the hockey-stick divergence of the variant's own output laws, integrated numerically here with code
// that shares nothing with core/accounting (own normal density, own Simpson rule, own bisection).
//
// The mechanism seen by client x, whose window is the W steps j .. j+W-1 (units of C, noise std sigma per
// coordinate; one coordinate suffices, every other coordinate is identical on both sides): with probability
// p0 x checks in to one uniform step of its window, else it abstains. At a released step i (an update step,
// i.e. at or after the warm-up) without x the server outputs N(-1, sigma^2) when another client y with
// gradient -C is checked in there (the worst fixed configuration of the others: the proof of [FS] Thm. 3.1
// fixes them) and a dummy N(0, sigma^2) otherwise; with x at step i it picks uniformly among the checked-in
// clients: (N(1) + N(-1)) / 2 with y, N(1) alone. A step before the warm-up releases nothing, so x checking
// in there has no effect. Steps outside x's window do not depend on x given the view (post-processing).
// Under Q (x absent) the W outputs are independent, and the likelihood ratio of P (x present) is
//   L = 1 - p0 + (p0 / W) sum_i r_i(X_i),   r_i = p_i / q_i at a released step, 1 at an unreleased one,
// so delta_remove(eps) = E_Q[(L - e^eps)_+] and delta_add(eps) = E_Q[(1 - e^eps L)_+], integrated on a
// tensor grid (W <= 3). The accountant's pair is the same structure with N(2) against N(0) at every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/checkin/checkin_privacy.h"

namespace asyncdp::sim::checkin {
namespace {

constexpr double kPi = 3.14159265358979323846;

double NormalDensity(double x, double mean, double sd) {
  const double z = (x - mean) / sd;
  return std::exp(-0.5 * z * z) / (sd * std::sqrt(2.0 * kPi));
}

enum class Step { kDummy, kOther, kUnreleased, kDominating };

// One step's quadrature under Q: nodes' weights (Simpson weight x q density) and the ratio r = p / q there.
struct StepGrid {
  std::vector<double> weight;
  std::vector<double> ratio;
};

StepGrid MakeGrid(Step step, double sigma, int nodes) {
  StepGrid g;
  if (step == Step::kUnreleased) {  // no output: the ratio is 1 with certainty
    g.weight = {1.0};
    g.ratio = {1.0};
    return g;
  }
  const double q_mean = step == Step::kOther ? -1.0 : 0.0;
  const double lo = q_mean - 13.0 * sigma, hi = 2.0 + 13.0 * sigma;
  const double h = (hi - lo) / (nodes - 1);
  for (int k = 0; k < nodes; ++k) {
    const double x = lo + h * k;
    const double simpson = (k == 0 || k == nodes - 1) ? 1.0 : (k % 2 == 1 ? 4.0 : 2.0);
    const double q = NormalDensity(x, q_mean, sigma);
    double p = 0.0;
    switch (step) {
      case Step::kDummy: p = NormalDensity(x, 1.0, sigma); break;
      case Step::kOther: p = 0.5 * (NormalDensity(x, 1.0, sigma) + NormalDensity(x, -1.0, sigma)); break;
      case Step::kDominating: p = NormalDensity(x, 2.0, sigma); break;
      case Step::kUnreleased: break;
    }
    g.weight.push_back(simpson * h / 3.0 * q);
    g.ratio.push_back(q > 0.0 ? p / q : 0.0);
  }
  return g;
}

// E_Q[g(sum_i r_i)] over the tensor grid of up to three steps.
template <typename G>
double Expect(const std::vector<StepGrid>& grids, const G& g) {
  std::vector<StepGrid> padded = grids;
  while (padded.size() < 3) padded.push_back(StepGrid{{1.0}, {0.0}});
  double total = 0.0;
  for (size_t a = 0; a < padded[0].weight.size(); ++a) {
    for (size_t b = 0; b < padded[1].weight.size(); ++b) {
      const double wab = padded[0].weight[a] * padded[1].weight[b];
      const double rab = padded[0].ratio[a] + padded[1].ratio[b];
      for (size_t c = 0; c < padded[2].weight.size(); ++c) total += wab * padded[2].weight[c] * g(rab + padded[2].ratio[c]);
    }
  }
  return total;
}

struct Profile {
  double remove = 0.0;
  double add = 0.0;
  double worst() const { return std::max(remove, add); }
};

Profile DeltaAt(const std::vector<StepGrid>& grids, double p0, double epsilon) {
  const double w = static_cast<double>(grids.size()), e = std::exp(epsilon);
  const auto l = [&](double sum) { return 1.0 - p0 + p0 / w * sum; };
  return {Expect(grids, [&](double s) { return std::max(0.0, l(s) - e); }),
          Expect(grids, [&](double s) { return std::max(0.0, 1.0 - e * l(s)); })};
}

// The smallest epsilon with max(remove, add) <= delta, by bisection.
double TrueEpsilon(const std::vector<StepGrid>& grids, double p0, double delta) {
  double lo = 0.0, hi = 1.0;
  while (DeltaAt(grids, p0, hi).worst() > delta) hi *= 2.0;
  for (int i = 0; i < 30; ++i) {
    const double mid = 0.5 * (lo + hi);
    (DeltaAt(grids, p0, mid).worst() > delta ? lo : hi) = mid;
  }
  return hi;
}

std::vector<StepGrid> Grids(const std::vector<Step>& steps, double sigma, int nodes) {
  std::vector<StepGrid> grids;
  for (Step s : steps) grids.push_back(MakeGrid(s, sigma, nodes));
  return grids;
}

TEST(SlidingWindowOracle, QuadratureReproducesTheGaussianMechanism) {
  // Expectation: W = 1, p0 = 1 is the Gaussian mechanism N(1, s^2) vs N(0, s^2): delta(eps) =
  // Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s) in both directions ([FS] Lemma A.2), and E_Q[L] = 1.
  const double sigma = 2.0;
  // Simpson's rule across the kink of (.)_+ is O(h^2) there: 2001 nodes (h = sigma / 74) for 1e-4 relative.
  const auto grids = Grids({Step::kDummy}, sigma, 2001);
  const auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  for (double eps : {0.0, 0.2, 0.5, 1.0}) {
    const double exact = phi(1.0 / (2.0 * sigma) - eps * sigma) - std::exp(eps) * phi(-1.0 / (2.0 * sigma) - eps * sigma);
    const Profile p = DeltaAt(grids, 1.0, eps);
    EXPECT_NEAR(p.remove, exact, 1e-7 + 1e-4 * exact) << eps;
    EXPECT_NEAR(p.add, exact, 1e-7 + 1e-4 * exact) << eps;
  }
  EXPECT_NEAR(Expect(Grids({Step::kOther, Step::kDummy}, sigma, 201), [](double s) { return s / 2.0; }), 1.0, 1e-9);
}

struct Case {
  std::vector<Step> window;  // the W steps of x's window
  double p0;
};

TEST(SlidingWindowOracle, ReportedEpsilonBoundsTheVariantsOwnPairs) {
  // Expectation: for W = 2 and 3, p0 in {1, 0.5}, sigma = 2, delta = 1e-3, the reported epsilon (random
  // allocation over W steps at noise multiplier sigma/2) leaves every configuration of the variant —
  // alone in every step, with another client in every step, mixed, and a window starting before the
  // warm-up — at delta <= 1e-3 in both directions; the accountant's own pair (N(2) vs N(0) per step)
  // dominates each configuration pointwise in eps and its integrated epsilon is below the reported one.
  const double sigma = 2.0, delta = 1e-3;
  const std::vector<Case> cases = {
      {{Step::kDummy, Step::kDummy}, 1.0},
      {{Step::kOther, Step::kOther}, 1.0},
      {{Step::kOther, Step::kDummy}, 0.5},
      {{Step::kDummy, Step::kDummy, Step::kDummy}, 1.0},
      {{Step::kOther, Step::kDummy, Step::kOther}, 1.0},
      {{Step::kUnreleased, Step::kDummy, Step::kDummy}, 1.0},
      {{Step::kDummy, Step::kDummy, Step::kDummy}, 0.5},
  };
  for (const Case& c : cases) {
    const auto w = static_cast<int64_t>(c.window.size());
    CheckInOptions options;
    options.variant = Variant::kSlidingWindow;
    options.step_rule = StepRule::kOneClient;
    options.window_length = w;
    options.steps = 10;
    options.participation = c.p0;
    const CheckInPrivacy reported = AccountCheckIns(options, sigma, delta);
    ASSERT_TRUE(reported.bounded);
    const double eps = reported.epsilon;
    const int nodes = w == 3 ? 161 : 401;
    const auto variant = Grids(c.window, sigma, nodes);
    const auto dominating = Grids(std::vector<Step>(c.window.size(), Step::kDominating), sigma, nodes);
    const std::string name = "W=" + std::to_string(w) + " p0=" + std::to_string(c.p0) + " config " +
                             std::to_string(&c - cases.data());
    const Profile at_reported = DeltaAt(variant, c.p0, eps);
    EXPECT_LE(at_reported.remove, delta) << name;
    EXPECT_LE(at_reported.add, delta) << name;
    for (double e : {0.25 * eps, 0.5 * eps, eps}) {
      const Profile v = DeltaAt(variant, c.p0, e), d = DeltaAt(dominating, c.p0, e);
      EXPECT_LE(v.remove, d.remove + 1e-7) << name << " eps " << e;
      EXPECT_LE(v.add, d.add + 1e-7) << name << " eps " << e;
    }
    const double variant_true = TrueEpsilon(variant, c.p0, delta);
    const double dominating_true = TrueEpsilon(dominating, c.p0, delta);
    // The quadrature (161 nodes per step at W = 3) is accurate to ~3e-4 in epsilon: since the random
    // allocation PLD (allocation_pld.h) reports nearly the exact epsilon of the accountant's pair, the
    // margin is that small. At W = 3, p0 = 0.5 this quadrature gives 1.37872 against a reported 1.37852,
    // and a numpy FFT of the pair's likelihood-ratio law on 3 million cells gives delta(1.37852) =
    // 0.99942e-3 to 0.99949e-3 (< 1e-3: the reported epsilon is an upper bound).
    EXPECT_LE(dominating_true, eps * (1.0 + 5e-4)) << name;
    EXPECT_LE(variant_true, dominating_true * (1.0 + 1e-6)) << name;
    std::printf("%s: reported %.4f, accountant's pair integrated %.4f (margin %.1f%%), variant's pair %.4f\n",
                name.c_str(), eps, dominating_true, 100.0 * (eps / dominating_true - 1.0), variant_true);
  }
}

}  // namespace
}  // namespace asyncdp::sim::checkin
