// LIBSVM syntax that must be accepted, and what it must produce. Malformed input: libsvm_errors_test.cc;
// the real data sets: libsvm_real_files_test.cc.
#include "data/libsvm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "tests/data/temp_files.h"

namespace asyncdp::data {
namespace {

using ::testing::ElementsAre;

// Row r as (0-based column, value) pairs.
std::vector<std::pair<int, float>> Row(const Dataset& d, int r) {
  std::vector<std::pair<int, float>> out;
  for (SparseMatrix::InnerIterator it(d.sparse, r); it; ++it)
    out.emplace_back(static_cast<int>(it.col()), it.value());
  return out;
}

TEST(LibsvmTest, ParsesLabelsIndicesAndValues) {
  const Dataset d = ParseLibsvm("+1 1:0.5 3:2\n-1 2:-1.25e-1\n", "t.svm");
  EXPECT_EQ(d.format, DataFormat::kLibsvm);
  EXPECT_EQ(d.source, "t.svm");
  EXPECT_TRUE(d.is_sparse);
  EXPECT_EQ(d.rows(), 2);
  EXPECT_EQ(d.features(), 3);
  EXPECT_EQ(d.nnz(), 3);
  EXPECT_THAT(d.class_names, ElementsAre("-1", "+1"));  // smaller value is class 0
  EXPECT_THAT(d.labels, ElementsAre(1, 0));
  EXPECT_THAT(Row(d, 0), ElementsAre(std::pair{0, 0.5f}, std::pair{2, 2.0f}));
  EXPECT_THAT(Row(d, 1), ElementsAre(std::pair{1, -0.125f}));
}

TEST(LibsvmTest, CommentsBlankLinesTrailingSpacesTabsAndCrlfAreIgnored) {
  const std::string text =
      "# header comment\n"
      "\n"
      "   \t\n"
      "1 1:1 2:2   \n"
      "0\t3:3\t# trailing comment\n"
      "1 4:4\r\n"
      "  # indented comment\n"
      "0 5:5";  // no final newline
  const Dataset d = ParseLibsvm(text, "t.svm");
  EXPECT_EQ(d.rows(), 4);
  EXPECT_EQ(d.features(), 5);
  EXPECT_EQ(d.nnz(), 5);
  EXPECT_THAT(d.labels, ElementsAre(1, 0, 1, 0));
  EXPECT_THAT(Row(d, 1), ElementsAre(std::pair{2, 3.0f}));
  EXPECT_THAT(Row(d, 2), ElementsAre(std::pair{3, 4.0f}));
  EXPECT_THAT(Row(d, 3), ElementsAre(std::pair{4, 5.0f}));
}

TEST(LibsvmTest, RowsWithALabelOnlyAreEmptyRows) {
  const Dataset d = ParseLibsvm("-1 \n+1 2:1\n-1\n+1 # nothing\n-1", "t.svm");
  EXPECT_EQ(d.rows(), 5);
  EXPECT_EQ(d.nnz(), 1);
  EXPECT_EQ(d.features(), 2);
  EXPECT_TRUE(Row(d, 0).empty());
  EXPECT_TRUE(Row(d, 2).empty());
  EXPECT_TRUE(Row(d, 3).empty());
  EXPECT_TRUE(Row(d, 4).empty());
}

TEST(LibsvmTest, ExplicitZerosAreKeptAsStoredEntries) {
  const Dataset d = ParseLibsvm("1 1:0 2:0.0 3:1\n0 1:-0\n", "t.svm");
  EXPECT_EQ(d.nnz(), 4);  // stored entries, as written in the file
  EXPECT_THAT(Row(d, 0), ElementsAre(std::pair{0, 0.0f}, std::pair{1, 0.0f}, std::pair{2, 1.0f}));
}

TEST(LibsvmTest, ValueSpellingsFromCharsAcceptsPlusAndExponents) {
  const Dataset d = ParseLibsvm("1 1:+2.5 2:1e-3 3:.5 4:-7 5:1E2 6:0.18257\n", "t.svm");
  EXPECT_THAT(Row(d, 0), ElementsAre(std::pair{0, 2.5f}, std::pair{1, 1e-3f}, std::pair{2, 0.5f},
                                     std::pair{3, -7.0f}, std::pair{4, 100.0f}, std::pair{5, 0.18257f}));
}

TEST(LibsvmTest, DigitOnlyValuesOfAnyLengthConvertExactly) {
  // Up to 7 digits take the integer fast path, longer ones std::from_chars; both must agree with float.
  const Dataset d = ParseLibsvm("1 1:0 2:007 3:1234567 4:16777217 5:99999999999\n", "t.svm");
  EXPECT_THAT(Row(d, 0), ElementsAre(std::pair{0, 0.0f}, std::pair{1, 7.0f}, std::pair{2, 1234567.0f},
                                     std::pair{3, 16777216.0f}, std::pair{4, 99999999999.0f}));
}

TEST(LibsvmTest, DecimalBinaryLabelsKeepTheirSpelling) {
  const Dataset d = ParseLibsvm("1.0 1:1\n-1.0 1:1\n1.0 1:1\n", "t.svm");
  EXPECT_THAT(d.class_names, ElementsAre("-1.0", "1.0"));
  EXPECT_THAT(d.labels, ElementsAre(1, 0, 1));
}

TEST(LibsvmTest, ZeroOneLabelsMapToThemselves) {
  const Dataset d = ParseLibsvm("1 1:1\n0 1:1\n", "t.svm");
  EXPECT_THAT(d.class_names, ElementsAre("0", "1"));
  EXPECT_THAT(d.labels, ElementsAre(1, 0));
}

TEST(LibsvmTest, MultiClassLabelsAreOrderedNumericallyNotLexically) {
  const Dataset d = ParseLibsvm("10 1:1\n2 1:1\n0 1:1\n9 1:1\n2 1:1\n", "t.svm");
  EXPECT_THAT(d.class_names, ElementsAre("0", "2", "9", "10"));
  EXPECT_THAT(d.labels, ElementsAre(3, 1, 0, 2, 1));
}

TEST(LibsvmTest, SpellingsOfOneValueAreOneClassNamedByTheFirst) {
  const Dataset d = ParseLibsvm("1 1:1\n+1 1:1\n1.0 1:1\n-0 1:1\n0 1:1\n", "t.svm");
  EXPECT_THAT(d.class_names, ElementsAre("-0", "1"));
  EXPECT_THAT(d.labels, ElementsAre(1, 1, 1, 0, 0));
}

TEST(LibsvmTest, DeclaredFeatureCountAddsUnusedTrailingColumns) {
  LibsvmOptions options;
  options.num_features = 10;
  const Dataset d = ParseLibsvm("1 1:1 4:1\n", "t.svm", options);
  EXPECT_EQ(d.features(), 10);
  EXPECT_EQ(ParseLibsvm("1 1:1 4:1\n", "t.svm").features(), 4);  // inferred
}

TEST(LibsvmTest, AnIndexEqualToTheDeclaredCountIsAccepted) {
  LibsvmOptions options;
  options.num_features = 4;
  EXPECT_EQ(ParseLibsvm("1 4:1\n", "t.svm", options).features(), 4);
}

TEST(LibsvmTest, FixedClassMappingMatchesLabelsByValue) {
  // Training file spells -1.0/1.0, test file -1/1 and lacks class 0 entirely (ijcnn1 vs ijcnn1.t).
  const Dataset train = ParseLibsvm("1.0 1:1 3:1\n-1.0 2:1\n", "train");
  const Dataset test = ParseLibsvm("1 1:1\n+1 2:1\n", "test", LibsvmOptionsLike(train));
  EXPECT_THAT(test.class_names, ElementsAre("-1.0", "1.0"));
  EXPECT_THAT(test.labels, ElementsAre(1, 1));
  EXPECT_EQ(test.features(), 3);
}

TEST(LibsvmTest, FixedMappingKeepsTheGivenOrder) {
  LibsvmOptions options;
  options.class_names = {"5", "3"};  // not numeric order: the caller's order wins
  const Dataset d = ParseLibsvm("3 1:1\n5 1:1\n", "t.svm", options);
  EXPECT_THAT(d.labels, ElementsAre(1, 0));
  EXPECT_THAT(d.class_names, ElementsAre("5", "3"));
}

TEST(LibsvmTest, ReadLibsvmLikeReadsAFileWithTheReferenceMapping) {
  testing::TempDir dir;
  const Dataset train = ReadLibsvm(dir.Write("train.svm", "-1 1:1\n+1 5:1\n"));
  const Dataset test = ReadLibsvmLike(dir.Write("test.svm.gz", testing::GzipBytes("+1 2:1\n")), train);
  EXPECT_EQ(test.features(), 5);
  EXPECT_THAT(test.labels, ElementsAre(1));
  EXPECT_EQ(test.source, dir.Path("test.svm.gz"));
}

TEST(LibsvmTest, SingleClassFileHasOneClass) {
  const Dataset d = ParseLibsvm("-1 1:1\n-1 2:1\n", "t.svm");
  EXPECT_THAT(d.class_names, ElementsAre("-1"));
  EXPECT_THAT(d.labels, ElementsAre(0, 0));
}

TEST(LibsvmTest, LargeIndicesWithinInt32AreAccepted) {
  const Dataset d = ParseLibsvm("1 2147483647:1\n", "t.svm");
  EXPECT_EQ(d.features(), 2147483647);
  EXPECT_EQ(d.nnz(), 1);
}

TEST(LibsvmTest, InvalidOptionsAreConfigErrors) {
  LibsvmOptions negative;
  negative.num_features = -1;
  EXPECT_THROW(ParseLibsvm("1 1:1\n", "t.svm", negative), ConfigError);
  LibsvmOptions duplicate;
  duplicate.class_names = {"1", "1.0"};
  EXPECT_THROW(ParseLibsvm("1 1:1\n", "t.svm", duplicate), ConfigError);
  LibsvmOptions not_a_label;
  not_a_label.class_names = {"cat"};
  EXPECT_THROW(ParseLibsvm("1 1:1\n", "t.svm", not_a_label), ConfigError);
}

TEST(LibsvmTest, AUtf8ByteOrderMarkIsSkippedAndColumnsCountFromAfterIt) {
  const Dataset d = ParseLibsvm("\xEF\xBB\xBF-1 2:1\n+1 1:1\n", "bom.svm");
  EXPECT_EQ(d.rows(), 2);
  EXPECT_THAT(d.class_names, ElementsAre("-1", "+1"));
  try {
    ParseLibsvm("\xEF\xBB\xBF+1 0:1\n", "bom.svm");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.column(), 4);  // "0" is the fourth character after the mark
  }
  EXPECT_THROW(ParseLibsvm("\xEF\xBB\xBF", "bom.svm"), ParseError);  // a mark alone is an empty file
  // A mark anywhere else is not skipped.
  EXPECT_THROW(ParseLibsvm("+1 1:1\n\xEF\xBB\xBF-1 1:1\n", "bom.svm"), ParseError);
}

// rows_held: every row is parsed (labels, classes, inferred width and errors as in a full read); only the
// held rows keep their features.
TEST(LibsvmTest, RowsHeldKeepOnlyThoseRowsFeatures) {
  const std::string text = "3 1:1 4:2\n-1 2:3\n3 5:4\n7 1:5\n";
  const Dataset full = ParseLibsvm(text, "t.svm");
  LibsvmOptions options;
  options.rows_held = {false, true, false, true};
  const Dataset part = ParseLibsvm(text, "t.svm", options);
  EXPECT_EQ(part.rows(), full.rows());
  EXPECT_EQ(part.features(), full.features());  // row 2 (feature 5), not held, still sets the width
  EXPECT_EQ(part.class_names, full.class_names);
  EXPECT_EQ(part.labels, full.labels);
  EXPECT_EQ(part.nnz(), 2);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(part.Holds(r), options.rows_held[static_cast<size_t>(r)]);
    if (part.Holds(r)) {
      EXPECT_EQ(Row(part, r), Row(full, r)) << "row " << r;
    } else {
      EXPECT_TRUE(Row(part, r).empty()) << "row " << r;
    }
  }
  // Subset carries what is held.
  const std::vector<int64_t> pick = {3, 0};
  const Dataset sub = Subset(part, pick);
  EXPECT_TRUE(sub.Holds(0));
  EXPECT_FALSE(sub.Holds(1));
  EXPECT_TRUE(full.Holds(2));  // a full read holds every row
}

TEST(LibsvmTest, LabelsOnlyReadsNoFeaturesAndStillReportsErrors) {
  LibsvmOptions options;
  options.labels_only = true;
  const Dataset labels = ParseLibsvm("1 1:1 3:2\n0 2:1\n", "t.svm", options);
  EXPECT_EQ(labels.rows(), 2);
  EXPECT_EQ(labels.features(), 3);
  EXPECT_EQ(labels.nnz(), 0);
  EXPECT_THAT(labels.labels, ElementsAre(1, 0));
  EXPECT_FALSE(labels.Holds(0));
  EXPECT_THROW(ParseLibsvm("1 1:1\n0 2:x\n", "t.svm", options), ParseError);  // a row not kept is still checked
}

TEST(LibsvmTest, RowsHeldOfTheWrongLengthIsAConfigError) {
  LibsvmOptions options;
  options.rows_held = {true};
  EXPECT_THROW(ParseLibsvm("1 1:1\n0 2:1\n", "t.svm", options), ConfigError);
}

}  // namespace
}  // namespace asyncdp::data
