#include "data/load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

#include "core/error.h"
#include "data/cifar.h"
#include "data/file_contents.h"
#include "data/idx.h"
#include "tests/data/temp_files.h"
#include "tests/test_data.h"

namespace asyncdp::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;

std::string CifarBatch(int records) {
  std::string bytes;
  for (int r = 0; r < records; ++r) {
    bytes.push_back(static_cast<char>(r % 10));
    bytes.append(kCifar10PixelBytes, '\x80');
  }
  return bytes;
}

TEST(LoadTest, FormatNamesRoundTrip) {
  for (DataFormat f : {DataFormat::kAuto, DataFormat::kLibsvm, DataFormat::kIdx, DataFormat::kCifar}) {
    EXPECT_EQ(ParseDataFormat(ToString(f)), f);
  }
  try {
    ParseDataFormat("csv", "--format");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "--format");
    EXPECT_THAT(e.message(), HasSubstr("expected one of auto, libsvm, idx, cifar, got 'csv'"));
  }
}

// A data set made in memory (tests, benchmarks) says so, but no configuration can name that format.
TEST(LoadTest, SyntheticIsAFormatOfDataSetsMadeInMemoryNotOfFiles) {
  EXPECT_EQ(ToString(DataFormat::kSynthetic), "synthetic");
  EXPECT_EQ(Dataset{}.format, DataFormat::kSynthetic);
  EXPECT_THROW(ParseDataFormat("synthetic", "data.format"), ConfigError);
  DataLoadOptions options;
  options.format = DataFormat::kSynthetic;
  try {
    LoadDataset("/nonexistent/file", options);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "format");
    EXPECT_THAT(e.message(), HasSubstr("made in memory"));
  }
}

TEST(LoadTest, AutoDetectsGzippedLibsvm) {
  const std::string path = testing::SharedFile("datasets/libsvm/a9a.gz");
  ASSERT_FALSE(path.empty());
  const Dataset d = LoadDataset(path);
  EXPECT_EQ(d.format, DataFormat::kLibsvm);
  EXPECT_EQ(d.rows(), 32561);
  EXPECT_EQ(d.features(), 123);
}

TEST(LoadTest, DeclaredFeaturesReachTheLibsvmReader) {
  const std::string path = testing::SharedFile("datasets/libsvm/a9a.t.gz");
  ASSERT_FALSE(path.empty());
  DataLoadOptions options;
  options.num_features = 123;
  EXPECT_EQ(LoadDataset(path, options).features(), 123);
  options.num_features = 100;
  EXPECT_THROW(LoadDataset(path, options), ParseError);
}

TEST(LoadTest, AutoDetectsIdxAndFindsTheSiblingLabels) {
  const std::string images = testing::SharedFile("datasets/mnist/t10k-images-idx3-ubyte.gz");
  ASSERT_FALSE(images.empty());
  const Dataset d = LoadDataset(images);
  EXPECT_EQ(d.format, DataFormat::kIdx);
  EXPECT_EQ(d.rows(), 10000);
  EXPECT_EQ(d.features(), 784);
}

TEST(LoadTest, ExplicitLabelsPathOverridesTheSibling) {
  TempDir dir;
  const std::string header = std::string("\0\0\x08\x03\0\0\0\x02\0\0\0\x01\0\0\0\x01", 16);
  const std::string images = dir.Write("pictures", header + "\x10\x20");
  const std::string labels = dir.Write("answers", std::string("\0\0\x08\x01\0\0\0\x02\x04\x05", 10));
  DataLoadOptions options;
  options.labels_path = labels;
  const Dataset d = LoadDataset(images, options);
  EXPECT_THAT(d.labels, ElementsAre(4, 5));
  // Without --labels, a name outside the MNIST convention cannot be paired.
  try {
    LoadDataset(images);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), images);
    EXPECT_THAT(e.message(), HasSubstr("cannot infer the IDX labels file"));
  }
}

TEST(LoadTest, MissingSiblingLabelsNamesTheExpectedFile) {
  TempDir dir;
  const std::string header = std::string("\0\0\x08\x03\0\0\0\x01\0\0\0\x01\0\0\0\x01", 16);
  const std::string images = dir.Write("t10k-images-idx3-ubyte", header + "\x10");
  try {
    LoadDataset(images);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), dir.Path("t10k-labels-idx1-ubyte"));
    EXPECT_THAT(e.message(), HasSubstr("cannot open"));
  }
}

