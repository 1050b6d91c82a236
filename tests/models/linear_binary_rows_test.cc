// The linear models' binary-row path (models/linear_kernel.h, BinarySparseRows): on a data set whose stored
// values are all 1 it must give exactly what the general CSR path gives, bit for bit — clipped sums, norms,
// statistics, losses and evaluations, in float and in double — and data::Dataset::binary_values must be set
// only when every stored value is 1 (the reader, subsets, canary rows).
#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/sampling.h"
#include "data/dataset.h"
#include "data/libsvm.h"
#include "models/data_canary.h"
#include "models/double_path.h"
#include "models/factory.h"
#include "tests/test_data.h"

namespace asyncdp::models {
namespace {

data::Dataset A9a() {
  const std::string path = asyncdp::testing::SharedFile("datasets/libsvm/a9a.t.gz");
  EXPECT_FALSE(path.empty());
  return data::ReadLibsvm(path, {});
}

// Bitwise equality of two float or double vectors (EXPECT_EQ on floats would let -0 == +0 pass).
template <typename T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

struct Case {
  std::string kind;
  double l2 = 0.0;
};

TEST(BinaryRows, TheReaderMarksOneHotDataAndNothingElse) {
  const data::Dataset a9a = A9a();
  EXPECT_TRUE(a9a.binary_values);

  data::Dataset scaled = a9a;
  scaled.sparse.valuePtr()[3] = 0.5f;
  data::MarkBinaryValues(scaled);
  EXPECT_FALSE(scaled.binary_values);

  const std::vector<int64_t> rows = {5, 2, 9};
  EXPECT_TRUE(data::Subset(a9a, rows).binary_values);
  EXPECT_FALSE(data::Subset(scaled, rows).binary_values);

  // A canary row keeps the mark only if its values are 1 (zeros are not stored).
  EXPECT_TRUE(AppendRow(a9a, {{0, 1.0f}, {7, 0.0f}}, 1).binary_values);
  EXPECT_FALSE(AppendRow(a9a, {{0, 1.0f}, {7, 2.0f}}, 1).binary_values);
  EXPECT_TRUE(AddEmptyFeature(a9a).binary_values);
}

TEST(BinaryRows, EveryLinearModelGivesTheCsrPathsBits) {
  const data::Dataset binary = A9a();
  ASSERT_TRUE(binary.binary_values);
  data::Dataset general = binary;
  general.binary_values = false;  // the same matrix, read through SparseRows
  const int64_t d = binary.features();
  FixedSizeSampler sampler(binary.rows(), 11, 0);
  std::vector<int64_t> batch;
  sampler.Sample(0, 300, batch);  // more than one block of 64, with a partial last block

  for (const Case& c :
       std::vector<Case>{{"logistic"}, {"logistic_l2", 1e-3}, {"linear"}, {"svm"}, {"geometric_median"}}) {
    SCOPED_TRACE(c.kind);
    ModelOptions options;
    options.kind = c.kind;
    options.l2_lambda = c.l2;
    const auto model = MakeModel(options, d, binary.num_classes(), binary.image);
    const auto* path = dynamic_cast<const DoublePrecisionPath*>(model.get());
    ASSERT_NE(path, nullptr);
    const DoublePrecisionPath& double_path = *path;
    Eigen::VectorXf params = model->InitialParams(3);
    params += Eigen::VectorXf::LinSpaced(params.size(), -0.3f, 0.4f);  // moderate logits, a non-zero bias
    const std::span<const float> p(params.data(), static_cast<size_t>(params.size()));
    for (const double clip : {0.05, 100.0}) {  // every example clipped; none clipped
      auto ws = model->NewWorkspace(static_cast<int64_t>(batch.size()));
      std::vector<float> g1(model->NumParams()), g2(model->NumParams()), n1(batch.size()), n2(batch.size());
      const ClipStats s1 = model->ClippedGradientSum(p, binary, batch, clip, g1, *ws, n1);
      const ClipStats s2 = model->ClippedGradientSum(p, general, batch, clip, g2, *ws, n2);
      EXPECT_TRUE(SameBits(g1, g2));
      EXPECT_TRUE(SameBits(n1, n2));
      EXPECT_EQ(s1.clipped, s2.clipped);
      EXPECT_EQ(s1.norm_sum, s2.norm_sum);

      const std::vector<double> pd(params.begin(), params.end());
      std::vector<double> h1(pd.size()), h2(pd.size()), m1(batch.size()), m2(batch.size());
      double_path.ClippedGradientSumDouble(pd, binary, batch, clip, h1, m1);
      double_path.ClippedGradientSumDouble(pd, general, batch, clip, h2, m2);
      EXPECT_TRUE(SameBits(h1, h2));
      EXPECT_TRUE(SameBits(m1, m2));
    }
    const Evaluation e1 = model->Evaluate(p, binary), e2 = model->Evaluate(p, general);
    EXPECT_EQ(std::memcmp(&e1.loss, &e2.loss, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&e1.accuracy, &e2.accuracy, sizeof(double)), 0);  // NaN for the geometric median
    const std::vector<double> pd(params.begin(), params.end());
    EXPECT_EQ(double_path.ExampleLossDouble(pd, binary, 17), double_path.ExampleLossDouble(pd, general, 17));
  }
}

}  // namespace
}  // namespace asyncdp::models
