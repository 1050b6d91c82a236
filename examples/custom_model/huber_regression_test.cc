// The example model of docs/models.md checked the way every model must be: its clipped gradient sum against
// finite differences of its own loss, clipping per example, and training through the whole simulator.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "huber_regression.h"
#include "sim/config.h"
#include "sim/train.h"

namespace example {
namespace {

asyncdp::data::Dataset Tiny() {
  asyncdp::data::Dataset data;
  data.is_sparse = false;
  data.dense.resize(4, 3);
  data.dense << 0.5f, -1.0f, 2.0f,  //
      1.5f, 0.25f, -0.5f,           //
      -2.0f, 3.0f, 1.0f,            //
      0.1f, 0.2f, 0.3f;
  data.labels = {0, 1, 1, 0};
  data.class_names = {"-1", "+1"};
  return data;
}

TEST(HuberRegression, GradientEqualsFiniteDifferencesOfTheLossPerExample) {
  const auto data = Tiny();
  const HuberRegression model(3);
  // Residuals inside (|r| < 1) and outside the quadratic zone, so both branches of h' are checked.
  const Eigen::VectorXf w = (Eigen::VectorXf(4) << 0.3f, -0.2f, 0.4f, 0.1f).finished();
  auto workspace = model.NewWorkspace(1);
  for (int64_t row = 0; row < data.rows(); ++row) {
    Eigen::VectorXf grad(4);
    const int64_t batch[] = {row};
    model.ClippedGradientSum({w.data(), 4}, data, batch, asyncdp::models::kNoClip, {grad.data(), 4}, *workspace);
    for (int j = 0; j < 4; ++j) {
      const double h = 1e-3;
      Eigen::VectorXf plus = w, minus = w;
      plus[j] += static_cast<float>(h);
      minus[j] -= static_cast<float>(h);
      const double fd = (model.Loss({plus.data(), 4}, data, row) - model.Loss({minus.data(), 4}, data, row)) / (2 * h);
      EXPECT_NEAR(grad[j], fd, 2e-3) << "row " << row << ", parameter " << j;
    }
  }
}

TEST(HuberRegression, ClipsEachExampleToC) {
  const auto data = Tiny();
  const HuberRegression model(3);
  const Eigen::VectorXf w = Eigen::VectorXf::Constant(4, 2.0f);  // every residual outside: |h'| = 1
  auto workspace = model.NewWorkspace(4);
  const int64_t batch[] = {0, 1, 2, 3};
  Eigen::VectorXf sum(4);
  float norms[4];
  const auto stats = model.ClippedGradientSum({w.data(), 4}, data, batch, 0.5, {sum.data(), 4}, *workspace, norms);
  EXPECT_EQ(stats.examples, 4);
  EXPECT_EQ(stats.clipped, 4);  // every ‖(x, 1)‖ > 0.5
  EXPECT_LE(sum.norm(), 4 * 0.5 + 1e-6);
  for (float n : norms) EXPECT_GT(n, 0.5f);
}

TEST(HuberRegression, TrainsThroughTheSimulatorWithItsPrivacyReport) {
  RegisterHuberRegression();
  asyncdp::sim::TrainConfig config;
  const std::string dir = ASYNCDP_SOURCE_DIR "/datasets/libsvm/";  // a9a ships with the repository
  config.data.train = dir + "a9a.gz";
  config.data.test = dir + "a9a.t.gz";
  config.data.rows_per_client = 2000;
  config.model.kind = "huber";
  config.clients.count = 2;
  config.dp.sigma = 2.0;
  config.dp.clip = 1.0;
  config.schedule.sample_size = 50;
  config.schedule.rounds = 100;
  config.schedule.divide_round_update_by_sample_size = true;
  config.eval.points = 2;
  const auto result = asyncdp::sim::RunTraining(config, {.progress = false});
  EXPECT_EQ(result.summary["model"]["kind"], "huber");
  EXPECT_GT(result.summary["test_accuracy"].get<double>(), 0.75);  // a9a's majority class is 0.7638
  EXPECT_GT(result.summary["epsilon"]["pld"].get<double>(), 0.0);
}

}  // namespace
}  // namespace example
