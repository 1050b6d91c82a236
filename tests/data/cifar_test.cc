// CIFAR-10 binary batches generated in the test (the real files exceed the shared store's size limit).
#include "data/cifar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "tests/data/temp_files.h"

namespace asyncdp::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Record r: label labels[r]; pixel i of the record = (r * 7 + i) mod 256, so every byte is traceable.
std::string Batch(const std::vector<uint8_t>& labels) {
  std::string bytes;
  for (size_t r = 0; r < labels.size(); ++r) {
    bytes.push_back(static_cast<char>(labels[r]));
    for (int64_t i = 0; i < kCifar10PixelBytes; ++i) bytes.push_back(static_cast<char>((r * 7 + i) % 256));
  }
  return bytes;
}

void ExpectCifarError(const std::string& bytes, int64_t offset, const std::string& message) {
  try {
    ParseCifar10(bytes, "batch.bin");
    ADD_FAILURE() << "expected BinaryFormatError containing: " << message;
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.file(), "batch.bin");
    EXPECT_EQ(e.byte_offset(), offset);
    EXPECT_THAT(e.message(), HasSubstr(message));
  }
}

TEST(CifarTest, RecordsBecomeScaledChwRows) {
  const Dataset d = ParseCifar10(Batch({3, 9, 0}), "batch.bin");
  EXPECT_EQ(d.format, DataFormat::kCifar);
  EXPECT_FALSE(d.is_sparse);
  EXPECT_EQ(d.rows(), 3);
  EXPECT_EQ(d.features(), 3072);
  EXPECT_EQ(d.image.channels, 3);
  EXPECT_EQ(d.image.height, 32);
  EXPECT_EQ(d.image.width, 32);
  EXPECT_THAT(d.labels, ElementsAre(3, 9, 0));
  EXPECT_EQ(d.num_classes(), 10);
  // Row 1: red (0,0) is pixel byte 0, green (0,0) byte 1024, blue (31,31) byte 3071.
  EXPECT_FLOAT_EQ(d.dense(1, 0), 7.0f / 255.0f);
  EXPECT_FLOAT_EQ(d.dense(1, 1024), static_cast<float>((7 + 1024) % 256) / 255.0f);
  EXPECT_FLOAT_EQ(d.dense(1, 3071), static_cast<float>((7 + 3071) % 256) / 255.0f);
  EXPECT_FLOAT_EQ(d.dense(2, 255 - 14), 1.0f);
}

TEST(CifarTest, SeveralBatchFilesAreConcatenatedInOrder) {
  testing::TempDir dir;
  const std::vector<std::string> paths = {dir.Write("data_batch_1.bin", Batch({1, 2})),
                                          dir.Write("data_batch_2.bin.gz", testing::GzipBytes(Batch({5})))};
  const Dataset d = ReadCifar10(paths);
  EXPECT_EQ(d.rows(), 3);
  EXPECT_THAT(d.labels, ElementsAre(1, 2, 5));
  EXPECT_FLOAT_EQ(d.dense(2, 0), 0.0f);  // record 0 of the second file
  EXPECT_FLOAT_EQ(d.dense(1, 0), 7.0f / 255.0f);
  EXPECT_EQ(d.source, paths[0] + ", " + paths[1]);
}

TEST(CifarTest, ABadLaterFileFailsBeforeAnyConversion) {
  testing::TempDir dir;
  const std::vector<std::string> paths = {dir.Write("a.bin", Batch({1})), dir.Write("b.bin", Batch({11}))};
  try {
    ReadCifar10(paths);
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.file(), paths[1]);
    EXPECT_EQ(e.byte_offset(), 0);
  }
}

TEST(CifarErrorsTest, LabelOutOfRange) {
  ExpectCifarError(Batch({0, 1, 10}), 2 * kCifar10RecordBytes, "label 10 of record 2 is out of range 0..9");
}

TEST(CifarErrorsTest, TruncatedRecord) {
  const std::string bytes = Batch({0, 1});
  ExpectCifarError(bytes.substr(0, bytes.size() - 100), kCifar10RecordBytes,
                   "truncated CIFAR-10 record: the file has 6046 bytes, not a multiple of 3073");
}

TEST(CifarErrorsTest, EmptyFile) { ExpectCifarError("", 0, "the file is empty"); }

TEST(CifarErrorsTest, NoPathsIsAnInputError) { EXPECT_THROW(ReadCifar10({}), InputError); }

}  // namespace
}  // namespace asyncdp::data
