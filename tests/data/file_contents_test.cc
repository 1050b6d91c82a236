#include "data/file_contents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "tests/data/temp_files.h"

namespace asyncdp::data {
namespace {

using testing::GzipBytes;
using ::testing::HasSubstr;
using testing::TempDir;

// A few kB of text that compresses into more than one deflate block boundary's worth of work.
std::string SampleText() {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += std::to_string(i % 7 - 3) + " " + std::to_string(i) + ":1\n";
  return text;
}

TEST(FileContentsTest, PlainFileIsReturnedVerbatim) {
  TempDir dir;
  const std::string bytes("a\0b\x1f\n", 5);  // embedded NUL; 0x1f alone is not the gzip magic
  EXPECT_EQ(ReadFileContents(dir.Write("plain", bytes)), bytes);
}

TEST(FileContentsTest, EmptyFileGivesEmptyContents) {
  TempDir dir;
  EXPECT_EQ(ReadFileContents(dir.Write("empty", "")), "");
}

TEST(FileContentsTest, GzipIsDetectedByMagicNotByName) {
  TempDir dir;
  const std::string text = SampleText();
  EXPECT_EQ(ReadFileContents(dir.Write("no_extension", GzipBytes(text))), text);
  EXPECT_EQ(ReadFileContents(dir.Write("named.gz", GzipBytes(text))), text);
  // A plain file named .gz is read as plain text.
  EXPECT_EQ(ReadFileContents(dir.Write("plain.gz", "1 1:1\n")), "1 1:1\n");
}

TEST(FileContentsTest, ConcatenatedGzipMembersAreJoined) {
  TempDir dir;
  const std::string path = dir.Write("two_members.gz", GzipBytes("+1 1:1\n") + GzipBytes("-1 2:1\n"));
  EXPECT_EQ(ReadFileContents(path), "+1 1:1\n-1 2:1\n");
}

TEST(FileContentsTest, MissingFileIsAnInputErrorNamingThePath) {
  TempDir dir;
  const std::string path = dir.Path("does_not_exist.svm");
  try {
    ReadFileContents(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), path);
    EXPECT_THAT(e.message(), HasSubstr("cannot open: No such file or directory"));
  }
}

TEST(FileContentsTest, DirectoryIsAnInputError) {
  TempDir dir;
  try {
    ReadFileContents(dir.Path(""));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("is a directory"));
  }
}

TEST(FileContentsTest, TruncatedGzipReportsTheEndOfFileOffset) {
  const std::string gz = GzipBytes(SampleText());
  const std::string cut = gz.substr(0, gz.size() / 2);
  try {
    Gunzip(cut, "cut.gz");
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.file(), "cut.gz");
    EXPECT_EQ(e.byte_offset(), static_cast<int64_t>(cut.size()));
    EXPECT_THAT(e.message(), HasSubstr("truncated gzip stream"));
  }
}

TEST(FileContentsTest, GzipMissingOnlyItsTrailerIsTruncated) {
  const std::string gz = GzipBytes(SampleText());
  const std::string cut = gz.substr(0, gz.size() - 4);  // ISIZE missing
  try {
    Gunzip(cut, "cut.gz");
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.byte_offset(), static_cast<int64_t>(cut.size()));
    EXPECT_THAT(e.message(), HasSubstr("truncated gzip stream"));
  }
}

TEST(FileContentsTest, CorruptCrcIsReportedWithZlibsReason) {
  std::string gz = GzipBytes(SampleText());
  gz[gz.size() - 8] ^= 0x55;  // first byte of the CRC-32 trailer
  try {
    Gunzip(gz, "bad_crc.gz");
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_THAT(e.message(), HasSubstr("corrupt gzip stream: incorrect data check"));
    EXPECT_GE(e.byte_offset(), static_cast<int64_t>(gz.size()) - 8);
  }
}

TEST(FileContentsTest, CorruptHeaderIsReportedNearTheStart) {
  std::string gz = GzipBytes(SampleText());
  gz[2] = 7;  // compression method must be 8 (deflate)
  try {
    Gunzip(gz, "bad_method.gz");
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_THAT(e.message(), HasSubstr("corrupt gzip stream: unknown compression method"));
    EXPECT_LE(e.byte_offset(), 10);
  }
}

