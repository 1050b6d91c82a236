// The reference-optimum solvers (models/reference_optimum.h) and the convergence measures
// (models/convergence_measures.h). Optimality is checked through the model's own double-precision gradient
// path (not the solver's code), and the geometric median against closed forms: the 1-D median, the
// centre of a symmetric configuration, and a Fermat point that is a data point.
#include "models/reference_optimum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/random.h"
#include "data/libsvm.h"
#include "models/convergence_measures.h"
#include "models/double_path.h"
#include "models/factory.h"
#include "tests/models/synthetic_data.h"
#include "tests/test_data.h"

namespace asyncdp::models {
namespace {

std::vector<const data::Dataset*> PartsOf(const std::vector<data::Dataset>& shards) {
  std::vector<const data::Dataset*> parts;
  for (const auto& shard : shards) parts.push_back(&shard);
  return parts;
}

// ||(1/N) Σ_r ∇f(w; x_r)|| through DoublePrecisionPath::ClippedGradientSumDouble (unclipped).
double ModelGradientNorm(const Model& model, const std::vector<const data::Dataset*>& parts,
                         const Eigen::VectorXd& w) {
  const auto& path = dynamic_cast<const DoublePrecisionPath&>(model);
  std::vector<double> total(w.size(), 0.0), g(w.size());
  int64_t n = 0;
  for (const data::Dataset* part : parts) {
    std::vector<int64_t> rows(part->rows());
    std::iota(rows.begin(), rows.end(), 0);
    path.ClippedGradientSumDouble(std::span<const double>(w.data(), w.size()), *part, rows, kNoClip, g);
    for (int64_t j = 0; j < w.size(); ++j) total[j] += g[j];
    n += part->rows();
  }
  double sq = 0.0;
  for (const double t : total) sq += t * t;
  return std::sqrt(sq) / static_cast<double>(n);
}

// F(w) = mean of ExampleLossDouble over every row of every part.
double ModelObjective(const Model& model, const std::vector<const data::Dataset*>& parts,
                      const Eigen::VectorXd& w) {
  const auto& path = dynamic_cast<const DoublePrecisionPath&>(model);
  double sum = 0.0;
  int64_t n = 0;
  for (const data::Dataset* part : parts) {
    for (int64_t r = 0; r < part->rows(); ++r) {
      sum += path.ExampleLossDouble(std::span<const double>(w.data(), w.size()), *part, r);
    }
    n += part->rows();
  }
  return sum / static_cast<double>(n);
}

// The synthetic labels come from a planted linear rule (separable); flipping every 4th label makes the
// unregularised logistic objective have a finite minimiser.
data::Dataset NoisyLabels(data::Dataset data) {
  for (size_t r = 0; r < data.labels.size(); r += 4) data.labels[r] = 1 - data.labels[r];
  return data;
}

struct LogisticCase {
  std::string name;
  ModelOptions options;
  bool sparse = true;
};

std::vector<LogisticCase> LogisticCases() {
  std::vector<LogisticCase> cases;
  auto add = [&](std::string name, std::string kind, double lambda, bool sparse) -> ModelOptions& {
    LogisticCase c;
    c.name = std::move(name);
    c.options.kind = std::move(kind);
    c.options.l2_lambda = lambda;
    c.sparse = sparse;
    cases.push_back(c);
    return cases.back().options;
  };
  add("logistic_l2_sparse", "logistic_l2", 0.05, true);
  add("logistic_l2_dense_unregularised_bias", "logistic_l2", 0.01, false).regularize_bias = false;
  {
    ModelOptions& o = add("logistic_l2_literal_dense", "logistic_l2", 2.0, false);
    o.regularizer_convention = RegularizerConvention::kLiteral;
    o.regularizer_num_records = 40;
  }
  add("logistic_sparse", "logistic", 0.0, true);
  add("logistic_dense", "logistic", 0.0, false);
  return cases;
}

class LogisticReferenceTest : public ::testing::TestWithParam<LogisticCase> {};

TEST_P(LogisticReferenceTest, NewtonReachesTheToleranceOnTheModelsOwnGradient) {
  const LogisticCase& c = GetParam();
  // Three client shards of unequal size: the objective is the mean over all their rows.
  const std::vector<data::Dataset> shards = {
      NoisyLabels(synthetic::MakeSyntheticData(501, 70, 11, 2, c.sparse)),
      NoisyLabels(synthetic::MakeSyntheticData(502, 55, 11, 2, c.sparse)),
      NoisyLabels(synthetic::MakeSyntheticData(503, 64, 11, 2, c.sparse))};
  const auto parts = PartsOf(shards);
  const auto model = MakeModel(c.options, 11, 2);
  ASSERT_TRUE(HasReferenceSolver(*model));
  const ReferenceOptimum ref = ComputeReferenceOptimum(*model, parts);
  EXPECT_TRUE(ref.converged);
  EXPECT_EQ(ref.method, "newton_cg");
  EXPECT_EQ(ref.model, model->Name());
  EXPECT_EQ(ref.records, 70 + 55 + 64);
  EXPECT_LE(ref.gradient_norm, 1e-10);
  EXPECT_LT(ref.iterations, 40);
  // The objective and gradient the solver used are the model's: its own double path agrees.
  EXPECT_LE(ModelGradientNorm(*model, parts, ref.params), 1e-9);
  EXPECT_NEAR(ref.objective, ModelObjective(*model, parts, ref.params), 1e-13);
  EXPECT_NEAR(ref.evaluated_objective, ref.objective, 1e-6);
  // And w* is a minimum: random perturbations only increase F.
  RandomStream stream(StreamKey{504, 0, 0, StreamPurpose::kTest});
  for (int k = 0; k < 10; ++k) {
    Eigen::VectorXd delta(ref.params.size());
    for (int64_t j = 0; j < delta.size(); ++j) delta[j] = 1e-3 * stream.NextNormal();
    EXPECT_GT(ModelObjective(*model, parts, ref.params + delta), ref.objective);
  }
}

INSTANTIATE_TEST_SUITE_P(Logistic, LogisticReferenceTest, ::testing::ValuesIn(LogisticCases()),
                         [](const ::testing::TestParamInfo<LogisticCase>& info) { return info.param.name; });

TEST(LogisticReferenceTest, SplittingTheRowsIntoShardsDoesNotChangeTheOptimum) {
  const data::Dataset all = NoisyLabels(synthetic::MakeSyntheticData(505, 90, 7, 2, true));
  std::vector<int64_t> first(40), second(50);
  std::iota(first.begin(), first.end(), 0);
  std::iota(second.begin(), second.end(), 40);
  const std::vector<data::Dataset> shards = {data::Subset(all, first), data::Subset(all, second)};
  ModelOptions options;
  options.kind = "logistic_l2";
  options.l2_lambda = 0.02;
  const auto model = MakeModel(options, 7, 2);
  const std::vector<const data::Dataset*> whole = {&all};
  const ReferenceOptimum a = ComputeReferenceOptimum(*model, whole);
  const ReferenceOptimum b = ComputeReferenceOptimum(*model, PartsOf(shards));
  EXPECT_LT((a.params - b.params).norm(), 1e-9);
  EXPECT_NEAR(a.objective, b.objective, 1e-14);
}

// a9a with the paper's λ = 1/N (strongly convex) and without (plain convex): both converge on real data.
TEST(LogisticReferenceTest, ConvergesOnA9a) {
  const std::string path = asyncdp::testing::SharedFile("datasets/libsvm/a9a.gz");
  ASSERT_FALSE(path.empty());
  data::LibsvmOptions libsvm;
  libsvm.num_features = 123;
  const data::Dataset train = data::ReadLibsvm(path, libsvm);
  const std::vector<const data::Dataset*> parts = {&train};
  for (const double lambda : {1.0 / static_cast<double>(train.rows()), 0.0}) {
    ModelOptions options;
    options.kind = lambda > 0 ? "logistic_l2" : "logistic";
    options.l2_lambda = lambda;
    const auto model = MakeModel(options, 123, 2);
    const ReferenceOptimum ref = ComputeReferenceOptimum(*model, parts);
    EXPECT_TRUE(ref.converged) << options.kind << ": ||grad|| = " << ref.gradient_norm;
    EXPECT_LE(ModelGradientNorm(*model, parts, ref.params), 1e-9) << options.kind;
    // Logistic regression on a9a: training loss about 0.32-0.33 (well below ln 2 = 0.693).
    EXPECT_GT(ref.objective, 0.3) << options.kind;
    EXPECT_LT(ref.objective, 0.34) << options.kind;
  }
}

// ---- geometric median -------------------------------------------------------------------------------

data::Dataset DenseRows(const std::vector<std::vector<float>>& rows) {
  data::Dataset d;
  d.is_sparse = false;
  d.class_names = {"0"};
  d.dense.resize(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t j = 0; j < rows[r].size(); ++j) d.dense(r, j) = rows[r][j];
    d.labels.push_back(0);
  }
  return d;
}

ReferenceOptimum MedianOf(const data::Dataset& data) {
  ModelOptions options;
  options.kind = "geometric_median";
  const auto model = MakeModel(options, data.features(), 1);
  const std::vector<const data::Dataset*> parts = {&data};
  return ComputeReferenceOptimum(*model, parts);
}

TEST(GeometricMedianReferenceTest, OneDimensionalMedianIsTheMiddleValue) {
  // Odd count: the median is the middle data point, where Weiszfeld needs the Vardi-Zhang step.
  const data::Dataset odd = DenseRows({{3.0f}, {-1.0f}, {10.0f}, {2.0f}, {7.5f}, {0.25f}, {4.0f}});
  const ReferenceOptimum ref = MedianOf(odd);
  EXPECT_TRUE(ref.converged);
  EXPECT_EQ(ref.method, "weiszfeld");
  EXPECT_NEAR(ref.params[0], 3.0, 1e-9);
  const double expected = (0.0 + 4.0 + 7.0 + 1.0 + 4.5 + 2.75 + 1.0) / 7.0;  // Σ |x − 3| / 7
  EXPECT_NEAR(ref.objective, expected, 1e-9);
}

TEST(GeometricMedianReferenceTest, SymmetricPointsHaveTheirCentreAsMedian) {
  // Corners of a square around (1, 2) and a regular tetrahedron's vertices in 3-D.
  const data::Dataset square = DenseRows({{0.0f, 1.0f}, {2.0f, 1.0f}, {0.0f, 3.0f}, {2.0f, 3.0f}});
  const ReferenceOptimum a = MedianOf(square);
  EXPECT_TRUE(a.converged);
  EXPECT_NEAR(a.params[0], 1.0, 1e-9);
  EXPECT_NEAR(a.params[1], 2.0, 1e-9);
  EXPECT_NEAR(a.objective, std::sqrt(2.0), 1e-9);
  const data::Dataset tetra = DenseRows({{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}});
  const ReferenceOptimum b = MedianOf(tetra);
  EXPECT_TRUE(b.converged);
  EXPECT_LT(b.params.norm(), 1e-9);
  EXPECT_NEAR(b.objective, std::sqrt(3.0), 1e-9);
}

TEST(GeometricMedianReferenceTest, ObtuseTriangleHasItsObtuseVertexAsFermatPoint) {
  // The angle at (0, 0) is about 168° >= 120°, so the Fermat-Weber point is that vertex — a data point.
  const data::Dataset triangle = DenseRows({{0.0f, 0.0f}, {4.0f, 0.0f}, {-3.0f, 0.7f}});
  const ReferenceOptimum ref = MedianOf(triangle);
  EXPECT_TRUE(ref.converged);
  EXPECT_LT(ref.params.norm(), 1e-9);
  EXPECT_NEAR(ref.objective, (4.0 + std::hypot(3.0, 0.7)) / 3.0, 1e-9);
}

TEST(GeometricMedianReferenceTest, RandomCloudSatisfiesTheOptimalityCondition) {
  const data::Dataset cloud = synthetic::MakeSyntheticData(506, 300, 6, 2, /*sparse=*/true, 3);
  ModelOptions options;
  options.kind = "geometric_median";
  const auto model = MakeModel(options, 6, 2);
  const std::vector<const data::Dataset*> parts = {&cloud};
  const ReferenceOptimum ref = ComputeReferenceOptimum(*model, parts);
  ASSERT_TRUE(ref.converged) << ref.gradient_norm;
  // Sparse rows share many zero coordinates but the median is off the data points here: the model's own
  // (sub)gradient vanishes there, and F increases in every direction.
  EXPECT_LE(ModelGradientNorm(*model, parts, ref.params), 1e-9);
  EXPECT_NEAR(ref.objective, ModelObjective(*model, parts, ref.params), 1e-12);
  RandomStream stream(StreamKey{507, 0, 0, StreamPurpose::kTest});
  for (int k = 0; k < 10; ++k) {
    Eigen::VectorXd delta(6);
    for (int j = 0; j < 6; ++j) delta[j] = 1e-3 * stream.NextNormal();
    EXPECT_GT(ModelObjective(*model, parts, ref.params + delta), ref.objective);
  }
}

// ---- errors and the convergence measures ------------------------------------------------------------

TEST(ReferenceOptimumTest, ModelsWithoutASolverAndBadTolerancesAreRejected) {
  const data::Dataset data = synthetic::MakeSyntheticData(508, 20, 5, 2, true);
  const std::vector<const data::Dataset*> parts = {&data};
  for (const char* kind : {"svm", "linear", "mlp"}) {
    ModelOptions options;
    options.kind = kind;
    const auto model = MakeModel(options, 5, 2);
    EXPECT_FALSE(HasReferenceSolver(*model)) << kind;
    try {
      ComputeReferenceOptimum(*model, parts);
      ADD_FAILURE() << kind;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.where(), "model.kind");
    }
  }
  ModelOptions options;
  options.kind = "logistic_l2";
  options.l2_lambda = 0.1;
  const auto model = MakeModel(options, 5, 2);
  for (const double tolerance : {0.0, -1.0, std::nan("")}) {
    try {
      ComputeReferenceOptimum(*model, parts, {.gradient_tolerance = tolerance});
      ADD_FAILURE() << tolerance;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.where(), "reference.gradient_tolerance");
    }
  }
}

