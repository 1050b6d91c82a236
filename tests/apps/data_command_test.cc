// End-to-end: run the built `asyncdp data info` binary and check its JSON, exit codes and error text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/apps/cli_runner.h"
#include "tests/data/temp_files.h"
#include "tests/test_data.h"

namespace asyncdp::apps {
namespace {

using testing::CliResult;
using ::testing::HasSubstr;
using testing::Quoted;
using testing::RunAsyncdp;

TEST(DataCommandTest, A9aInfoIsOneJsonObjectWithCountsInClassOrder) {
  const std::string path = testing::SharedFile("datasets/libsvm/a9a.gz");
  ASSERT_FALSE(path.empty());
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("data info " + Quoted(path), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(info["format"], "libsvm");
  EXPECT_EQ(info["rows"], 32561);
  EXPECT_EQ(info["features"], 123);
  EXPECT_EQ(info["nnz"], 451592);
  EXPECT_EQ(info["labels"].dump(), R"({"-1":24720,"+1":7841})");  // class order, not alphabetical
  EXPECT_NEAR(info["density"].get<double>(), 451592.0 / (32561.0 * 123.0), 1e-12);
  // Exactly the documented keys, in order.
  std::string keys;
  for (const auto& [key, value] : info.items()) keys += key + ",";
  EXPECT_EQ(keys, "format,rows,features,nnz,labels,density,");
}

TEST(DataCommandTest, FeaturesOptionWidensA9aTest) {
  const std::string path = testing::SharedFile("datasets/libsvm/a9a.t.gz");
  ASSERT_FALSE(path.empty());
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("data info --features 123 " + Quoted(path), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["features"], 123);
  EXPECT_EQ(info["rows"], 16281);
}

TEST(DataCommandTest, MnistImagesAreDetectedAndPairedWithTheirLabels) {
  const std::string path = testing::SharedFile("datasets/mnist/t10k-images-idx3-ubyte.gz");
  ASSERT_FALSE(path.empty());
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("data info " + Quoted(path), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = nlohmann::ordered_json::parse(r.out);
  EXPECT_EQ(info["format"], "idx");
  EXPECT_EQ(info["rows"], 10000);
  EXPECT_EQ(info["features"], 784);
  EXPECT_EQ(info["nnz"], 1511219);
  EXPECT_EQ(info["labels"].dump(),
            R"({"0":980,"1":1135,"2":1032,"3":1010,"4":982,"5":892,"6":958,"7":1028,"8":974,"9":1009})");
}

TEST(DataCommandTest, MalformedFileExitsWithCode2AndFileLineColumn) {
  testing::TempDir dir;
  const std::string path = dir.Write("bad.svm", "+1 1:1 2:1\n-1 2:1 2:0.5\n");
  const CliResult r = RunAsyncdp("data info " + Quoted(path), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: " + path + ":2:8: duplicate feature index 2 in this line\n");
}

TEST(DataCommandTest, MissingFileExitsWithCode2) {
  testing::TempDir dir;
  const std::string path = dir.Path("nope.svm");
  const CliResult r = RunAsyncdp("data info " + Quoted(path), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("error: " + path + ": cannot open: No such file or directory"));
}

TEST(DataCommandTest, IndexBeyondDeclaredFeaturesExitsWithCode2) {
  testing::TempDir dir;
  const std::string path = dir.Write("wide.svm", "1 1:1 5:1\n");
  const CliResult r = RunAsyncdp("data info --features 4 " + Quoted(path), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(path + ":1:7: feature index 5 exceeds the declared feature count 4"));
}

TEST(DataCommandTest, BadOptionsExitWithCode2) {
  testing::TempDir dir;
  const std::string path = dir.Write("ok.svm", "1 1:1\n");
  EXPECT_EQ(RunAsyncdp("data info --format csv " + Quoted(path), dir).exit_code, 2);
  EXPECT_EQ(RunAsyncdp("data info --features -3 " + Quoted(path), dir).exit_code, 2);
  const CliResult wide = RunAsyncdp("data info --features 3000000000 " + Quoted(path), dir);
  EXPECT_EQ(wide.exit_code, 2);
  EXPECT_EQ(wide.err, "error: --features: must be an integer in [0, 2147483647], got 3000000000\n");
  const CliResult labels = RunAsyncdp("data info --labels x " + Quoted(path), dir);
  EXPECT_EQ(labels.exit_code, 2);
  EXPECT_THAT(labels.err, HasSubstr("error: labels: a separate labels file applies to IDX files only"));
  EXPECT_EQ(RunAsyncdp("data", dir).exit_code, 2);  // a sub-subcommand is required
}

TEST(DataCommandTest, AGzippedCifarBatchAndAByteOrderMarkAreRecognised) {
  testing::TempDir dir;
  std::string batch;
  for (int r = 0; r < 2; ++r) {
    batch.push_back(static_cast<char>(r));
    batch.append(3072, '\x40');
  }
  CliResult r = RunAsyncdp("data info " + Quoted(dir.Write("data_batch_1.bin.gz", testing::GzipBytes(batch))), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["format"], "cifar");
  r = RunAsyncdp("data info " + Quoted(dir.Write("bom.svm", "\xEF\xBB\xBF+1 1:1\n-1 2:1\n")), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows"], 2);
}

TEST(DataCommandTest, AOneClassFileWarnsOnStderr) {
  testing::TempDir dir;
  const CliResult r = RunAsyncdp("data info " + Quoted(dir.Write("ones.svm", "1 1:1\n1 2:1\n")), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("every one of its 2 rows has label '1'"));
}

}  // namespace
}  // namespace asyncdp::apps
