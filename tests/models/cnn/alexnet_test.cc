// AlexNet-CIFAR: architecture, finite-difference gradient check of every parameter group (double path),
// and a few full-batch gradient steps lowering the loss on a small synthetic set (float path).
#include "models/cnn/alexnet.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "models/cnn/cnn_model.h"
#include "tests/models/cnn/cnn_test_util.h"
#include "tests/models/cnn/fd_check.h"

namespace asyncdp::models {
namespace {

using cnn_testing::AsSpan;

TEST(AlexNetTest, ArchitectureMatchesHeader) {
  const auto model = MakeAlexNetCifar();
  EXPECT_EQ(model->Name(), "alexnet_cifar");
  // conv 3→64: 4864; conv 64→64: 102464; dense 4096→384: 1573248; 384→192: 73920; 192→10: 1930.
  EXPECT_EQ(model->NumParams(), 1756426);
  const CnnGeometry geometry = ComputeGeometry(AlexNetCifarArchitecture());
  EXPECT_EQ(geometry.convs[0].out_height, 32);  // "same" padding
  EXPECT_EQ(geometry.convs[1].out_height, 16);
  EXPECT_EQ(geometry.convs[1].output_size(), 4096);
  EXPECT_EQ(geometry.dense[0].out_features, 384);
  EXPECT_EQ(geometry.dense[1].out_features, 192);
}

// Expectation: every parameter group's gradient matches central differences (see fd_check.h). Covers
// what LeNet does not reach: padded 5 × 5 convolutions with 64 channels (several channel blocks and row
// tiles in conv_lanes.h) and dense layers wider than one register block.
TEST(AlexNetTest, EveryParameterGroupMatchesFiniteDifferences) {
  const CnnArchitecture architecture = AlexNetCifarArchitecture();
  cnn_testing::DoubleReference reference(architecture, Activation::kRelu, Pooling::kMax);
  const data::Dataset data = cnn_testing::SyntheticImages(architecture.input, 10, 1, /*seed=*/41);
  const Eigen::VectorXd params = cnn_testing::TestParams(reference.geometry(), Activation::kRelu, /*seed=*/7);
  const int64_t rows[] = {0};
  cnn_testing::ExpectGradientMatchesFiniteDifferences(reference, data, params, rows, /*coordinates=*/1,
                                                      /*seed=*/13);
}

// Expectation: the float path's gradient is a descent direction: 5 small full-batch steps on 12 examples
// lower the mean loss.
TEST(AlexNetTest, GradientStepsLowerTheLoss) {
  const auto model = MakeAlexNetCifar({.threads = 2});
  const data::Dataset data =
      cnn_testing::SyntheticImages({.channels = 3, .height = 32, .width = 32}, 10, 12, 5);
  std::vector<int64_t> batch(data.rows());
  std::iota(batch.begin(), batch.end(), 0);
  Eigen::VectorXf params = model->InitialParams(/*seed=*/3);
  Eigen::VectorXf grad_sum(model->NumParams());
  auto workspace = model->NewWorkspace(data.rows());
  const double initial = model->Evaluate(AsSpan(params), data).loss;
  for (int step = 0; step < 5; ++step) {
    model->ClippedGradientSum(AsSpan(params), data, batch, kNoClip, AsSpan(grad_sum), *workspace);
    params -= (0.01f / data.rows()) * grad_sum;
  }
  EXPECT_LT(model->Evaluate(AsSpan(params), data).loss, 0.9 * initial) << "initial " << initial;
}

}  // namespace
}  // namespace asyncdp::models