TEST(FileContentsTest, CorruptFileThroughReadFileContentsNamesThePath) {
  TempDir dir;
  std::string gz = GzipBytes(SampleText());
  for (size_t i = 12; i < 40; ++i) gz[i] = static_cast<char>(0xff);  // garbage deflate data
  const std::string path = dir.Write("garbage.gz", gz);
  try {
    ReadFileContents(path);
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_THAT(e.message(), HasSubstr("corrupt gzip stream"));
    EXPECT_GE(e.byte_offset(), 10);
    EXPECT_LE(e.byte_offset(), 40);
  }
}

TEST(FileContentsTest, TrailingGarbageAfterGzipIsAnError) {
  const std::string gz = GzipBytes("1 1:1\n");
  try {
    Gunzip(gz + "junk", "junk.gz");
    FAIL() << "expected BinaryFormatError";
  } catch (const BinaryFormatError& e) {
    EXPECT_EQ(e.byte_offset(), static_cast<int64_t>(gz.size()));
    EXPECT_THAT(e.message(), HasSubstr("expected end of file or another gzip member"));
  }
}

TEST(FileContentsTest, OnlyTheMagicBytesIsTruncated) {
  EXPECT_THROW(Gunzip("\x1f\x8b", "magic_only.gz"), BinaryFormatError);
}

TEST(FileContentsTest, GunzipPrefixInflatesOnlyWhatIsAskedFor) {
  const std::string text = SampleText();
  const std::string gz = GzipBytes(text);
  EXPECT_EQ(GunzipPrefix(gz, 16, "t.gz"), text.substr(0, 16));
  EXPECT_EQ(GunzipPrefix(gz, text.size() + 100, "t.gz"), text);  // shorter content: all of it
  // A corrupt tail is not reached when the prefix is complete before it.
  std::string damaged = gz;
  for (size_t i = damaged.size() / 2; i < damaged.size(); ++i) damaged[i] = '\x5a';
  EXPECT_EQ(GunzipPrefix(damaged, 4, "t.gz"), text.substr(0, 4));
  EXPECT_THROW(Gunzip(damaged, "t.gz"), BinaryFormatError);
  // Concatenated members whose first is shorter than the prefix.
  EXPECT_EQ(GunzipPrefix(GzipBytes("ab") + GzipBytes("cdef"), 5, "t.gz"), "abcde");
  EXPECT_THROW(GunzipPrefix(std::string("\x1f\x8b\x07\x00garbage-garbage-garbage", 26), 8, "t.gz"),
               BinaryFormatError);  // compression method 7 does not exist
  EXPECT_THROW(GunzipPrefix(GzipBytes("ab") + "trailing", 5, "t.gz"), BinaryFormatError);
}

TEST(FileContentsTest, ReadTextFileDropsAUtf8ByteOrderMark) {
  TempDir dir;
  EXPECT_EQ(ReadTextFile(dir.Write("bom.csv", "\xEF\xBB\xBFK,sigma\n10,2\n")), "K,sigma\n10,2\n");
  EXPECT_EQ(ReadTextFile(dir.Write("bom.csv.gz", GzipBytes("\xEF\xBB\xBFq\n"))), "q\n");
  EXPECT_EQ(ReadTextFile(dir.Write("plain.csv", "q\n")), "q\n");
  EXPECT_EQ(StripUtf8Bom("\xEF\xBBx"), "\xEF\xBBx");  // a partial mark is content
}

TEST(FileContentsTest, ReadFileBytesDoesNotDecompress) {
  TempDir dir;
  const std::string gz = GzipBytes("1 1:1\n");
  EXPECT_EQ(ReadFileBytes(dir.Write("a.gz", gz)), gz);
  EXPECT_THROW(ReadFileBytes(dir.Path("missing")), InputError);
  EXPECT_THROW(ReadFileBytes(dir.Path("")), InputError);  // a directory
}

}  // namespace
}  // namespace asyncdp::data
