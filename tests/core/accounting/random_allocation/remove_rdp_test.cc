#include "core/accounting/random_allocation/remove_rdp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/accounting/rdp.h"
#include "tests/core/accounting/random_allocation/window_oracle.h"

namespace asyncdp::accounting {
namespace {

double Rdp(int64_t m, double sigma, double p0, int order) {
  return AllocationRemoveRdp(m, GaussianLogMoments(sigma, p0, std::max(order, 2)))[static_cast<size_t>(order)];
}

TEST(AllocationRemoveRdpTest, ReproducesTheSpecIdentityValues) {
  // Spec R.6.3 identity checks (computed by the spec author from the closed forms).
  EXPECT_NEAR(Rdp(50, 1.3, 1.0, 2), 0.0160128409, 1e-10);
  EXPECT_NEAR(Rdp(50, 1.3, 1.0, 2), std::log1p(std::expm1(1.0 / (1.3 * 1.3)) / 50.0), 1e-14);
  EXPECT_NEAR(Rdp(1, 1.3, 1.0, 7), 2.0710059, 1e-7);  // m = 1 is the Gaussian mechanism: alpha / (2 sigma^2)
  EXPECT_NEAR(Rdp(2, 1.0, 1.0, 3), 0.9772293, 1e-7);  // (1/2) ln((2 e^3 + 6 e) / 8)
  EXPECT_NEAR(Rdp(50, 1.3, 0.3, 2), 0.0014517018, 1e-10);
  EXPECT_NEAR(Rdp(50, 1.3, 0.3, 2), std::log1p(0.09 * std::expm1(1.0 / (1.3 * 1.3)) / 50.0), 1e-14);
}

TEST(AllocationRemoveRdpTest, GeneratingFunctionEqualsThePartitionSum) {
  // Two evaluations of [FS] Thm. 4.4: the partition sum and the generating-function power (Miller's
  // recurrence when m > order, squaring when m <= order).
  for (int64_t m : {1, 3, 7, 40, 1000, 1000000}) {
    for (double p0 : {1.0, 0.3}) {
      const std::vector<double> log_moments = GaussianLogMoments(0.9, p0, 30);
      const std::vector<double> curve = AllocationRemoveRdp(m, log_moments);
      for (int order : {2, 3, 6, 13, 30}) {
        const double by_partitions = AllocationRemoveRdpByPartitions(m, order, log_moments);
        // Both end in ln(sum) - order ln m: allow the double rounding of a quantity of size order ln m.
        const double scale = order * std::log(static_cast<double>(m)) / (order - 1.0);
        EXPECT_NEAR(curve[static_cast<size_t>(order)], by_partitions, 1e-11 * std::max(1.0, by_partitions) + 1e-13 * scale)
            << "m=" << m << " p0=" << p0 << " order=" << order;
      }
    }
  }
}

TEST(AllocationRemoveRdpTest, MatchesDirectNumericalIntegrationOfTheWindowPair) {
  // The m-fold integral E_{N0^m}[(p0 A_m(*)/N0^m + 1 - p0)^alpha], integrated directly (window_oracle.h).
  struct Case {
    int m;
    double sigma;
    double p0;
    int order;
  };
  for (const Case& c : {Case{2, 0.8, 1.0, 2}, Case{2, 0.8, 0.4, 5}, Case{3, 1.5, 1.0, 3}, Case{3, 1.5, 0.4, 8},
                        Case{6, 0.8, 1.0, 2}, Case{6, 1.5, 0.4, 8}}) {
    const testing::WindowOracle oracle(c.m, c.sigma, c.order / c.sigma);
    const double expected = oracle.RenyiRemove(c.order, c.p0);
    EXPECT_NEAR(Rdp(c.m, c.sigma, c.p0, c.order), expected, 1e-5 * expected)
        << "m=" << c.m << " sigma=" << c.sigma << " p0=" << c.p0 << " order=" << c.order;
  }
}

TEST(AllocationRemoveRdpTest, AgreesWithPoissonAtRateOneOverMToLeadingOrder) {
  // [FS] Thm. 4.1 with Remark C.2: allocation and Poisson at rate 1/m are asymptotically identical. The
  // Poisson side is the existing Mironov-Talwar-Zhang RDP (rdp.h), an independent implementation.
  for (double sigma : {1.0, 2.0}) {
    for (int order : {2, 4, 8}) {
      double previous_gap = 1.0;
      for (int64_t m : {100, 1000, 10000, 100000}) {
        const double poisson = static_cast<double>(m) *
                               PoissonSubsampledGaussianRdp(1.0 / static_cast<double>(m), sigma, order);
        const double gap = std::abs(Rdp(m, sigma, 1.0, order) / poisson - 1.0);
        EXPECT_LT(gap, previous_gap) << "sigma=" << sigma << " order=" << order << " m=" << m;
        previous_gap = gap;
      }
      EXPECT_LT(previous_gap, 2e-3) << "sigma=" << sigma << " order=" << order;
    }
  }
}

TEST(AllocationRemoveRdpTest, IsNonDecreasingInOrderAndParticipation) {
  const std::vector<double> full = AllocationRemoveRdp(500, GaussianLogMoments(1.2, 1.0, 200));
  const std::vector<double> half = AllocationRemoveRdp(500, GaussianLogMoments(1.2, 0.5, 200));
  for (size_t order = 3; order < full.size(); ++order) {
    EXPECT_GE(full[order], full[order - 1]) << order;  // Renyi divergence is monotone in the order
    EXPECT_LT(half[order], full[order]) << order;      // abstention only helps
  }
}

}  // namespace
}  // namespace asyncdp::accounting
