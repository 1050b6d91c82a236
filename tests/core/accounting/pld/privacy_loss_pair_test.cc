#include "core/accounting/pld/privacy_loss_pair.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace asyncdp::accounting {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PrivacyLossPairTest, InverseLossInvertsLossForEveryPair) {
  for (PairKind kind : {PairKind::kPoissonRemove, PairKind::kPoissonAdd}) {
    for (double q : {1e-4, 0.01, 0.5, 1.0}) {
      for (double sigma : {0.3, 1.0, 8.0}) {
        const PrivacyLossPair pair(kind, q, sigma);
        for (double x : {-3.0, -0.4, 0.0, 0.2, 0.7, 2.5}) {
          const double loss = pair.Loss(x);
          // Where L saturates at a finite end of its range, x is not determined by L (ill-conditioned).
          if (loss - pair.loss_min() < 1e-6 || pair.loss_max() - loss < 1e-6) continue;
          EXPECT_NEAR(pair.InverseLoss(loss), x, 1e-8 * (1 + std::abs(x)))
              << static_cast<int>(kind) << " q=" << q << " sigma=" << sigma << " x=" << x;
        }
        for (double loss : {-40.0, -1.5, -1e-3, 1e-7, 0.4, 3.0, 60.0}) {
          if (loss <= pair.loss_min() || loss >= pair.loss_max()) continue;
          EXPECT_NEAR(pair.Loss(pair.InverseLoss(loss)), loss, 1e-9 * (1 + std::abs(loss)))
              << static_cast<int>(kind) << " q=" << q << " sigma=" << sigma << " loss=" << loss;
        }
      }
    }
  }
}

TEST(PrivacyLossPairTest, LossIsTheLogDensityRatio) {
  for (PairKind kind : {PairKind::kPoissonRemove, PairKind::kPoissonAdd}) {
    const PrivacyLossPair pair(kind, 0.05, 1.3);
    for (double x : {-2.0, 0.1, 1.7}) {
      EXPECT_NEAR(pair.Loss(x), std::log(pair.PDensity(x) / pair.QDensity(x)), 1e-12);
    }
  }
}

TEST(PrivacyLossPairTest, MassesAreProbabilities) {
  const PrivacyLossPair pair(PairKind::kPoissonRemove, 0.1, 0.7);
  const auto lo = pair.MakeEdge(-kInf);
  const auto mid = pair.MakeEdge(0.3);
  const auto hi = pair.MakeEdge(kInf);
  EXPECT_NEAR(pair.PMass(lo, hi), 1.0, 1e-15);
  EXPECT_NEAR(pair.QMass(lo, hi), 1.0, 1e-15);
  EXPECT_NEAR(pair.PMass(lo, mid) + pair.PMass(mid, hi), 1.0, 1e-15);
}

TEST(PrivacyLossPairTest, UpperTailMassIsAccurateFarOut) {
  // P = N(0, 1) in the add direction: P((8, inf)) = Phi(-8) = 6.22e-16 must not be lost to cancellation.
  const PrivacyLossPair pair(PairKind::kPoissonAdd, 0.01, 1.0);
  EXPECT_NEAR(pair.PMass(pair.MakeEdge(8.0), pair.MakeEdge(kInf)), 6.220960574271785e-16, 1e-25);
}

TEST(PrivacyLossPairTest, LossRangesMatchTheMixtures) {
  EXPECT_DOUBLE_EQ(PrivacyLossPair(PairKind::kPoissonRemove, 0.1, 1.0).loss_min(), std::log(0.9));
  EXPECT_DOUBLE_EQ(PrivacyLossPair(PairKind::kPoissonAdd, 0.1, 1.0).loss_max(), -std::log(0.9));
  EXPECT_EQ(PrivacyLossPair(PairKind::kPoissonRemove, 0.1, 1.0).loss_max(), kInf);
  EXPECT_EQ(PrivacyLossPair(PairKind::kPoissonAdd, 0.1, 1.0).loss_min(), -kInf);
}

TEST(PrivacyLossPairTest, MomentsOfTheUnsampledGaussian) {
  // q = 1, remove: L = (2x - 1) / (2 s^2) with x ~ N(1, s^2): mean 1/(2 s^2), variance 1/s^2.
  double mean = 0.0;
  double variance = 0.0;
  PrivacyLossPair(PairKind::kPoissonRemove, 1.0, 2.0).LossMoments(mean, variance);
  EXPECT_NEAR(mean, 0.125, 1e-12);
  EXPECT_NEAR(variance, 0.25, 1e-12);
}

}  // namespace
}  // namespace asyncdp::accounting
