// CnnModel: the Model contract on top of CnnNetwork — clipping guarantees, the batched path against a
// naive per-example loop, chunking and threading (bit-identical for every thread count), data checks,
// and Evaluate.
#include "models/cnn/cnn_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/clipping.h"
#include "core/error.h"
#include "models/cnn/lenet.h"
#include "tests/models/cnn/cnn_test_util.h"

namespace asyncdp::models {
namespace {

using cnn_testing::AsSpan;
using cnn_testing::SyntheticImages;

// Small enough to be fast, with padding, two conv blocks and two dense layers; chunk 4, so batches of
// 10+ examples span several chunks and end in a partial one.
CnnArchitecture SmallArchitecture() {
  CnnArchitecture architecture;
  architecture.name = "small";
  architecture.input = {.channels = 2, .height = 12, .width = 12};
  architecture.convs = {{.out_channels = 4, .kernel = 3, .padding = 1},   // 12 × 12 → pool 6 × 6
                        {.out_channels = 6, .kernel = 3, .padding = 0}};  // 4 × 4 → pool 2 × 2
  architecture.hidden = {8};
  architecture.classes = 5;
  architecture.default_chunk_size = 4;
  return architecture;
}

struct CnnFixture {
  explicit CnnFixture(CnnOptions options = {}, int64_t rows = 23)
      : model(SmallArchitecture(), options),
        data(SyntheticImages(SmallArchitecture().input, 5, rows, /*seed=*/21)),
        params(model.InitialParams(/*seed=*/4)) {}

  // grad_sum of one call with the given batch.
  Eigen::VectorXf Sum(std::span<const int64_t> batch, double clip, ClipStats* stats = nullptr,
                      std::span<float> norms = {}) const {
    Eigen::VectorXf sum(model.NumParams());
    auto workspace = model.NewWorkspace(static_cast<int64_t>(batch.size()));
    const ClipStats s =
        model.ClippedGradientSum(AsSpan(params), data, batch, clip, AsSpan(sum), *workspace, norms);
    if (stats != nullptr) *stats = s;
    return sum;
  }

  // The unclipped gradient of one example.
  Eigen::VectorXf Single(int64_t row) const {
    const int64_t batch[1] = {row};
    return Sum(batch, kNoClip);
  }

  std::vector<int64_t> AllRows() const {
    std::vector<int64_t> rows(data.rows());
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }

