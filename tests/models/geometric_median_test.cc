// The geometric-median model (models/geometric_median.h): gradients by finite differences, the batched
// clipped sum against a per-example loop, float against double, sparse against dense storage, the
// coincident-row subgradient, and the factory entry.
#include "models/geometric_median.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/clipping.h"
#include "core/error.h"
#include "models/factory.h"
#include "tests/models/synthetic_data.h"

namespace asyncdp::models {
namespace {

std::unique_ptr<Model> MakeMedian(int64_t features) {
  ModelOptions options;
  options.kind = "geometric_median";
  return MakeModel(options, features, 2);
}

const DoublePrecisionPath& Path(const Model& model) {
  const auto* path = dynamic_cast<const DoublePrecisionPath*>(&model);
  EXPECT_NE(path, nullptr);
  return *path;
}

double Norm(const std::vector<double>& v) { return L2Norm(std::span<const double>(v)); }

class GeometricMedianStorageTest : public ::testing::TestWithParam<bool> {};  // true = sparse rows

// Central differences in double (h = 1e-5); the rows are far from the random θ, so f is smooth there.
TEST_P(GeometricMedianStorageTest, PerExampleGradientMatchesFiniteDifferences) {
  const auto data = synthetic::MakeSyntheticData(401, 10, 9, 2, GetParam());
  const auto model = MakeMedian(9);
  const auto& path = Path(*model);
  constexpr double kStep = 1e-5;
  for (int point = 0; point < 3; ++point) {
    std::vector<double> params = synthetic::RandomParams(410 + point, 9, 0.7);
    for (int64_t row = 0; row < 5; ++row) {
      const int64_t batch[1] = {row};
      std::vector<double> grad(9), norm(1);
      path.ClippedGradientSumDouble(params, data, batch, kNoClip, grad, norm);
      EXPECT_NEAR(Norm(grad), 1.0, 1e-12) << "a unit vector";
      EXPECT_EQ(norm[0], 1.0);
      for (int64_t j = 0; j < 9; ++j) {
        const double saved = params[j];
        params[j] = saved + kStep;
        const double f_plus = path.ExampleLossDouble(params, data, row);
        params[j] = saved - kStep;
        const double f_minus = path.ExampleLossDouble(params, data, row);
        params[j] = saved;
        EXPECT_NEAR(grad[j], (f_plus - f_minus) / (2 * kStep), 1e-7) << "point " << point << " row " << row;
      }
    }
  }
}

TEST_P(GeometricMedianStorageTest, LossIsTheEuclideanDistance) {
  const auto data = synthetic::MakeSyntheticData(402, 6, 7, 2, GetParam());
  const auto model = MakeMedian(7);
  const std::vector<double> params = synthetic::RandomParams(403, 7, 1.0);
  const data::DenseMatrix dense = GetParam() ? data::DenseMatrix(data.sparse.toDense()) : data.dense;
  for (int64_t r = 0; r < data.rows(); ++r) {
    double sq = 0.0;
    for (int64_t j = 0; j < 7; ++j) sq += (params[j] - dense(r, j)) * (params[j] - dense(r, j));
    EXPECT_NEAR(Path(*model).ExampleLossDouble(params, data, r), std::sqrt(sq), 1e-12) << r;
  }
}

TEST_P(GeometricMedianStorageTest, BatchedClippedSumEqualsThePerExampleLoop) {
  const auto data = synthetic::MakeSyntheticData(404, 50, 12, 2, GetParam());
  const auto model = MakeMedian(12);
  const auto workspace = model->NewWorkspace(64);
  const std::vector<double> exact = synthetic::RandomParams(405, 12, 0.5);
  const std::vector<float> params(exact.begin(), exact.end());
  std::vector<int64_t> batch;
  for (int i = 0; i < 30; ++i) batch.push_back((i * 17 + 3) % 50);
  batch.push_back(batch.front());  // a repeated record
  for (const double clip : {0.05, 0.5, 1.0, 3.0}) {
    std::vector<double> naive(12, 0.0);
    for (const int64_t r : batch) {
      std::vector<double> g(12);
      const int64_t one[1] = {r};
      Path(*model).ClippedGradientSumDouble(exact, data, one, kNoClip, g);
      ClipInPlace(std::span<double>(g), clip);
      for (int j = 0; j < 12; ++j) naive[j] += g[j];
    }
    std::vector<float> fast(12), norms(batch.size());
    const ClipStats stats = model->ClippedGradientSum(params, data, batch, clip, fast, *workspace, norms);
    std::vector<double> twin(12);
    Path(*model).ClippedGradientSumDouble(exact, data, batch, clip, twin);
    for (int j = 0; j < 12; ++j) {
      EXPECT_NEAR(fast[j], naive[j], 1e-5 * (1 + std::abs(naive[j]))) << "C " << clip << " j " << j;
      EXPECT_NEAR(twin[j], naive[j], 1e-12 * (1 + std::abs(naive[j]))) << "C " << clip << " j " << j;
    }
    EXPECT_EQ(stats.examples, static_cast<int64_t>(batch.size()));
    EXPECT_EQ(stats.clipped, clip < 1.0 ? static_cast<int64_t>(batch.size()) : 0) << "every norm is 1";
    EXPECT_DOUBLE_EQ(stats.norm_sum, static_cast<double>(batch.size()));
    for (const float n : norms) EXPECT_EQ(n, 1.0f);
  }
}

TEST_P(GeometricMedianStorageTest, EvaluateIsTheMeanDistanceAndPredictsNoClass) {
  const auto data = synthetic::MakeSyntheticData(406, 40, 8, 3, GetParam());
  const auto model = MakeMedian(8);
  const std::vector<double> exact = synthetic::RandomParams(407, 8, 0.5);
  const std::vector<float> params(exact.begin(), exact.end());
  double sum = 0.0;
  for (int64_t r = 0; r < data.rows(); ++r) sum += Path(*model).ExampleLossDouble(exact, data, r);
  const Evaluation e = model->Evaluate(params, data);
  EXPECT_NEAR(e.loss, sum / 40.0, 1e-6 * e.loss);
  EXPECT_TRUE(std::isnan(e.accuracy));
  EXPECT_EQ(e.examples, 40);
  const Evaluation other = model->Evaluate(params, synthetic::ConvertStorage(data));
  EXPECT_NEAR(other.loss, e.loss, 1e-12 * e.loss);
}

INSTANTIATE_TEST_SUITE_P(Storage, GeometricMedianStorageTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "sparse" : "dense";
                         });

TEST(GeometricMedianTest, ARowAtThetaContributesTheZeroSubgradient) {
  auto data = synthetic::MakeSyntheticData(408, 4, 5, 2, /*sparse=*/false);
  const auto model = MakeMedian(5);
  std::vector<float> params(5);
  for (int j = 0; j < 5; ++j) params[j] = data.dense(2, j);  // θ = x_2
  const auto workspace = model->NewWorkspace(4);
  const int64_t batch[2] = {2, 0};
  std::vector<float> sum(5), norms(2);
  const ClipStats stats = model->ClippedGradientSum(params, data, batch, 0.5, sum, *workspace, norms);
  EXPECT_EQ(norms[0], 0.0f);
  EXPECT_EQ(norms[1], 1.0f);
  EXPECT_EQ(stats.examples, 2);
  EXPECT_EQ(stats.clipped, 1);
  EXPECT_DOUBLE_EQ(stats.norm_sum, 1.0);
  // Only row 0 contributes: 0.5 (θ − x_0)/||θ − x_0||.
  double dist = 0.0;
  for (int j = 0; j < 5; ++j) dist += (params[j] - data.dense(0, j)) * (params[j] - data.dense(0, j));
  dist = std::sqrt(dist);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(sum[j], 0.5 * (params[j] - data.dense(0, j)) / dist, 1e-6) << j;
  const std::vector<double> exact(params.begin(), params.end());
  EXPECT_EQ(Path(*model).ExampleLossDouble(exact, data, 2), 0.0);
}

TEST(GeometricMedianTest, InitialParamsAreSeededAndSmall) {
  const auto model = MakeMedian(20);
  const Eigen::VectorXf a = model->InitialParams(1), b = model->InitialParams(1), c = model->InitialParams(2);
  EXPECT_EQ(a.size(), 20);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_LT(a.norm(), 0.2);
  ModelOptions zero;
  zero.kind = "geometric_median";
  zero.init_stddev = 0.0;
  EXPECT_EQ(MakeModel(zero, 20, 2)->InitialParams(5).norm(), 0.0f);
}

TEST(GeometricMedianTest, FactoryBuildsItForAnyLabelsAndRejectsARegulariser) {
  const auto model = MakeMedian(3);
  EXPECT_EQ(model->Name(), "geometric_median");
  EXPECT_EQ(model->NumParams(), 3);
  ModelOptions multiclass;
  multiclass.kind = "geometric_median";
  EXPECT_EQ(MakeModel(multiclass, 3, 10)->NumParams(), 3);  // labels are ignored
  ModelOptions ridge = multiclass;
  ridge.l2_lambda = 0.1;
  try {
    MakeModel(ridge, 3, 2);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "model.l2_lambda");
  }
}

}  // namespace
}  // namespace asyncdp::models
