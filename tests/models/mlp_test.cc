// Tests specific to softmax regression and the MLP (models/mlp.h): they learn what they should, on
// synthetic and real (Fashion-MNIST) data. Gradient correctness is in gradient_check_test, clipping in
// clipped_sum_test.
#include "models/mlp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/sampling.h"
#include "data/load.h"
#include "models/factory.h"
#include "tests/models/synthetic_data.h"
#include "tests/test_data.h"

namespace asyncdp::models {
namespace {

// Plain minibatch SGD on the mean clipped gradient (no noise); returns the trained parameters.
Eigen::VectorXf Train(const Model& model, const data::Dataset& data, int64_t rounds, int64_t batch_size,
                      double eta, double clip) {
  auto workspace = model.NewWorkspace(batch_size);
  Eigen::VectorXf params = model.InitialParams(4);
  std::vector<float> grad(model.NumParams());
  FixedSizeSampler sampler(data.rows(), 4, 0);
  std::vector<int64_t> batch;
  for (int64_t round = 0; round < rounds; ++round) {
    sampler.Sample(static_cast<uint32_t>(round), batch_size, batch);
    model.ClippedGradientSum(synthetic::AsSpan(params), data, batch, clip, grad, *workspace);
    for (int64_t j = 0; j < model.NumParams(); ++j) params[j] -= static_cast<float>(eta / batch_size) * grad[j];
  }
  return params;
}

// XOR of the signs of two coordinates: no linear model separates it, one hidden layer does.
data::Dataset XorData(int64_t rows) {
  RandomStream stream(StreamKey{3, 0, 0, StreamPurpose::kTest});
  data::Dataset d;
  d.is_sparse = false;
  d.source = "synthetic";
  d.format = data::DataFormat::kSynthetic;
  d.class_names = {"0", "1"};
  d.dense.resize(rows, 2);
  for (int64_t r = 0; r < rows; ++r) {
    d.dense(r, 0) = static_cast<float>(2 * stream.NextUniform() - 1);
    d.dense(r, 1) = static_cast<float>(2 * stream.NextUniform() - 1);
    d.labels.push_back(d.dense(r, 0) * d.dense(r, 1) > 0 ? 1 : 0);
  }
  return d;
}

TEST(MlpTest, HiddenLayerLearnsXorThatSoftmaxRegressionCannot) {
  const data::Dataset data = XorData(1000);
  ModelOptions softmax;
  softmax.kind = "softmax";
  ModelOptions mlp;
  mlp.kind = "mlp";
  mlp.hidden = {16};
  for (const Activation act : {Activation::kRelu, Activation::kTanh}) {
    mlp.activation = act;
    const auto model = MakeModel(mlp, 2, 2);
    const Eigen::VectorXf params = Train(*model, data, 3000, 32, 0.5, kNoClip);
    EXPECT_GE(model->Evaluate(synthetic::AsSpan(params), data).accuracy, 0.9) << ActivationName(act);
  }
  const auto linear = MakeModel(softmax, 2, 2);
  const Eigen::VectorXf params = Train(*linear, data, 3000, 32, 0.5, kNoClip);
  EXPECT_LT(linear->Evaluate(synthetic::AsSpan(params), data).accuracy, 0.7);
}

TEST(MlpTest, SoftmaxRegressionLearnsFashionMnist) {
  // Train on the first 8000 images of the Fashion-MNIST test file, evaluate on the last 2000 (the 60k
  // training file would only make the test slower). A linear classifier reaches ~80% after a few epochs.
  const std::string images = asyncdp::testing::FashionMnistFile("t10k-images-idx3-ubyte.gz");
  ASSERT_FALSE(images.empty());
  const data::Dataset all = data::LoadDataset(images);
  ASSERT_EQ(all.rows(), 10000);
  std::vector<int64_t> train_rows(8000), test_rows(2000);
  for (int64_t i = 0; i < 8000; ++i) train_rows[i] = i;
  for (int64_t i = 0; i < 2000; ++i) test_rows[i] = 8000 + i;
  const data::Dataset train = data::Subset(all, train_rows), test = data::Subset(all, test_rows);

  ModelOptions o;
  o.kind = "softmax";
  const auto model = MakeModel(o, 784, 10, all.image);
  // Clipped at C = 5 (most per-example gradients are below it early and above it later): training
  // through the clipped path still works.
  const Eigen::VectorXf params = Train(*model, train, 500, 64, 0.5, 5.0);
  const Evaluation e = model->Evaluate(synthetic::AsSpan(params), test);
  EXPECT_GE(e.accuracy, 0.74);
  EXPECT_LT(e.loss, 0.8);
}

TEST(MlpTest, InitialisationIsSeededHeScaledWithZeroBiases) {
  MlpOptions o;
  o.num_features = 400;
  o.num_classes = 10;
  o.hidden = {300};
  const Mlp model(o);
  const Eigen::VectorXf a = model.InitialParams(9), b = model.InitialParams(9), c = model.InitialParams(10);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Layer 0 weights (into ReLU): He, stddev sqrt(2/400); its bias row (300 entries) is zero.
  const Eigen::Map<const Eigen::VectorXf> w0(a.data(), 400 * 300);
  EXPECT_NEAR(std::sqrt(w0.squaredNorm() / w0.size()), std::sqrt(2.0 / 400), 0.002);
  EXPECT_EQ(Eigen::Map<const Eigen::VectorXf>(a.data() + 400 * 300, 300).squaredNorm(), 0.0f);
  // Output layer (no ReLU after it): LeCun, stddev sqrt(1/300).
  const Eigen::Map<const Eigen::VectorXf> w1(a.data() + 401 * 300, 300 * 10);
  EXPECT_NEAR(std::sqrt(w1.squaredNorm() / w1.size()), std::sqrt(1.0 / 300), 0.003);
}

TEST(MlpTest, ClipStatsCountClippedExamples) {
  const data::Dataset data = XorData(50);
  ModelOptions o;
  o.kind = "mlp";
  o.hidden = {4};
  const auto model = MakeModel(o, 2, 2);
  auto ws = model->NewWorkspace(50);
  const Eigen::VectorXf params = model->InitialParams(1);
  std::vector<float> grad(model->NumParams()), norms(50);
  std::vector<int64_t> batch(50);
  for (int i = 0; i < 50; ++i) batch[i] = i;
  const ClipStats none = model->ClippedGradientSum(synthetic::AsSpan(params), data, batch, 1e6, grad, *ws, norms);
  EXPECT_EQ(none.clipped, 0);
  const ClipStats all = model->ClippedGradientSum(synthetic::AsSpan(params), data, batch, 1e-9, grad, *ws);
  EXPECT_EQ(all.clipped, 50);
  EXPECT_NEAR(all.norm_sum, none.norm_sum, 1e-6 * none.norm_sum);
  // Every example clipped to 1e-9: the sum's norm is at most 50e-9.
  EXPECT_LE(Eigen::Map<const Eigen::VectorXf>(grad.data(), grad.size()).norm(), 50e-9 * (1 + 1e-5));
}

}  // namespace
}  // namespace asyncdp::models
