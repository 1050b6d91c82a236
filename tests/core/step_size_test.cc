// Tests of core/step_size.h: the schedules of docs/theory.md §2 / Table 1.
#include "core/step_size.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"

namespace asyncdp {
namespace {

TEST(StepSizeTest, InverseLinearHalvesAtOneOverBeta) {
  const StepSizeOptions o{StepSizeSchedule::kInverseLinear, 0.1, 0.001};  // Table 1, strongly convex
  EXPECT_DOUBLE_EQ(StepSize(o, 0), 0.1);
  EXPECT_DOUBLE_EQ(StepSize(o, 1000), 0.05);
  EXPECT_DOUBLE_EQ(StepSize(o, 3000), 0.025);
}

TEST(StepSizeTest, InverseSqrtHalvesAtOneOverBetaSquared) {
  const StepSizeOptions o{StepSizeSchedule::kInverseSqrt, 0.1, 0.01};  // Table 1, plain convex
  EXPECT_DOUBLE_EQ(StepSize(o, 0), 0.1);
  EXPECT_DOUBLE_EQ(StepSize(o, 10000), 0.05);
  EXPECT_DOUBLE_EQ(StepSize(o, 2500), 0.1 / 1.5);
}

TEST(StepSizeTest, ConstantIgnoresBeta) {
  const StepSizeOptions o{StepSizeSchedule::kConstant, 0.3, 5.0};
  EXPECT_DOUBLE_EQ(StepSize(o, 0), 0.3);
  EXPECT_DOUBLE_EQ(StepSize(o, 1e9), 0.3);
}

TEST(StepSizeTest, DefaultsAreThePlainConvexExperiments) {
  const StepSizeOptions o;
  EXPECT_EQ(o.schedule, StepSizeSchedule::kInverseSqrt);
  EXPECT_DOUBLE_EQ(o.eta0, 0.1);
  EXPECT_DOUBLE_EQ(o.beta, 0.01);
}

TEST(StepSizeTest, DecreasesWithIterations) {
  for (const auto s : {StepSizeSchedule::kInverseLinear, StepSizeSchedule::kInverseSqrt}) {
    const StepSizeOptions o{s, 0.1, 0.01};
    double previous = StepSize(o, 0);
    for (double t = 1; t < 1e7; t *= 1.7) {
      const double now = StepSize(o, t);
      EXPECT_LT(now, previous);
      previous = now;
    }
  }
}

TEST(RoundStepSizeTest, CountsIterationsOfEarlierRoundsNotRounds) {
  const StepSizeOptions o{StepSizeSchedule::kInverseLinear, 0.1, 0.001};
  // Round 0: t_0 = 0.
  EXPECT_DOUBLE_EQ(RoundStepSize(o, std::vector<int64_t>{}), 0.1);
  // Round 3 after sizes 26, 26, 48: t_3 = 100 (round i uses sum_{j<i} s_j).
  const std::vector<int64_t> sizes = {26, 26, 48};
  EXPECT_DOUBLE_EQ(RoundStepSize(o, sizes), 0.1 / 1.1);
  EXPECT_DOUBLE_EQ(RoundStepSize(o, int64_t{100}), 0.1 / 1.1);
}

TEST(StepSizeScheduleTest, NamesRoundTripAndUnknownNamesAreConfigErrors) {
  for (const auto s : {StepSizeSchedule::kConstant, StepSizeSchedule::kInverseLinear, StepSizeSchedule::kInverseSqrt}) {
    EXPECT_EQ(ParseStepSizeSchedule(ToString(s), "schedule.step_rule"), s);
  }
  try {
    ParseStepSizeSchedule("cosine", "schedule.step_rule");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule.step_rule");
    EXPECT_NE(e.message().find("inverse_sqrt"), std::string::npos);
  }
}

TEST(StepSizeOptionsTest, ValidationNamesTheBadKey) {
  ValidateStepSizeOptions(StepSizeOptions{}, "schedule");
  try {
    ValidateStepSizeOptions(StepSizeOptions{StepSizeSchedule::kConstant, 0.0, 0.0}, "schedule");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule.eta0");
  }
  try {
    ValidateStepSizeOptions(StepSizeOptions{StepSizeSchedule::kInverseSqrt, 0.1, -1.0}, "schedule");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule.beta");
  }
}

}  // namespace
}  // namespace asyncdp