TEST(LoadTest, AnIdxLabelsFileIsNotADataSet) {
  const std::string labels = testing::SharedFile("datasets/mnist/train-labels-idx1-ubyte.gz");
  ASSERT_FALSE(labels.empty());
  try {
    LoadDataset(labels);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("this is an IDX labels file"));
  }
}

TEST(LoadTest, AutoDetectsCifarByRecordSizeAndLabelBytes) {
  TempDir dir;
  const std::string path = dir.Write("data_batch_1.bin", CifarBatch(4));
  const Dataset d = LoadDataset(path);
  EXPECT_EQ(d.format, DataFormat::kCifar);
  EXPECT_EQ(d.rows(), 4);
  EXPECT_EQ(DetectFormat(path, CifarBatch(4)), DataFormat::kCifar);
  // Label bytes below 9 never occur in text, so the name does not matter.
  EXPECT_EQ(DetectFormat(dir.Path("batch.dat"), CifarBatch(4)), DataFormat::kCifar);
  // Another size, or a record whose first byte is no label, is not CIFAR by content; under a .bin name
  // binary bytes are still read as CIFAR, so the error says what is wrong with the batch (its size, the
  // record whose label is out of range) instead of "expected a numeric class label, got '<binary>'".
  EXPECT_EQ(DetectFormat(dir.Path("batch.dat"), CifarBatch(4) + "x"), DataFormat::kLibsvm);
  EXPECT_EQ(DetectFormat(path, CifarBatch(4) + "x"), DataFormat::kCifar);
  EXPECT_EQ(DetectFormat(path, ""), DataFormat::kLibsvm);
  std::string bad_label = CifarBatch(2);
  bad_label[kCifar10RecordBytes] = 10;
  EXPECT_EQ(DetectFormat(dir.Path("batch.dat"), bad_label), DataFormat::kLibsvm);
  EXPECT_EQ(DetectFormat(path, bad_label), DataFormat::kCifar);
  try {
    LoadDataset(dir.Write("bad_label.bin", bad_label));
    ADD_FAILURE() << "a bad CIFAR label was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("label 10 of record 1 is out of range"));
  }
  try {
    LoadDataset(dir.Write("short.bin", CifarBatch(1) + "xy"));
    ADD_FAILURE() << "a CIFAR batch of the wrong size was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a multiple of 3073"));
  }
  // Records that all carry label 9 (a tab byte) are CIFAR only under a CIFAR name.
  std::string nines = CifarBatch(1);
  nines[0] = 9;
  EXPECT_EQ(DetectFormat(path, nines), DataFormat::kCifar);
  EXPECT_EQ(DetectFormat(dir.Path("batch.bin.gz"), nines), DataFormat::kCifar);
  EXPECT_EQ(DetectFormat(dir.Path("batch.txt"), nines), DataFormat::kLibsvm);
}

TEST(LoadTest, AutoDetectsAGzippedCifarBatch) {
  TempDir dir;
  const Dataset d = LoadDataset(dir.Write("data_batch_1.bin.gz", testing::GzipBytes(CifarBatch(3))));
  EXPECT_EQ(d.format, DataFormat::kCifar);
  EXPECT_EQ(d.rows(), 3);
  EXPECT_EQ(LoadDataset(dir.Write("test_batch", testing::GzipBytes(CifarBatch(2)))).format,
            DataFormat::kCifar);
}

TEST(LoadTest, ExplicitFormatOverridesDetection) {
  TempDir dir;
  // A LIBSVM file read as IDX fails on the IDX magic (and the other way round).
  const std::string svm = dir.Write("small.svm", "1 1:1\n");
  DataLoadOptions as_idx;
  as_idx.format = DataFormat::kIdx;
  try {
    LoadDataset(svm, as_idx);
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.byte_offset(), 0);
    EXPECT_THAT(e.message(), HasSubstr("expected IDX magic 0x00000803"));
  }
  DataLoadOptions as_cifar;
  as_cifar.format = DataFormat::kCifar;
  EXPECT_THROW(LoadDataset(svm, as_cifar), BinaryFormatError);
  // A CIFAR-sized .bin holding LIBSVM text is text (its first byte is no label byte), detected or asked.
  const std::string text = "1 1:1\n";
  const std::string padded = text + std::string(kCifar10RecordBytes - text.size() - 1, ' ') + "\n";
  const std::string bin = dir.Write("looks_like.bin", padded);
  EXPECT_EQ(DetectFormat(bin, padded), DataFormat::kLibsvm);
  EXPECT_EQ(LoadDataset(bin).rows(), 1);
  DataLoadOptions as_libsvm;
  as_libsvm.format = DataFormat::kLibsvm;
  EXPECT_EQ(LoadDataset(bin, as_libsvm).rows(), 1);
}

