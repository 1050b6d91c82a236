#include "data/idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/data/temp_files.h"
#include "tests/test_data.h"

namespace asyncdp::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing::BigEndian;

// A well-formed images file: n images of h × w, pixel i = i mod 256.
std::string ImagesFile(uint32_t n, uint32_t h, uint32_t w) {
  std::string bytes = BigEndian(kIdxImagesMagic) + BigEndian(n) + BigEndian(h) + BigEndian(w);
  for (uint32_t i = 0; i < n * h * w; ++i) bytes.push_back(static_cast<char>(i % 256));
  return bytes;
}

std::string LabelsFile(const std::vector<uint8_t>& labels) {
  std::string bytes = BigEndian(kIdxLabelsMagic) + BigEndian(static_cast<uint32_t>(labels.size()));
  for (uint8_t l : labels) bytes.push_back(static_cast<char>(l));
  return bytes;
}

// Expects ParseIdxPair to throw BinaryFormatError in `file` at `offset` with `message` in its text.
void ExpectIdxError(const std::string& images, const std::string& labels, const std::string& file,
                    int64_t offset, const std::string& message) {
  try {
    ParseIdxPair(images, "images.idx", labels, "labels.idx");
    ADD_FAILURE() << "expected BinaryFormatError containing: " << message;
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.byte_offset(), offset);
    EXPECT_THAT(e.message(), HasSubstr(message));
  }
}

