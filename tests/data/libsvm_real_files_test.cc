// The real LIBSVM data sets (a9a, a9a.t from the repository's datasets/, the others from the shared data
// folder beside the checkout): row, label, feature and nnz counts as listed in the data sets' READMEs (nnz
// totals computed independently from the decompressed text).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "data/libsvm.h"
#include "tests/test_data.h"

namespace asyncdp::data {
namespace {

using ::testing::ElementsAre;
using testing::SharedFile;

struct RowStats {
  int64_t min_nnz = std::numeric_limits<int64_t>::max();
  int64_t max_nnz = 0;
  int64_t empty_rows = 0;
  int64_t explicit_zeros = 0;
  int64_t max_index = 0;  // 1-based, as in the file
  float min_value = std::numeric_limits<float>::infinity();
  float max_value = -std::numeric_limits<float>::infinity();
};

RowStats Stats(const Dataset& d) {
  RowStats s;
  const int32_t* outer = d.sparse.outerIndexPtr();
  for (int64_t r = 0; r < d.rows(); ++r) {
    const int64_t n = outer[r + 1] - outer[r];
    s.min_nnz = std::min(s.min_nnz, n);
    s.max_nnz = std::max(s.max_nnz, n);
    s.empty_rows += n == 0;
  }
  for (int64_t p = 0; p < d.nnz(); ++p) {
    const float v = d.sparse.valuePtr()[p];
    s.explicit_zeros += v == 0.0f;
    s.min_value = std::min(s.min_value, v);
    s.max_value = std::max(s.max_value, v);
    s.max_index = std::max<int64_t>(s.max_index, d.sparse.innerIndexPtr()[p] + 1);
  }
  return s;
}

TEST(LibsvmRealFilesTest, A9aTrainAndTestShareFeaturesAndClasses) {
  const std::string train_path = SharedFile("datasets/libsvm/a9a.gz");
  const std::string test_path = SharedFile("datasets/libsvm/a9a.t.gz");
  ASSERT_FALSE(train_path.empty() || test_path.empty());

  const Dataset train = ReadLibsvm(train_path);
  EXPECT_EQ(train.rows(), 32561);
  EXPECT_EQ(train.features(), 123);
  EXPECT_EQ(train.nnz(), 451592);
  EXPECT_THAT(train.class_names, ElementsAre("-1", "+1"));
  EXPECT_THAT(ClassCounts(train), ElementsAre(24720, 7841));
  const RowStats s = Stats(train);
  EXPECT_EQ(s.min_nnz, 11);
  EXPECT_EQ(s.max_nnz, 14);
  EXPECT_EQ(s.max_index, 123);
  EXPECT_EQ(s.min_value, 1.0f);
  EXPECT_EQ(s.max_value, 1.0f);

  // a9a.t never uses feature 123: only the training set's feature count gives it the same width.
  EXPECT_EQ(ReadLibsvm(test_path).features(), 122);
  const Dataset test = ReadLibsvmLike(test_path, train);
  EXPECT_EQ(test.rows(), 16281);
  EXPECT_EQ(test.features(), 123);
  EXPECT_EQ(test.nnz(), 225731);
  EXPECT_THAT(test.class_names, ElementsAre("-1", "+1"));
  EXPECT_THAT(ClassCounts(test), ElementsAre(12435, 3846));
  const RowStats t = Stats(test);
  EXPECT_EQ(t.min_nnz, 11);
  EXPECT_EQ(t.max_nnz, 14);
  EXPECT_EQ(t.max_index, 122);
}

TEST(LibsvmRealFilesTest, W8aHasRowsWithoutFeatures) {
  const std::string path = SharedFile("datasets/libsvm/w8a.gz");
  ASSERT_FALSE(path.empty());
  const Dataset d = ReadLibsvm(path);
  EXPECT_EQ(d.rows(), 49749);
  EXPECT_EQ(d.features(), 300);
  EXPECT_EQ(d.nnz(), 579586);
  EXPECT_THAT(d.class_names, ElementsAre("-1", "+1"));
  EXPECT_THAT(ClassCounts(d), ElementsAre(48270, 1479));
  const RowStats s = Stats(d);
  EXPECT_EQ(s.empty_rows, 4203);
  EXPECT_EQ(s.min_nnz, 0);
  EXPECT_EQ(s.max_nnz, 114);
  EXPECT_EQ(s.max_index, 300);
}

TEST(LibsvmRealFilesTest, PhishingHasZeroOneLabelsAndUnitNormRows) {
  const std::string path = SharedFile("datasets/libsvm/phishing.gz");
  ASSERT_FALSE(path.empty());
  const Dataset d = ReadLibsvm(path);
  EXPECT_EQ(d.rows(), 11055);
  EXPECT_EQ(d.features(), 68);
  EXPECT_EQ(d.nnz(), 331650);
  EXPECT_THAT(d.class_names, ElementsAre("0", "1"));
  EXPECT_THAT(ClassCounts(d), ElementsAre(4898, 6157));
  const RowStats s = Stats(d);
  EXPECT_EQ(s.min_nnz, 30);
  EXPECT_EQ(s.max_nnz, 30);
  EXPECT_EQ(s.min_value, s.max_value);
  EXPECT_NEAR(s.min_value, 0.18257f, 1e-5f);  // 1/sqrt(30): every row normalised to unit length
}

TEST(LibsvmRealFilesTest, Ijcnn1TestFileMapsItsIntegerLabelsOntoTheDecimalTrainingLabels) {
  const std::string train_path = SharedFile("datasets/libsvm/ijcnn1.gz");
  const std::string test_path = SharedFile("datasets/libsvm/ijcnn1.t.gz");
  ASSERT_FALSE(train_path.empty() || test_path.empty());

  const Dataset train = ReadLibsvm(train_path);
  EXPECT_EQ(train.rows(), 49990);
  EXPECT_EQ(train.features(), 22);
  EXPECT_EQ(train.nnz(), 649870);  // 13 per row, the explicit zero included
  EXPECT_THAT(train.class_names, ElementsAre("-1.0", "1.0"));
  EXPECT_THAT(ClassCounts(train), ElementsAre(45137, 4853));
  const RowStats s = Stats(train);
  EXPECT_EQ(s.min_nnz, 13);
  EXPECT_EQ(s.max_nnz, 13);
  EXPECT_EQ(s.explicit_zeros, 1);
  EXPECT_FLOAT_EQ(s.min_value, -0.930435f);
  EXPECT_FLOAT_EQ(s.max_value, 1.0f);

  const Dataset test = ReadLibsvmLike(test_path, train);
  EXPECT_EQ(test.rows(), 91701);
  EXPECT_EQ(test.features(), 22);
  EXPECT_EQ(test.nnz(), 1192113);
  EXPECT_THAT(test.class_names, ElementsAre("-1.0", "1.0"));  // the training file's spelling
  EXPECT_THAT(ClassCounts(test), ElementsAre(82989, 8712));
  const RowStats t = Stats(test);
  EXPECT_EQ(t.min_nnz, 13);
  EXPECT_EQ(t.max_nnz, 13);
  EXPECT_EQ(t.explicit_zeros, 12);
  EXPECT_FLOAT_EQ(t.min_value, -1.321543f);
  EXPECT_FLOAT_EQ(t.max_value, 1.312081f);

  // Read on its own, the test file keeps its own spelling.
  EXPECT_THAT(ReadLibsvm(test_path).class_names, ElementsAre("-1", "1"));
}

}  // namespace
}  // namespace asyncdp::data
