// The data-level canaries: the feature canary of a logistic model has clipped gradient exactly C times its
// stated direction and leaves every other record's gradient as it was; the mislabelled canary is a
// reproducible relabelled copy of a real record.
#include "models/data_canary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "models/factory.h"
#include "tests/models/synthetic_data.h"

namespace asyncdp::models {
namespace {

std::vector<float> Gradient(const Model& model, std::span<const float> params, const data::Dataset& data,
                            int64_t row, double clip) {
  std::vector<float> g(model.NumParams());
  auto workspace = model.NewWorkspace(1);
  const int64_t one[1] = {row};
  model.ClippedGradientSum(params, data, one, clip, g, *workspace);
  return g;
}

class FeatureCanaryTest : public ::testing::TestWithParam<bool> {};  // sparse or dense storage

TEST_P(FeatureCanaryTest, WidensTheDataAndAppendsTheCanaryRowOnlyWhenIncluded) {
  const data::Dataset data = synthetic::MakeSyntheticData(501, 25, 6, 2, GetParam());
  FeatureCanary canary;
  const data::Dataset out = WithFeatureCanary(data, 40.0f, 1, /*include=*/false, &canary);
  const data::Dataset in = WithFeatureCanary(data, 40.0f, 1, /*include=*/true, &canary);
  EXPECT_EQ(canary.column, 6);
  EXPECT_EQ(canary.bias_param, 7);
  EXPECT_EQ(out.features(), 7);
  EXPECT_EQ(in.features(), 7);
  EXPECT_EQ(out.rows(), 25);
  ASSERT_EQ(in.rows(), 26);
  EXPECT_EQ(in.labels.back(), 1);
  const data::DenseMatrix original = data.is_sparse ? data::DenseMatrix(data.sparse.toDense()) : data.dense;
  const data::DenseMatrix widened = in.is_sparse ? data::DenseMatrix(in.sparse.toDense()) : in.dense;
  EXPECT_EQ(widened.topLeftCorner(25, 6), original);
  EXPECT_TRUE(widened.col(6).head(25).isZero());
  for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(widened(25, j), 0.0f);
  EXPECT_EQ(widened(25, 6), 40.0f);
}

TEST_P(FeatureCanaryTest, LogisticCanaryGradientIsExactlyCAlongItsDirection) {
  const data::Dataset data = synthetic::MakeSyntheticData(502, 25, 6, 2, GetParam());
  ModelOptions options;  // plain logistic regression, no L2
  for (const int32_t label : {0, 1}) {
    FeatureCanary canary;
    const data::Dataset in = WithFeatureCanary(data, 40.0f, label, true, &canary);
    const auto model = MakeModel(options, in.features(), 2);
    std::vector<float> params(model->NumParams(), 0.0f);  // z = 0: |s(z) - y| = 1/2
    const std::vector<double> u = LogisticFeatureCanaryDirection(canary, model->NumParams());
    double norm = 0.0;
    for (const double x : u) norm += x * x;
    EXPECT_NEAR(norm, 1.0, 1e-15);
    for (const double clip : {0.1, 5.0, 20.0}) {  // 1/2 sqrt(40^2 + 1) = 20.006 >= C
      const auto g = Gradient(*model, params, in, 25, clip);
      for (int64_t j = 0; j < model->NumParams(); ++j) {
        EXPECT_NEAR(g[j], clip * u[j], 1e-6 * clip) << "label " << label << " C " << clip << " j " << j;
      }
    }
  }
}

TEST_P(FeatureCanaryTest, OtherRecordsGradientsAreUnchangedAndNeverTouchTheCanaryFeature) {
  const data::Dataset data = synthetic::MakeSyntheticData(503, 25, 6, 2, GetParam());
  FeatureCanary canary;
  const data::Dataset in = WithFeatureCanary(data, 40.0f, 1, true, &canary);
  ModelOptions options;
  const auto original = MakeModel(options, 6, 2);
  const auto widened = MakeModel(options, 7, 2);
  const auto p = synthetic::RandomParams(504, 8, 0.5);  // 7 weights + bias
  std::vector<float> wide_params(p.begin(), p.end());
  std::vector<float> params(wide_params.begin(), wide_params.begin() + 6);
  params.push_back(wide_params[7]);  // the bias
  for (int64_t row = 0; row < 25; ++row) {
    const auto expected = Gradient(*original, params, data, row, 0.2);
    const auto got = Gradient(*widened, wide_params, in, row, 0.2);
    // Equal up to float summation order (a dense row has one more, zero, term).
    for (int64_t j = 0; j < 6; ++j) EXPECT_NEAR(got[j], expected[j], 1e-6) << row << " " << j;
    EXPECT_EQ(got[6], 0.0f) << row;
    EXPECT_NEAR(got[7], expected[6], 1e-6) << row;
  }
}

INSTANTIATE_TEST_SUITE_P(Storage, FeatureCanaryTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "sparse" : "dense"; });

TEST(MislabelledCanaryTest, ReproducibleFromTheSeedAndAlwaysRelabelled) {
  const data::Dataset data = synthetic::MakeSyntheticData(505, 40, 5, 4, true);
  std::set<int64_t> rows;
  std::set<int32_t> labels;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const MislabelledCanary a = ChooseMislabelledCanary(data, seed);
    const MislabelledCanary b = ChooseMislabelledCanary(data, seed);
    EXPECT_EQ(a.source_row, b.source_row);
    EXPECT_EQ(a.label, b.label);
    ASSERT_GE(a.source_row, 0);
    ASSERT_LT(a.source_row, 40);
    EXPECT_NE(a.label, data.labels[a.source_row]);
    EXPECT_GE(a.label, 0);
    EXPECT_LT(a.label, 4);
    rows.insert(a.source_row);
    labels.insert(a.label);
  }
  EXPECT_GT(rows.size(), 30u);  // 200 uniform draws over 40 rows miss few
  EXPECT_EQ(labels.size(), 4u);
}

TEST(MislabelledCanaryTest, AppendedCopyHasTheSourceFeaturesAndTheNewLabel) {
  for (const bool sparse : {true, false}) {
    const data::Dataset data = synthetic::MakeSyntheticData(506, 20, 5, 3, sparse);
    const MislabelledCanary canary = ChooseMislabelledCanary(data, 7);
    const data::Dataset in = AppendRowCopy(data, canary.source_row, canary.label);
    ASSERT_EQ(in.rows(), 21);
    EXPECT_EQ(in.labels[20], canary.label);
    const data::DenseMatrix d = in.is_sparse ? data::DenseMatrix(in.sparse.toDense()) : in.dense;
    EXPECT_EQ(d.row(20), d.row(canary.source_row));
    EXPECT_EQ(d.topRows(20), data.is_sparse ? data::DenseMatrix(data.sparse.toDense()) : data.dense);
    // Its gradient is the source record's gradient for the new label.
    ModelOptions options;
    options.kind = "softmax";
    const auto model = MakeModel(options, 5, 3);
    const auto p = synthetic::RandomParams(507, model->NumParams(), 0.5);
    const std::vector<float> params(p.begin(), p.end());
    data::Dataset relabelled = data;
    relabelled.labels[canary.source_row] = canary.label;
    EXPECT_EQ(Gradient(*model, params, in, 20, 0.7),
              Gradient(*model, params, relabelled, canary.source_row, 0.7));
  }
}

}  // namespace
}  // namespace asyncdp::models