TEST(IdxTest, ParsesImagesAsScaledDenseRowsWithLabels) {
  const Dataset d = ParseIdxPair(ImagesFile(3, 2, 4), "images.idx", LabelsFile({7, 0, 9}), "labels.idx");
  EXPECT_EQ(d.format, DataFormat::kIdx);
  EXPECT_FALSE(d.is_sparse);
  EXPECT_EQ(d.rows(), 3);
  EXPECT_EQ(d.features(), 8);
  EXPECT_EQ(d.image.channels, 1);
  EXPECT_EQ(d.image.height, 2);
  EXPECT_EQ(d.image.width, 4);
  EXPECT_THAT(d.labels, ElementsAre(7, 0, 9));
  EXPECT_THAT(d.class_names, ElementsAre("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"));
  EXPECT_FLOAT_EQ(d.dense(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(d.dense(0, 5), 5.0f / 255.0f);  // row-major: pixel (1, 1) of image 0
  EXPECT_FLOAT_EQ(d.dense(2, 7), 23.0f / 255.0f);
  EXPECT_EQ(d.nnz(), 23);  // only pixel 0 of the 24 is zero
}

TEST(IdxTest, MnistTestSet) {
  const std::string images = testing::SharedFile("datasets/mnist/t10k-images-idx3-ubyte.gz");
  const std::string labels = testing::SharedFile("datasets/mnist/t10k-labels-idx1-ubyte.gz");
  ASSERT_FALSE(images.empty() || labels.empty());
  const Dataset d = LoadIdxPair(images, labels);
  EXPECT_EQ(d.rows(), 10000);
  EXPECT_EQ(d.features(), 784);
  EXPECT_EQ(d.image.height, 28);
  EXPECT_EQ(d.image.width, 28);
  EXPECT_THAT(ClassCounts(d), ElementsAre(980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009));
  EXPECT_THAT(std::vector<int32_t>(d.labels.begin(), d.labels.begin() + 5), ElementsAre(7, 2, 1, 0, 4));
  EXPECT_EQ(d.nnz(), 1511219);
  // Plain loops rather than Eigen reductions: GCC 12 warns falsely (-Wmaybe-uninitialized) inside the
  // AVX-512 intrinsics those expand to under -march=native.
  const float* pixels = d.dense.data();
  const int64_t count = d.dense.size();
  const auto [min_it, max_it] = std::minmax_element(pixels, pixels + count);
  EXPECT_EQ(*min_it, 0.0f);
  EXPECT_EQ(*max_it, 1.0f);
  // Σ pixels / 255, pixel sum 264923200 computed from the raw bytes.
  EXPECT_NEAR(std::accumulate(pixels, pixels + count, 0.0), 264923200.0 / 255.0, 1.0);
}

TEST(IdxTest, FashionMnistTrainAndTest) {
  const std::string train_images = testing::FashionMnistFile("train-images-idx3-ubyte.gz");
  const std::string train_labels = testing::FashionMnistFile("train-labels-idx1-ubyte.gz");
  const std::string test_images = testing::FashionMnistFile("t10k-images-idx3-ubyte.gz");
  const std::string test_labels = testing::FashionMnistFile("t10k-labels-idx1-ubyte.gz");
  ASSERT_FALSE(train_images.empty() || train_labels.empty() || test_images.empty() || test_labels.empty());

  const Dataset train = LoadIdxPair(train_images, train_labels);
  EXPECT_EQ(train.rows(), 60000);
  EXPECT_EQ(train.features(), 784);
  EXPECT_THAT(ClassCounts(train), ::testing::Each(6000));
  EXPECT_THAT(std::vector<int32_t>(train.labels.begin(), train.labels.begin() + 5),
              ElementsAre(9, 0, 0, 3, 0));
  EXPECT_EQ(train.nnz(), 23423502);

  const Dataset test = LoadIdxPair(test_images, test_labels);
  EXPECT_EQ(test.rows(), 10000);
  EXPECT_THAT(ClassCounts(test), ::testing::Each(1000));
  EXPECT_EQ(test.nnz(), 3920817);
}

TEST(IdxTest, IdxMagicReadsTheFirstFourBytesBigEndian) {
  EXPECT_EQ(IdxMagic(ImagesFile(1, 1, 1)), kIdxImagesMagic);
  EXPECT_EQ(IdxMagic(LabelsFile({1})), kIdxLabelsMagic);
  EXPECT_EQ(IdxMagic("abc"), 0u);
}

TEST(IdxErrorsTest, WrongImagesMagic) {
  ExpectIdxError(
      LabelsFile({1}), LabelsFile({1}), "images.idx", 0,
      "expected IDX magic 0x00000803 (unsigned-byte images, 3 dimensions), got 0x00000801 (this is "
      "an IDX labels file)");
}

TEST(IdxErrorsTest, WrongLabelsMagic) {
  ExpectIdxError(ImagesFile(1, 2, 2), "GIF89a...", "labels.idx", 0, "expected IDX magic 0x00000801");
}

TEST(IdxErrorsTest, NonByteElementType) {
  std::string images = ImagesFile(1, 2, 2);
  images[2] = 0x0D;  // float elements
  ExpectIdxError(images, LabelsFile({1}), "images.idx", 0, "got 0x00000d03");
}

TEST(IdxErrorsTest, FileShorterThanTheMagic) {
  ExpectIdxError(std::string("\0\0", 2), LabelsFile({1}), "images.idx", 2,
                 "expected a 4-byte IDX magic number, but the file has only 2 bytes");
}

TEST(IdxErrorsTest, TruncatedHeader) {
  ExpectIdxError(ImagesFile(1, 2, 2).substr(0, 10), LabelsFile({1}), "images.idx", 10,
                 "truncated IDX header: expected 3 4-byte dimension sizes");
}

TEST(IdxErrorsTest, ShortImageFile) {
  const std::string images = ImagesFile(3, 2, 2);
  ExpectIdxError(
      images.substr(0, images.size() - 1), LabelsFile({1, 2, 3}), "images.idx", 16 + 11,
      "truncated IDX file: the header declares 3 x 2 x 2 bytes of data, but the file ends after 11");
}

TEST(IdxErrorsTest, HeaderWithAbsurdDimensionsIsTruncatedNotAnOverflow) {
  std::string images = BigEndian(kIdxImagesMagic) + BigEndian(0xffffffffu) + BigEndian(0xffffffffu) +
                       BigEndian(0xffffffffu) + "xy";
  ExpectIdxError(images, LabelsFile({1}), "images.idx", 18, "truncated IDX file");
}

TEST(IdxErrorsTest, TrailingBytesAfterTheData) {
  ExpectIdxError(ImagesFile(1, 2, 2) + "!", LabelsFile({1}), "images.idx", 20,
                 "expected the end of the IDX file after 20 bytes, found 1 more bytes");
}

TEST(IdxErrorsTest, ZeroDimension) {
  ExpectIdxError(ImagesFile(1, 0, 2), LabelsFile({1}), "images.idx", 8, "IDX dimension 1 is 0");
}

TEST(IdxErrorsTest, CountMismatchBetweenImagesAndLabels) {
  ExpectIdxError(ImagesFile(3, 2, 2), LabelsFile({1, 2}), "labels.idx", 4,
                 "label count 2 does not match the image count 3 of images.idx");
}

TEST(IdxErrorsTest, LabelOutOfRange) {
  ExpectIdxError(ImagesFile(3, 2, 2), LabelsFile({1, 10, 2}), "labels.idx", 9,
                 "label 10 of item 1 is out of range 0..9");
}

TEST(IdxErrorsTest, NumClassesBoundsLabels) {
  IdxOptions options;
  options.num_classes = 2;
  EXPECT_THROW(ParseIdxPair(ImagesFile(1, 1, 1), "i", LabelsFile({2}), "l", options), BinaryFormatError);
  EXPECT_THAT(ParseIdxPair(ImagesFile(1, 1, 1), "i", LabelsFile({1}), "l", options).class_names,
              ElementsAre("0", "1"));
  options.num_classes = 0;
  EXPECT_THROW(ParseIdxPair(ImagesFile(1, 1, 1), "i", LabelsFile({0}), "l", options), ConfigError);
}

TEST(IdxLabelsPathTest, FollowsTheMnistNamingConvention) {
  testing::TempDir dir;
  const std::string gz_images = dir.Write("t10k-images-idx3-ubyte.gz", "");
  const std::string gz_labels = dir.Write("t10k-labels-idx1-ubyte.gz", "");
  EXPECT_EQ(IdxLabelsPathFor(gz_images), gz_labels);
  // Labels present only uncompressed beside compressed images (and vice versa).
  const std::string images = dir.Write("train-images-idx3-ubyte.gz", "");
  const std::string labels = dir.Write("train-labels-idx1-ubyte", "");
  EXPECT_EQ(IdxLabelsPathFor(images), labels);
  EXPECT_EQ(IdxLabelsPathFor(dir.Path("x-images.idx3-ubyte")), dir.Path("x-labels.idx1-ubyte"));
  EXPECT_EQ(IdxLabelsPathFor(dir.Path("pictures.bin")), "");
}

}  // namespace
}  // namespace asyncdp::data
