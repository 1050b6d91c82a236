// The Dirac-canary wrapper against the clipped-gradient-sum contract of models/model.h, for every non-CNN
// model: a canary row's clipped gradient is exactly C on its own coordinate, every other row's is the
// wrapped model's, bit for bit.
#include "models/dirac_canary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "models/cnn/lenet.h"
#include "models/data_canary.h"
#include "models/factory.h"
#include "tests/models/cnn/cnn_test_util.h"
#include "tests/models/synthetic_data.h"

namespace asyncdp::models {
namespace {

using synthetic::ModelCase;

struct CanaryFixture {
  explicit CanaryFixture(const ModelCase& c, DiracCanaryOptions options = {})
      : base(MakeModel(c.options, c.num_features, c.num_classes)) {
    data = synthetic::MakeSyntheticData(401, 30, c.num_features, c.num_classes, c.sparse);
    // Three placeholder rows for canaries after the 30 records (features never read).
    for (int j = 0; j < 3; ++j) data = AppendRowCopy(data, j, data.labels[j]);
    options.first_canary_row = 30;
    if (options.canary_of_row.empty()) options.num_canaries = std::max<int64_t>(options.num_canaries, 3);
    model = std::make_unique<DiracCanaryModel>(base, options);
    const auto p = synthetic::RandomParams(402, base->NumParams(), 0.5);
    base_params.assign(p.begin(), p.end());
    params = base_params;
    params.resize(model->NumParams(), 0.37f);  // canary coordinates are never read: any value
    workspace = model->NewWorkspace(16);
    base_workspace = base->NewWorkspace(16);
  }
  std::shared_ptr<const Model> base;
  data::Dataset data;
  std::unique_ptr<DiracCanaryModel> model;
  std::vector<float> base_params, params;
  std::unique_ptr<Workspace> workspace, base_workspace;
};

class DiracCanaryTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(DiracCanaryTest, BatchWithoutCanaryIsTheWrappedModelBitForBit) {
  CanaryFixture f(GetParam());
  const std::vector<int64_t> batch = {3, 17, 0, 29, 3, 8};
  const int64_t n = f.base->NumParams();
  std::vector<float> expected(n), got(f.model->NumParams(), 9.0f), expected_norms(6), norms(6);
  const ClipStats e = f.base->ClippedGradientSum(f.base_params, f.data, batch, 0.1, expected,
                                                 *f.base_workspace, expected_norms);
  const ClipStats g = f.model->ClippedGradientSum(f.params, f.data, batch, 0.1, got, *f.workspace, norms);
  EXPECT_EQ(0, std::memcmp(expected.data(), got.data(), n * sizeof(float)));
  for (int64_t j = n; j < f.model->NumParams(); ++j) EXPECT_EQ(got[j], 0.0f);
  EXPECT_EQ(expected_norms, norms);
  EXPECT_EQ(e.examples, g.examples);
  EXPECT_EQ(e.clipped, g.clipped);
  EXPECT_EQ(e.norm_sum, g.norm_sum);
}

TEST_P(DiracCanaryTest, CanaryClippedGradientIsExactlyCOnItsOwnCoordinate) {
  CanaryFixture f(GetParam());
  for (const double clip : {0.05, 1.0, 7.5}) {
    for (int64_t canary = 0; canary < 3; ++canary) {
      const int64_t row[1] = {30 + canary};
      std::vector<float> g(f.model->NumParams(), 5.0f), norms(1);
      const ClipStats s = f.model->ClippedGradientSum(f.params, f.data, row, clip, g, *f.workspace, norms);
      for (int64_t j = 0; j < f.model->NumParams(); ++j) {
        EXPECT_EQ(g[j], j == f.model->CanaryCoordinate(canary) ? static_cast<float>(clip) : 0.0f) << j;
      }
      EXPECT_EQ(s.examples, 1);
      EXPECT_EQ(s.clipped, 0);  // norm exactly C: on the boundary, not clipped
      EXPECT_EQ(s.norm_sum, clip);
      EXPECT_EQ(norms[0], static_cast<float>(clip));
    }
  }
}

TEST_P(DiracCanaryTest, MixedBatchAddsCPerCanaryOccurrenceAndLeavesOtherRowsUnchanged) {
  CanaryFixture f(GetParam());
  // Canaries 0 (twice) and 2 among ordinary rows; the ordinary rows in their batch order.
  const std::vector<int64_t> batch = {5, 30, 11, 32, 30, 19, 2};
  const std::vector<int64_t> ordinary = {5, 11, 19, 2};
  const double clip = 0.3;
  const int64_t n = f.base->NumParams();
  std::vector<float> expected(n), expected_norms(4), got(f.model->NumParams()), norms(batch.size());
  const ClipStats e = f.base->ClippedGradientSum(f.base_params, f.data, ordinary, clip, expected,
                                                 *f.base_workspace, expected_norms);
  const ClipStats g = f.model->ClippedGradientSum(f.params, f.data, batch, clip, got, *f.workspace, norms);
  EXPECT_EQ(0, std::memcmp(expected.data(), got.data(), n * sizeof(float)));
  EXPECT_EQ(got[f.model->CanaryCoordinate(0)], static_cast<float>(2 * clip));
  EXPECT_EQ(got[f.model->CanaryCoordinate(1)], 0.0f);
  EXPECT_EQ(got[f.model->CanaryCoordinate(2)], static_cast<float>(clip));
  EXPECT_EQ(g.examples, 7);
  EXPECT_EQ(g.clipped, e.clipped);
  EXPECT_DOUBLE_EQ(g.norm_sum, e.norm_sum + 3 * clip);
  const std::vector<float> norms_expected = {
      expected_norms[0],        static_cast<float>(clip), expected_norms[1], static_cast<float>(clip),
      static_cast<float>(clip), expected_norms[2],        expected_norms[3]};
  EXPECT_EQ(norms, norms_expected);
  // The workspace carries nothing between calls.
  std::vector<float> again(f.model->NumParams());
  f.model->ClippedGradientSum(f.params, f.data, batch, clip, again, *f.workspace);
  EXPECT_EQ(got, again);
}

TEST_P(DiracCanaryTest, EvaluationAndInitialParametersAreTheWrappedModels) {
  CanaryFixture f(GetParam());
  const Evaluation e = f.base->Evaluate(f.base_params, f.data);
  const Evaluation g = f.model->Evaluate(f.params, f.data);
  EXPECT_EQ(e.loss, g.loss);
  EXPECT_EQ(e.accuracy, g.accuracy);
  const Eigen::VectorXf base_init = f.base->InitialParams(9);
  const Eigen::VectorXf init = f.model->InitialParams(9);
  ASSERT_EQ(init.size(), f.model->NumParams());
  EXPECT_EQ(init.head(base_init.size()), base_init);
  EXPECT_TRUE(init.tail(3).isZero());
  EXPECT_EQ(f.model->Name(), "dirac_canary(" + f.base->Name() + ")");
}

INSTANTIATE_TEST_SUITE_P(AllModels, DiracCanaryTest, ::testing::ValuesIn(synthetic::AllModelCases()),
                         [](const auto& info) { return info.param.name; });

TEST(DiracCanaryOptionsTest, RowsMapToTheirCanariesAndAFixedNormIsClipped) {
  const ModelCase c = synthetic::AllModelCases().front();
  DiracCanaryOptions options;
  options.num_canaries = 5;
  options.canary_of_row = {4, 1};  // rows 30, 31 are canaries 4 and 1; row 32 is an ordinary record
  options.gradient_norm = 2.0;
  CanaryFixture f(c, options);
  EXPECT_EQ(f.model->CanaryOfRow(30), 4);
  EXPECT_EQ(f.model->CanaryOfRow(31), 1);
  EXPECT_EQ(f.model->CanaryOfRow(32), -1);
  EXPECT_EQ(f.model->CanaryOfRow(29), -1);
  const int64_t batch[2] = {31, 30};
  std::vector<float> g(f.model->NumParams()), norms(2);
  const ClipStats s = f.model->ClippedGradientSum(f.params, f.data, batch, 0.5, g, *f.workspace, norms);
  EXPECT_EQ(g[f.model->CanaryCoordinate(4)], 0.5f);  // norm 2 clipped to C = 0.5
  EXPECT_EQ(g[f.model->CanaryCoordinate(1)], 0.5f);
  EXPECT_EQ(g[f.model->CanaryCoordinate(0)], 0.0f);
  EXPECT_EQ(s.clipped, 2);
  EXPECT_EQ(norms, (std::vector<float>{2.0f, 2.0f}));
}

TEST(DiracCanaryOptionsTest, OppositeRecordsRealiseTheFixedSizeWorstCase) {
  // Every ordinary record's clipped gradient is -C e, the canary's +C e: a batch of s records holding the
  // canary sums to (2 - s) C on the canary coordinate, one without it to -s C.
  const ModelCase c = synthetic::AllModelCases().front();
  DiracCanaryOptions options;
  options.num_canaries = 1;
  options.canary_of_row = {0};
  options.other_records = OtherRecords::kOpposite;
  CanaryFixture f(c, options);
  const int64_t with[4] = {1, 30, 7, 2};
  const int64_t without[4] = {1, 9, 7, 2};
  std::vector<float> g(f.model->NumParams());
  f.model->ClippedGradientSum(f.params, f.data, with, 0.25, g, *f.workspace);
  EXPECT_EQ(g[f.model->CanaryCoordinate(0)], -0.5f);
  for (int64_t j = 0; j < f.base->NumParams(); ++j) EXPECT_EQ(g[j], 0.0f);
  const ClipStats s = f.model->ClippedGradientSum(f.params, f.data, without, 0.25, g, *f.workspace);
  EXPECT_EQ(g[f.model->CanaryCoordinate(0)], -1.0f);
  EXPECT_EQ(s.examples, 4);
}

TEST(DiracCanaryCnnTest, WrapsLeNetLikeAnyModel) {
  // The wrapper only uses the Model contract: on LeNet-5 the ordinary rows' sum is LeNet's own, bit for
  // bit, and each canary occurrence adds exactly C on its coordinate.
  std::shared_ptr<const Model> lenet = MakeLeNet5();
  data::Dataset data = cnn_testing::SyntheticImages({1, 28, 28}, 10, 12, 601);
  data = AppendRowCopy(data, 0, data.labels[0]);  // row 12: the canary
  DiracCanaryOptions options;
  options.first_canary_row = 12;
  const DiracCanaryModel model(lenet, options);
  const Eigen::VectorXf base_params = lenet->InitialParams(3);
  Eigen::VectorXf params = model.InitialParams(3);
  ASSERT_EQ(params.size(), base_params.size() + 1);
  auto base_ws = lenet->NewWorkspace(8);
  auto ws = model.NewWorkspace(8);
  const std::vector<int64_t> batch = {4, 12, 7, 0, 12, 11};
  const std::vector<int64_t> ordinary = {4, 7, 0, 11};
  std::vector<float> expected(lenet->NumParams()), got(model.NumParams());
  lenet->ClippedGradientSum(cnn_testing::AsSpan(base_params), data, ordinary, 0.5, expected, *base_ws);
  model.ClippedGradientSum(cnn_testing::AsSpan(params), data, batch, 0.5, got, *ws);
  EXPECT_EQ(0, std::memcmp(expected.data(), got.data(), expected.size() * sizeof(float)));
  EXPECT_EQ(got.back(), 1.0f);
}

}  // namespace
}  // namespace asyncdp::models