  CnnModel model;
  data::Dataset data;
  Eigen::VectorXf params;
};

double MedianNorm(const CnnFixture& f) {
  std::vector<double> norms;
  for (int64_t r = 0; r < f.data.rows(); ++r) norms.push_back(f.Single(r).norm());
  std::sort(norms.begin(), norms.end());
  return 0.5 * (norms[norms.size() / 2 - 1] + norms[norms.size() / 2]);
}

// Expectation: ||clip_C(g_r)|| ≤ C(1 + 1e-6) for every example, with C far below every norm.
TEST(CnnModelTest, EveryClippedGradientHasNormAtMostC) {
  const CnnFixture f;
  constexpr double kClip = 1e-3;
  for (int64_t r = 0; r < f.data.rows(); ++r) {
    const int64_t batch[1] = {r};
    ClipStats stats;
    const Eigen::VectorXf clipped = f.Sum(batch, kClip, &stats);
    EXPECT_EQ(stats.clipped, 1);
    EXPECT_LE(clipped.cast<double>().norm(), kClip * (1 + 1e-6)) << "row " << r;
    EXPECT_GE(clipped.cast<double>().norm(), kClip * (1 - 1e-5)) << "row " << r;  // scaled, not zeroed
  }
}

// Expectation: a gradient already inside C is returned unchanged (bit-identical to no clipping).
TEST(CnnModelTest, GradientInsideCIsUnchanged) {
  const CnnFixture f;
  const std::vector<int64_t> rows = f.AllRows();
  ClipStats stats;
  const Eigen::VectorXf loose = f.Sum(rows, 1e6, &stats);
  EXPECT_EQ(stats.clipped, 0);
  const Eigen::VectorXf unclipped = f.Sum(rows, kNoClip);
  EXPECT_EQ(loose, unclipped);
  for (int64_t r = 0; r < f.data.rows(); ++r) {
    const int64_t batch[1] = {r};
    EXPECT_EQ(f.Sum(batch, 1e6), f.Single(r));
  }
}

// Expectation: the batched path (chunks, ghost norms, one GEMM per dense layer) equals a naive loop that
// computes each example's gradient alone, clips it with core ClipInPlace and sums, to 1e-5 relative.
TEST(CnnModelTest, BatchedPathEqualsNaivePerExampleLoop) {
  const CnnFixture f;
  const double clip = MedianNorm(f);
  std::vector<int64_t> batch = f.AllRows();
  batch.push_back(3);  // a repeat
  std::reverse(batch.begin(), batch.end());

  Eigen::VectorXd naive = Eigen::VectorXd::Zero(f.model.NumParams());
  int64_t naive_clipped = 0;
  double naive_norm_sum = 0.0;
  std::vector<float> naive_norms;
  for (int64_t row : batch) {
    Eigen::VectorXd g = f.Single(row).cast<double>();
    const double norm = ClipInPlace(std::span<double>(g.data(), g.size()), clip);
    naive_norms.push_back(static_cast<float>(norm));
    naive_norm_sum += norm;
    if (norm > clip) ++naive_clipped;
    naive += g;
  }

  ClipStats stats;
  std::vector<float> norms(batch.size());
  const Eigen::VectorXf fast = f.Sum(batch, clip, &stats, norms);
  EXPECT_LE((fast.cast<double>() - naive).norm(), 1e-5 * naive.norm());
  EXPECT_EQ(stats.examples, static_cast<int64_t>(batch.size()));
  EXPECT_EQ(stats.clipped, naive_clipped);
  EXPECT_GT(stats.clipped, 0);
  EXPECT_LT(stats.clipped, stats.examples);
  EXPECT_NEAR(stats.norm_sum, naive_norm_sum, 1e-5 * naive_norm_sum);
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_NEAR(norms[i], naive_norms[i], 1e-5 * naive_norms[i]);
}

// Expectation: 1, 2 and 3 threads give bit-identical sums (chunks are reduced in a fixed order), and a
// workspace can be reused and be smaller than the batch.
TEST(CnnModelTest, ResultDoesNotDependOnThreadCount) {
  const CnnFixture one({.threads = 1}, 40);
  const std::vector<int64_t> batch = one.AllRows();
  const double clip = 0.5 * MedianNorm(one);
  const Eigen::VectorXf reference = one.Sum(batch, clip);
  for (int threads : {2, 3}) {
    const CnnFixture many({.threads = threads}, 40);
    EXPECT_EQ(many.Sum(batch, clip), reference) << threads << " threads";
    auto small_workspace = many.model.NewWorkspace(5);
    Eigen::VectorXf sum(many.model.NumParams());
    for (int repeat = 0; repeat < 2; ++repeat) {
      many.model.ClippedGradientSum(AsSpan(many.params), many.data, batch, clip, AsSpan(sum),
                                    *small_workspace);
      EXPECT_EQ(sum, reference) << threads << " threads, repeat " << repeat;
    }
  }
}

// Expectation: the chunk size changes only float rounding.
TEST(CnnModelTest, ChunkSizeChangesOnlyRounding) {
  const CnnFixture a({.chunk_size = 1});
  const CnnFixture b({.chunk_size = 7});
  const std::vector<int64_t> batch = a.AllRows();
  const double clip = MedianNorm(a);
  const Eigen::VectorXf sum_a = a.Sum(batch, clip);
  EXPECT_LE((sum_a - b.Sum(batch, clip)).norm(), 1e-5 * sum_a.norm());
}

TEST(CnnModelTest, EmptyBatchGivesZero) {
  const CnnFixture f;
  ClipStats stats;
  const Eigen::VectorXf sum = f.Sum({}, 1.0, &stats);
  EXPECT_TRUE(sum.isZero(0.0));
  EXPECT_EQ(stats.examples, 0);
  EXPECT_EQ(stats.clipped, 0);
}

// Expectation: Evaluate's loss is the mean per-example loss of the double path (1e-5), its accuracy the
// fraction of rows whose argmax logit is the label; threads do not change it.
TEST(CnnModelTest, EvaluateMatchesPerExampleReference) {
  const CnnFixture f;
  cnn_testing::DoubleReference reference(SmallArchitecture(), Activation::kRelu, Pooling::kMax);
  cnn::CnnNetwork<double> network(ComputeGeometry(SmallArchitecture()), Activation::kRelu, Pooling::kMax);
  cnn::ChunkScratch<double> scratch(network.geometry(), 1);
  const Eigen::VectorXd params = f.params.cast<double>();
  double loss = 0.0;
  int64_t correct = 0;
  for (int64_t r = 0; r < f.data.rows(); ++r) {
    loss += reference.Loss(params, f.data, r);
    const int64_t rows[1] = {r};
    network.Load(f.data, rows, scratch);
    network.Forward(params.data(), scratch);
    int best = 0;  // first maximal logit
    for (int c = 1; c < 5; ++c) {
      if (scratch.logit(0, c) > scratch.logit(0, best)) best = c;
    }
    if (best == f.data.labels[r]) ++correct;
  }
  const Evaluation evaluation = f.model.Evaluate(AsSpan(f.params), f.data);
  EXPECT_EQ(evaluation.examples, f.data.rows());
  EXPECT_NEAR(evaluation.loss, loss / f.data.rows(), 1e-5 * loss / f.data.rows());
  EXPECT_DOUBLE_EQ(evaluation.accuracy, static_cast<double>(correct) / f.data.rows());
  const CnnFixture threaded({.threads = 2});
  const Evaluation evaluation2 = threaded.model.Evaluate(AsSpan(threaded.params), threaded.data);
  EXPECT_EQ(evaluation2.loss, evaluation.loss);
  EXPECT_EQ(evaluation2.accuracy, evaluation.accuracy);
}

TEST(CnnModelTest, RejectsIncompatibleData) {
  const CnnFixture f;
  Eigen::VectorXf sum(f.model.NumParams());
  auto workspace = f.model.NewWorkspace(4);
  const int64_t batch[1] = {0};
  auto call = [&](const data::Dataset& data) {
    f.model.ClippedGradientSum(AsSpan(f.params), data, batch, 1.0, AsSpan(sum), *workspace);
  };
  data::Dataset wrong_shape = SyntheticImages({.channels = 1, .height = 12, .width = 24}, 5, 2, 1);
  EXPECT_THROW(call(wrong_shape), ConfigError);
  EXPECT_THROW(f.model.Evaluate(AsSpan(f.params), wrong_shape), ConfigError);
  data::Dataset sparse = f.data;
  sparse.is_sparse = true;
  sparse.sparse.resize(sparse.rows(), sparse.dense.cols());
  sparse.dense.resize(0, 0);
  EXPECT_THROW(call(sparse), ConfigError);
  data::Dataset many_classes = f.data;
  for (int c = 5; c < 7; ++c) many_classes.class_names.push_back(std::to_string(c));
  EXPECT_THROW(call(many_classes), ConfigError);
}

TEST(CnnModelTest, InitialParamsAreDeterministic) {
  const CnnFixture f;
  EXPECT_EQ(f.model.InitialParams(4), f.params);
  EXPECT_NE(f.model.InitialParams(5), f.params);
  EXPECT_EQ(f.params.size(), f.model.NumParams());
}

TEST(CnnModelTest, RejectsInvalidOptions) {
  EXPECT_THROW(CnnModel(SmallArchitecture(), {.threads = 0}), ConfigError);
  EXPECT_THROW(CnnModel(SmallArchitecture(), {.chunk_size = -1}), ConfigError);
  EXPECT_THROW(MakeLeNet5({.threads = 1000}), ConfigError);
}

}  // namespace
}  // namespace asyncdp::models
