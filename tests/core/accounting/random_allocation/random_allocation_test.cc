#include "core/accounting/random_allocation/random_allocation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/accounting/pld.h"
#include "core/error.h"
#include "tests/core/accounting/random_allocation/window_oracle.h"

namespace asyncdp::accounting {
namespace {

const AllocationBoundValue& Find(const RandomAllocationResult& r, AllocationBound bound, PrivacyDirection d) {
  for (const AllocationBoundValue& b : r.bounds) {
    if (b.bound == bound && b.direction == d) return b;
  }
  ADD_FAILURE() << "bound missing";
  return r.bounds.front();
}

RandomAllocationOptions RenyiAndAmGmOnly(int max_order = 40) {
  RandomAllocationOptions o;
  o.use_decomposition = false;
  o.use_recursive = false;
  o.use_pld = false;
  o.max_order = max_order;
  return o;
}

TEST(RandomAllocationTest, ReproducesTheSpecSingleWindowValues) {
  // Spec R.6.3 (orders 2..40, Lemma A.1 conversion, J-shift add bound).
  struct Case {
    double sigma;
    int64_t m;
    double delta;
    double eps_rem;
    int order;
    double eps_add;
  };
  for (const Case& c : {Case{1.0, 1000, 1e-6, 0.8694, 13, 0.6154}, Case{0.6, 1024, 1e-6, 3.0392, 5, 1.5852},
                        Case{1.0, 10000, 1e-8, 0.8595, 18, 0.5442}}) {
    const RandomAllocationResult r = RandomAllocationEpsilon({c.m, 1, 1, c.sigma, 1.0}, c.delta, RenyiAndAmGmOnly());
    const AllocationBoundValue& rem = Find(r, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove);
    EXPECT_NEAR(rem.value, c.eps_rem, 5e-5) << c.sigma << " " << c.m;
    EXPECT_EQ(rem.order, c.order);
    EXPECT_NEAR(Find(r, AllocationBound::kAmGmAdd, PrivacyDirection::kAdd).value, c.eps_add, 5e-5);
    EXPECT_NEAR(r.value, c.eps_rem, 5e-5);  // remove binds
    EXPECT_EQ(r.binding_direction, PrivacyDirection::kRemove);
  }
}

TEST(RandomAllocationTest, ReproducesTheSpecTenWindowAndAbstentionValues) {
  const RandomAllocationResult ten = RandomAllocationEpsilon({10000, 1, 10, 1.0, 1.0}, 1e-8, RenyiAndAmGmOnly());
  EXPECT_NEAR(Find(ten, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).value, 0.8878, 5e-5);
  EXPECT_EQ(Find(ten, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).order, 18);
  EXPECT_NEAR(Find(ten, AllocationBound::kAmGmAdd, PrivacyDirection::kAdd).value, 5.1473, 5e-5);
  EXPECT_EQ(ten.binding_direction, PrivacyDirection::kAdd);

  const RandomAllocationResult half = RandomAllocationEpsilon({1000, 1, 1, 1.0, 0.5}, 1e-6, RenyiAndAmGmOnly());
  EXPECT_NEAR(Find(half, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).value, 0.7357, 5e-5);
  EXPECT_EQ(Find(half, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).order, 15);
  const RandomAllocationResult tenth = RandomAllocationEpsilon({1000, 1, 1, 1.0, 0.1}, 1e-6, RenyiAndAmGmOnly());
  EXPECT_NEAR(Find(tenth, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).value, 0.5858, 5e-5);
  EXPECT_EQ(Find(tenth, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).order, 18);
}

TEST(RandomAllocationTest, ReproducesTheSpecRemoveBoundAtErtanVanDijkCalibrations) {
  // Spec R.6.3: remove-direction RDP epsilon at delta = 1e-5 for [EvD] Table 6's (M, E, sigma) cells.
  struct Cell {
    int64_t m;
    int64_t windows;
    double sigma;
    double eps;
  };
  for (const Cell& c : {Cell{100, 10, 1.7370, 0.791}, Cell{100, 40, 3.2689, 0.786}, Cell{250, 10, 1.2088, 0.862},
                        Cell{500, 10, 0.9592, 1.119}, Cell{500, 20, 1.2093, 0.820}, Cell{100, 10, 1.426215, 1.033},
                        Cell{500, 10, 0.834432, 1.537}, Cell{500, 40, 1.310146, 1.023}}) {
    const RandomAllocationResult r =
        RandomAllocationEpsilon({c.m, 1, c.windows, c.sigma, 1.0}, 1e-5, RenyiAndAmGmOnly());
    EXPECT_NEAR(Find(r, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).value, c.eps, 6e-4)
        << c.m << " " << c.windows << " " << c.sigma;
  }
}

TEST(RandomAllocationTest, EveryBoundLiesAboveTheDirectlyIntegratedProfile) {
  // The true delta of one window (k = 1, E = 1), integrated directly (window_oracle.h), in both directions.
  struct Case {
    int m;
    double sigma;
    double p0;
  };
  for (const Case& c : {Case{3, 0.8, 1.0}, Case{3, 1.5, 1.0}, Case{3, 0.8, 0.5}, Case{3, 1.5, 0.5}, Case{6, 1.0, 1.0}}) {
    const testing::WindowOracle oracle(c.m, c.sigma, 2.0 / c.sigma);
    for (double eps : {0.5, 1.5}) {
      const double remove = oracle.HockeyStickRemove(eps, c.p0);
      const double add = oracle.HockeyStickAdd(eps, c.p0);
      const RandomAllocationResult r = RandomAllocationDelta({c.m, 1, 1, c.sigma, c.p0}, eps);
      for (const AllocationBoundValue& b : r.bounds) {
        ASSERT_TRUE(b.applicable);
        const double truth = b.direction == PrivacyDirection::kRemove ? remove : add;
        EXPECT_GE(b.value, truth * (1.0 - 1e-3) - 1e-12)
            << ToString(b.bound) << "/" << ToString(b.direction) << " m=" << c.m << " sigma=" << c.sigma
            << " p0=" << c.p0 << " eps=" << eps;
      }
      EXPECT_GE(r.value, std::max(remove, add) * (1.0 - 1e-3));
    }
  }
}

TEST(RandomAllocationTest, MoreAllocationsNeverHelp) {
  // [FS] Lemma E.1 (and Lemma 3.2 for our bounds): with the window length fixed, more allocations per record
  // can only increase epsilon; k = m is the unamplified composition of m Gaussian steps.
  double previous = 0.0;
  for (int64_t k : {1, 2, 5, 20}) {
    const double eps = RandomAllocationEpsilon({1000, k, 1, 2.0, 1.0}, 1e-6).value;
    EXPECT_GT(eps, previous) << k;
    previous = eps;
  }
}

TEST(RandomAllocationTest, SingleWindowIsCloseToPoissonAtRateOneOverM) {
  // [FS] Thm. 4.3: in the remove direction allocation's epsilon is at most gamma ~ e/(e-1) times Poisson's at
  // rate 1/m (for eps < 1, at delta / gamma); [FS] §1.1 report bounds "typically within 10%" of Poisson.
  // Poisson is the existing PLD accountant. We check the remove direction against 1.6 x Poisson at delta / gamma
  // and the reported (both-direction) epsilon against a band around Poisson at delta.
  for (double sigma : {1.0, 2.0, 4.0}) {
    const Schedule poisson_schedule = PoissonComparisonSchedule({1000, 1, 1, sigma, 1.0});
    const double gamma = 1.0 / (1.0 - std::pow(1.0 - 1e-3, 1000));
    const double poisson_at_delta_over_gamma =
        PldEpsilon(poisson_schedule, SamplingModel::kPoisson, 1e-6 / gamma).epsilon_upper;
    const double poisson = PldEpsilon(poisson_schedule, SamplingModel::kPoisson, 1e-6).epsilon_upper;
    const RandomAllocationResult r = RandomAllocationEpsilon({1000, 1, 1, sigma, 1.0}, 1e-6);
    double best_remove = std::numeric_limits<double>::infinity();
    for (const AllocationBoundValue& b : r.bounds) {
      if (b.direction == PrivacyDirection::kRemove && b.applicable) best_remove = std::min(best_remove, b.value);
    }
    EXPECT_LE(best_remove, gamma * poisson_at_delta_over_gamma) << sigma;
    EXPECT_LE(r.value, 1.8 * poisson) << sigma;
    EXPECT_GE(r.value, 0.8 * poisson) << sigma;
  }
}

TEST(RandomAllocationTest, DecompositionIsOnlyAppliedToOneWindow) {
  const RandomAllocationResult r = RandomAllocationEpsilon({100, 1, 3, 1.0, 1.0}, 1e-6);
  const AllocationBoundValue& d = Find(r, AllocationBound::kDecomposition, PrivacyDirection::kRemove);
  EXPECT_FALSE(d.applicable);
  EXPECT_NE(d.note.find("one window"), std::string::npos);
  EXPECT_NE(r.binding_bound, AllocationBound::kDecomposition);
}

TEST(RandomAllocationTest, ParticipationIsIgnoredWithSeveralAllocations) {
  const RandomAllocationResult with = RandomAllocationEpsilon({100, 2, 1, 1.0, 0.5}, 1e-6, RenyiAndAmGmOnly());
  const RandomAllocationResult without = RandomAllocationEpsilon({100, 2, 1, 1.0, 1.0}, 1e-6, RenyiAndAmGmOnly());
  EXPECT_DOUBLE_EQ(with.value, without.value);
  EXPECT_NE(Find(with, AllocationBound::kRenyiRemove, PrivacyDirection::kRemove).note.find("ignored"),
            std::string::npos);
}

TEST(RandomAllocationTest, ReportedValueIsTheWorseDirectionOfTheBestBounds) {
  const RandomAllocationResult r = RandomAllocationEpsilon({200, 1, 1, 1.0, 1.0}, 1e-6);
  double best_remove = std::numeric_limits<double>::infinity();
  double best_add = std::numeric_limits<double>::infinity();
  for (const AllocationBoundValue& b : r.bounds) {
    (b.direction == PrivacyDirection::kRemove ? best_remove : best_add) =
        std::min(b.direction == PrivacyDirection::kRemove ? best_remove : best_add, b.value);
  }
  EXPECT_DOUBLE_EQ(r.value, std::max(best_remove, best_add));
  // The delta form at that epsilon is at most the target.
  EXPECT_LE(RandomAllocationDelta({200, 1, 1, 1.0, 1.0}, r.value * (1 + 1e-9)).value, 1e-6 * (1 + 1e-6));
}

TEST(RandomAllocationTest, RejectsInvalidParameters) {
  EXPECT_THROW(RandomAllocationEpsilon({0, 1, 1, 1.0, 1.0}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 11, 1, 1.0, 1.0}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 0, 1.0, 1.0}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 1, 0.0, 1.0}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 1, std::nan(""), 1.0}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 1, 1.0, 0.0}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 1, 1.0, 1.5}, 1e-6), ConfigError);
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 1, 1.0, 1.0}, 0.0), ConfigError);
  EXPECT_THROW(RandomAllocationDelta({10, 1, 1, 1.0, 1.0}, -1.0), ConfigError);
  RandomAllocationOptions o;
  o.recursive_tail_shares = {1.0};
  EXPECT_THROW(RandomAllocationEpsilon({10, 1, 1, 1.0, 1.0}, 1e-6, o), ConfigError);
  try {
    RandomAllocationEpsilon({10, 1, 1, 1.0, 2.0}, 1e-6);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "random_allocation.participation");
  }
}

}  // namespace
}  // namespace asyncdp::accounting
