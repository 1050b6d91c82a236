#include "core/audit/profile_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace asyncdp::audit {
namespace {

TEST(ProfileCheckTest, DeltaLowerBoundIsTheKairouzRegion) {
  // (FPR, FNR) = (0.1, 0.2): at eps = 0 the (0, delta) region needs delta >= 1 - 0.1 - 0.2 = 0.7.
  EXPECT_NEAR(DeltaLowerBound(0.0, 0.1, 0.2), 0.7, 1e-15);
  EXPECT_NEAR(DeltaLowerBound(1.0, 0.1, 0.2),
              std::max(1 - 0.1 - std::exp(1.0) * 0.2, 1 - 0.2 - std::exp(1.0) * 0.1), 1e-15);
  EXPECT_EQ(DeltaLowerBound(5.0, 0.1, 0.2), 0.0);  // compatible with (5, 0)-DP
  EXPECT_EQ(DeltaLowerBound(0.0, 0.5, 0.5), 0.0);  // a coin flip refutes nothing
}

TEST(ProfileCheckTest, RefutesThePointMostContradicted) {
  const std::vector<ProfilePoint> profile = {{0.0, 0.8}, {1.0, 0.2}, {2.0, 0.01}};
  // Rates (0.02, 0.05): delta_lower = 0.93, max(1 - 0.02 - e 0.05, 1 - 0.05 - e 0.02) = 0.8956, and
  // 1 - 0.05 - e^2 0.02 = 0.8022: the last point (reported 0.01) is the most contradicted.
  const ProfileRefutation r = RefuteProfile(profile, 0.02, 0.05);
  EXPECT_TRUE(r.refuted);
  EXPECT_EQ(r.epsilon, 2.0);
  EXPECT_NEAR(r.delta_lower, 1 - 0.05 - std::exp(2.0) * 0.02, 1e-15);
  EXPECT_NEAR(r.log_margin, std::log(r.delta_lower / 0.01), 1e-12);
  // Rates compatible with every point: not refuted, the margin says by how much.
  const ProfileRefutation ok = RefuteProfile(profile, 0.3, 0.4);
  EXPECT_FALSE(ok.refuted);
  EXPECT_LT(ok.log_margin, 0.0);
}

}  // namespace
}  // namespace asyncdp::audit