TEST(ConvergenceMeasuresTest, SuboptimalityAndDistanceVanishAtTheOptimumOnly) {
  const std::vector<data::Dataset> shards = {NoisyLabels(synthetic::MakeSyntheticData(509, 60, 9, 2, true)),
                                             NoisyLabels(synthetic::MakeSyntheticData(510, 61, 9, 2, true))};
  const auto parts = PartsOf(shards);
  ModelOptions options;
  options.kind = "logistic_l2";
  options.l2_lambda = 0.05;
  const auto model = MakeModel(options, 9, 2);
  const ReferenceOptimum ref = ComputeReferenceOptimum(*model, parts);
  const Eigen::VectorXf at = ref.params.cast<float>();
  const ConvergencePoint zero = MeasureConvergence(*model, parts, ref, synthetic::AsSpan(at));
  EXPECT_EQ(zero.suboptimality, 0.0);  // the same float evaluation on both sides
  EXPECT_LT(zero.distance_sq, 1e-12);
  const Eigen::VectorXf start = model->InitialParams(1);
  const ConvergencePoint far = MeasureConvergence(*model, parts, ref, synthetic::AsSpan(start));
  EXPECT_GT(far.suboptimality, 1e-3);
  EXPECT_NEAR(far.distance_sq, (start.cast<double>() - ref.params).squaredNorm(), 1e-9);
  // Strong convexity with modulus μ = λ: F(w) − F* >= (μ/2)||w − w*||².
  EXPECT_GE(far.suboptimality, 0.5 * 0.05 * far.distance_sq * (1 - 1e-6));
  EXPECT_NEAR(ObjectiveValue(*model, parts, synthetic::AsSpan(start)),
              ModelObjective(*model, parts, start.cast<double>()), 1e-6);
}

TEST(ConvergenceMeasuresTest, GradientNormIsTheFullUnclippedGradientForAnyChunkSize) {
  const data::Dataset data = synthetic::MakeSyntheticData(511, 37, 6, 3, false);
  ModelOptions options;
  options.kind = "mlp";
  options.hidden = {5};
  const auto model = MakeModel(options, 6, 3);
  const Eigen::VectorXf params = model->InitialParams(4);
  const std::vector<const data::Dataset*> parts = {&data};
  const double expected = ModelGradientNorm(*model, parts, params.cast<double>());
  EXPECT_GT(expected, 0.0);
  for (const int64_t chunk : {1, 8, 37, 100}) {
    const auto workspace = model->NewWorkspace(chunk);
    EXPECT_NEAR(GradientNorm(*model, data, synthetic::AsSpan(params), *workspace, chunk), expected,
                1e-5 * expected)
        << chunk;
  }
}

}  // namespace
}  // namespace asyncdp::models
