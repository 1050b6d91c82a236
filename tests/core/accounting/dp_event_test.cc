// Mechanism descriptions (core/accounting/dp_event.h): what each event lowers to — the reductions owned by
// events, the samplers, compositions — and what has no accountant here.
#include "core/accounting/dp_event.h"

#include <gtest/gtest.h>

#include "core/accounting/account.h"
#include "core/error.h"

namespace asyncdp::accounting {
namespace {

TEST(DpEventTest, ASampledGaussianLowersToOneGroupPerComposition) {
  const DpEventPtr e = Composed({SelfComposed(PoissonSampled(0.01, Gaussian(1.5)), 100),
                                 SelfComposed(PoissonSampled(0.02, Gaussian(2.0)), 3)});
  const LoweredEvent l = Lower(*e);
  ASSERT_TRUE(l.ok) << l.unsupported;
  EXPECT_EQ(l.sampling, SamplingModel::kPoisson);
  EXPECT_EQ(l.noise, NoiseModel::kGaussian);
  EXPECT_EQ(l.schedule, (Schedule{{0.01, 1.5, 100}, {0.02, 2.0, 3}}));
  // Self-composition multiplies counts through the tree.
  EXPECT_EQ(Lower(*SelfComposed(e, 2)).schedule, (Schedule{{0.01, 1.5, 200}, {0.02, 2.0, 6}}));
}

TEST(DpEventTest, SensitivityIsDividedIntoTheMultiplier) {
  // The one-client check-in reduction: the Gaussian at sensitivity 2C is multiplier sigma / 2.
  const LoweredEvent l = Lower(*RandomAllocation({100, 1, 0.5}, 300, Gaussian(3.0, 2.0)));
  ASSERT_TRUE(l.ok);
  EXPECT_EQ(l.sampling, SamplingModel::kRandomAllocation);
  EXPECT_EQ(l.allocation.steps, 100);
  EXPECT_DOUBLE_EQ(l.allocation.participation, 0.5);
  EXPECT_EQ(l.schedule, (Schedule{{0.005, 1.5, 300}}));
  // A bare Gaussian is one release at q = 1.
  EXPECT_EQ(Lower(*SelfComposed(Gaussian(2.0), 7)).schedule, (Schedule{{1.0, 2.0, 7}}));
}

TEST(DpEventTest, ScheduleEventsRoundTripForEverySampler) {
  const Schedule s = {{0.1, 1.0, 5}, {0.2, 2.0, 7}};
  for (SamplingModel m : {SamplingModel::kPoisson, SamplingModel::kFixedSizeWithoutReplacement, SamplingModel::kShuffle}) {
    const LoweredEvent l = Lower(*ScheduleEvent(s, m));
    ASSERT_TRUE(l.ok);
    EXPECT_EQ(l.sampling, m);
    EXPECT_EQ(l.schedule, s);
  }
  const LoweredEvent secure = Lower(*ScheduleEvent(s, SamplingModel::kPoisson, NoiseModel::kDiscreteGaussian));
  EXPECT_EQ(secure.noise, NoiseModel::kDiscreteGaussian);
  // Random allocation: every round's q must be the window's rate p0 k / m.
  EXPECT_EQ(Lower(*ScheduleEvent({{0.25, 1.0, 8}}, SamplingModel::kRandomAllocation, NoiseModel::kGaussian, {4, 1, 1.0}))
                .schedule,
            (Schedule{{0.25, 1.0, 8}}));
  EXPECT_THROW(ScheduleEvent({{0.3, 1.0, 8}}, SamplingModel::kRandomAllocation, NoiseModel::kGaussian, {4, 1, 1.0}),
               ConfigError);
}

TEST(DpEventTest, MixturesWithoutAnAccountantAreRefusedWithAReason) {
  EXPECT_FALSE(Lower(*Composed({PoissonSampled(0.1, Gaussian(1)), FixedSizeSampled(0.1, Gaussian(1))})).ok);
  EXPECT_FALSE(Lower(*Composed({PoissonSampled(0.1, Gaussian(1)), PoissonSampled(0.1, Gaussian(1, 1, true))})).ok);
  EXPECT_FALSE(Lower(*Composed({RandomAllocation({4, 1, 1.0}, 4, Gaussian(1)), RandomAllocation({5, 1, 1.0}, 5, Gaussian(1))})).ok);
  const LoweredEvent nested = Lower(*PoissonSampled(0.1, PoissonSampled(0.1, Gaussian(1))));
  EXPECT_FALSE(nested.ok);
  EXPECT_NE(nested.unsupported.find("sampled event must wrap a Gaussian"), std::string::npos);
  // Which accountants apply is the event's: random allocation only by its own.
  const DpEventPtr allocation = RandomAllocation({4, 1, 1.0}, 4, Gaussian(1));
  EXPECT_EQ(ApplicableLimitation(*allocation, AccountantKind::kRandomAllocation), "");
  EXPECT_NE(ApplicableLimitation(*allocation, AccountantKind::kPld), "");
}

TEST(DpEventTest, ScaleNoiseScalesEveryGaussian) {
  const DpEventPtr e = Composed({SelfComposed(PoissonSampled(0.01, Gaussian(1.0)), 10),
                                 RandomAllocation({10, 1, 1.0}, 10, Gaussian(2.0, 2.0))});
  // Mixed samplers: no accountant, but the scaling is structural.
  const DpEventPtr scaled = ScaleNoise(*e, 3.0);
  const auto& parts = std::get<ComposedEvent>(scaled->node).events;
  const auto& first = std::get<PoissonSampledEvent>(std::get<SelfComposedEvent>(parts[0]->node).event->node);
  EXPECT_DOUBLE_EQ(std::get<GaussianEvent>(first.event->node).noise_multiplier, 3.0);
  const auto& second = std::get<RandomAllocationEvent>(parts[1]->node);
  EXPECT_DOUBLE_EQ(std::get<GaussianEvent>(second.event->node).noise_multiplier, 6.0);
  EXPECT_DOUBLE_EQ(std::get<GaussianEvent>(second.event->node).sensitivity, 2.0);
}

}  // namespace
}  // namespace asyncdp::accounting
