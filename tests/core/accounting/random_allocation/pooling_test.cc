#include "core/accounting/random_allocation/pooling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace asyncdp::accounting {
namespace {

TEST(PoolingTest, EveryRunEndsExactlyOnItsTargetAndNothingIsLost) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> position(0.0, 10.0);
  std::exponential_distribution<double> weight(1.0);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Atom> atoms(200 + trial);
    for (Atom& a : atoms) a = {position(rng), weight(rng)};
    std::sort(atoms.begin(), atoms.end(), [](const Atom& a, const Atom& b) { return a.x < b.x; });
    const double h = 0.37;
    double first = 0.0;
    double emitted_mass = 0.0;
    double emitted_moment = 0.0;
    double previous_goal = -1.0;
    const PoolRest rest = PoolUp(
        atoms,
        [&](double x) {
          first = x;
          return std::ceil(x / h) * h;
        },
        [&](double goal, double mass) {
          EXPECT_GE(goal, first);                            // a run's value is raised, never lowered
          EXPECT_GT(goal, previous_goal);                    // runs follow each other up the grid
          EXPECT_NEAR(std::remainder(goal, h), 0.0, 1e-12);  // on the grid
          EXPECT_GT(mass, 0.0);
          previous_goal = goal;
          emitted_mass += mass;
          emitted_moment += goal * mass;
        });
    double mass = 0.0;
    double moment = 0.0;
    for (const Atom& a : atoms) {
      mass += a.q;
      moment += a.x * a.q;
    }
    // Mass and first moment are conserved: every run's mean is exactly its goal (the rest's is below its
    // goal and is returned).
    EXPECT_NEAR(emitted_mass + rest.mass, mass, 1e-12 * mass);
    EXPECT_NEAR(emitted_moment + rest.mean * rest.mass, moment, 1e-11 * moment);
    EXPECT_LE(rest.mean, rest.goal + 1e-12);
  }
}

TEST(PoolingTest, AtomsOnTheGridStayWhereTheyAre) {
  const std::vector<Atom> atoms = {{1.0, 0.25}, {2.0, 0.5}, {3.0, 0.25}};
  std::vector<Atom> out;
  const PoolRest rest = PoolUp(
      atoms, [](double x) { return std::ceil(x - 1e-9); },
      [&](double goal, double mass) {
        out.push_back({goal, mass});
      });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].x, 1.0);
  EXPECT_EQ(out[0].q, 0.25);
  EXPECT_EQ(out[1].x, 2.0);
  EXPECT_EQ(out[1].q, 0.5);
  EXPECT_EQ(rest.goal, 3.0);  // the last run never sees an atom above it
  EXPECT_EQ(rest.mass, 0.25);
  EXPECT_EQ(rest.mean, 3.0);
}

}  // namespace
}  // namespace asyncdp::accounting