TEST(LoadTest, OptionsOfAnotherFormatAreRejectedNotIgnored) {
  TempDir dir;
  const std::string bin = dir.Write("data_batch_1.bin", CifarBatch(1));
  DataLoadOptions features;
  features.num_features = 10;
  try {
    LoadDataset(bin, features);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "features");
    EXPECT_THAT(e.message(), HasSubstr("applies to LIBSVM files only"));
  }
  DataLoadOptions labels;
  labels.labels_path = "labels";
  EXPECT_THROW(LoadDataset(dir.Write("a.svm", "1 1:1\n"), labels), ConfigError);
}

TEST(LoadTest, MalformedLibsvmThroughLoadDatasetKeepsLineAndColumn) {
  TempDir dir;
  const std::string path = dir.Write("bad.txt", "+1 1:1\n-1 2:1 1:1\n");
  try {
    LoadDataset(path);
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2:8: feature index 1 follows index 2: indices must be strictly increasing");
  }
}

using testing::BigEndian;

TEST(LoadTest, AnIdxHeaderClaimingMoreImagesThanLabelsIsRefusedBeforeDecompressing) {
  TempDir dir;
  // 1000 images of 28 x 28 declared. The header is a gzip member of its own and a corrupt member follows,
  // so decompressing the whole file would fail with a gzip error: the count check must come first.
  const std::string header = BigEndian(kIdxImagesMagic) + BigEndian(1000) + BigEndian(28) + BigEndian(28);
  const std::string gz = testing::GzipBytes(header) + "\x1f\x8b" + std::string(2000, '\x5a');
  const std::string images = dir.Write("t10k-images-idx3-ubyte.gz", gz);
  dir.Write("t10k-labels-idx1-ubyte", BigEndian(kIdxLabelsMagic) + BigEndian(3) + std::string("\1\2\3", 3));
  try {
    LoadDataset(images);
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_THAT(e.message(), HasSubstr("label count 3 does not match the image count 1000"));
  }
}

TEST(LoadTest, AnIdxHeaderNoGzipFileOfThatSizeCouldHoldIsRefused) {
  TempDir dir;
  const std::string header = BigEndian(kIdxImagesMagic) + BigEndian(4000000) + BigEndian(255) + BigEndian(255);
  const std::string images = dir.Write("train-images-idx3-ubyte.gz", testing::GzipBytes(header + "\1\2\3"));
  try {
    LoadDataset(images);
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_THAT(e.message(), HasSubstr("more than a"));
    EXPECT_THAT(e.message(), HasSubstr("gzip file can hold"));
  }
}

TEST(LoadTest, AnIdxFileOfAnotherElementTypeIsReportedAsIdxNotParsedAsText) {
  TempDir dir;
  // float images (type 0x0D), 1 x 1 x 1.
  const std::string path = dir.Write("t10k-images-idx3-ubyte",
                                     BigEndian(0x00000D03) + BigEndian(1) + BigEndian(1) + BigEndian(1) +
                                         std::string(4, '\0'));
  EXPECT_EQ(DetectFormat(path, ReadFileContents(path)), DataFormat::kIdx);
  try {
    LoadDataset(path);
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.byte_offset(), 0);
    EXPECT_THAT(e.message(), HasSubstr("element type 0x0d with 3 dimensions; only unsigned bytes"));
  }
}

TEST(LoadTest, LibsvmWithAUtf8ByteOrderMarkLoads) {
  TempDir dir;
  const Dataset d = LoadDataset(dir.Write("bom.svm", "\xEF\xBB\xBF+1 1:1\n-1 2:1\n"));
  EXPECT_EQ(d.format, DataFormat::kLibsvm);
  EXPECT_EQ(d.rows(), 2);
  EXPECT_THAT(d.class_names, ElementsAre("-1", "+1"));
}

// Captures what spdlog's default logger writes while it lives.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string Text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(LoadTest, AOneClassDataSetLoadsWithAWarning) {
  TempDir dir;
  const std::string path = dir.Write("positives.svm", "+1 1:1\n+1 2:1\n+1.0 3:1\n");
  LogCapture log;
  const Dataset d = LoadDataset(path);
  EXPECT_EQ(d.num_classes(), 1);
  EXPECT_THAT(log.Text(), HasSubstr("every one of its 3 rows has label '+1'"));
  LogCapture quiet;
  LoadDataset(dir.Write("both.svm", "+1 1:1\n-1 2:1\n"));
  EXPECT_EQ(quiet.Text(), "");
}

}  // namespace
}  // namespace asyncdp::data
