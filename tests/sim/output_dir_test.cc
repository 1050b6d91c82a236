// OutputDirectory: a result appears complete or not at all, and a file asyncdp did not write is never
// deleted or overwritten (issue: `--out DIR` holding an old result plus other files lost the other files).
#include "sim/output_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "tests/data/temp_files.h"

namespace asyncdp::sim {
namespace {

namespace fs = std::filesystem;
using ::asyncdp::testing::TempDir;
using ::testing::HasSubstr;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Files left beside `target` (a staging directory that was not cleaned up would show here).
int EntriesIn(const fs::path& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

void WriteResult(const fs::path& target, const std::string& tag) {
  OutputDirectory out(target);
  out.Write("metrics.csv", "metrics " + tag);
  out.Write("summary.json", "{\"run\": \"" + tag + "\"}");
  out.Commit();
}

TEST(OutputDirectory, CreatesTheTargetWithTheFilesAndAManifest) {
  TempDir dir;
  const fs::path target = dir.Path("run");
  WriteResult(target, "a");
  EXPECT_EQ(Slurp(target / "metrics.csv"), "metrics a");
  EXPECT_THAT(Slurp(target / kOutputManifestName), HasSubstr("metrics.csv\nsummary.json\n"));
  EXPECT_EQ(EntriesIn(dir.Path("")), 1);  // no staging directory left beside it
  const auto owned = PreviousOutputFiles(target);
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(*owned, (std::set<std::string>{"metrics.csv", "summary.json"}));
}

TEST(OutputDirectory, WritesIntoAnEmptyDirectory) {
  TempDir dir;
  fs::create_directories(dir.Path("empty"));
  WriteResult(dir.Path("empty"), "a");
  EXPECT_EQ(Slurp(fs::path(dir.Path("empty")) / "summary.json"), "{\"run\": \"a\"}");
}

TEST(OutputDirectory, RefusesANonEmptyDirectoryThatHoldsNoResult) {
  TempDir dir;
  const fs::path target = dir.Path("mine");
  fs::create_directories(target);
  WriteText(target / "thesis.tex", "precious");
  try {
    OutputDirectory out(target);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("holds no asyncdp result"));
  }
  EXPECT_EQ(Slurp(target / "thesis.tex"), "precious");
  EXPECT_EQ(EntriesIn(target), 1);
  EXPECT_EQ(EntriesIn(dir.Path("")), 1);
}

TEST(OutputDirectory, RefusesARegularFile) {
  TempDir dir;
  const std::string file = dir.Write("results", "not a directory");
  EXPECT_THROW(OutputDirectory out(file), InputError);
  EXPECT_EQ(Slurp(file), "not a directory");
}

// CheckOutputTarget, which the commands call before their work, judges a target as the constructor does
// and stages nothing: a run killed after it (Ctrl-C, MPI_Abort) leaves no ".NAME.partial-PID" behind.
TEST(OutputDirectory, CheckOutputTargetJudgesAsTheConstructorDoesAndStagesNothing) {
  TempDir dir;
  const fs::path root(dir.Path(""));
  EXPECT_EQ(CheckOutputTarget(root / "new"), root / "new");  // absent: accepted, not created
  EXPECT_FALSE(fs::exists(root / "new"));
  fs::create_directory(root / "empty");
  EXPECT_EQ(CheckOutputTarget(root / "empty/"), root / "empty");
  WriteResult(root / "previous", "old");
  EXPECT_EQ(CheckOutputTarget(root / "previous"), root / "previous");
  const std::string file = dir.Write("a_file", "not a directory");
  fs::create_directory(root / "foreign");
  WriteText(root / "foreign/notes.txt", "mine");
  const int before = EntriesIn(root);
  for (const fs::path& bad : {fs::path(file), root / "foreign", fs::path()}) {
    EXPECT_THROW(CheckOutputTarget(bad), InputError) << bad;
    EXPECT_THROW(OutputDirectory out(bad), InputError) << bad;
  }
  EXPECT_EQ(EntriesIn(root), before);
  EXPECT_EQ(Slurp(root / "foreign/notes.txt"), "mine");
  try {
    CheckOutputTarget("");
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the output directory is an empty path"));
  }
}

TEST(OutputDirectory, ReplacesOnlyItsOwnFilesAndKeepsEveryOtherFile) {
  TempDir dir;
  const fs::path target = dir.Path("run");
  {
    OutputDirectory out(target);
    out.Write("stale.csv", "only the first run writes this");
    out.Write("metrics.csv", "old");
    out.Write("summary.json", "old");
    out.Commit();
  }
  WriteText(target / "notes.txt", "my notes");
  fs::create_directories(target / "plots");
  WriteText(target / "plots" / "fig.png", "png");
  WriteResult(target, "new");
  EXPECT_EQ(Slurp(target / "metrics.csv"), "metrics new");
  EXPECT_EQ(Slurp(target / "summary.json"), "{\"run\": \"new\"}");
  EXPECT_FALSE(fs::exists(target / "stale.csv"));  // ours, not written again: removed
  EXPECT_EQ(Slurp(target / "notes.txt"), "my notes");
  EXPECT_EQ(Slurp(target / "plots" / "fig.png"), "png");
  EXPECT_EQ(*PreviousOutputFiles(target), (std::set<std::string>{"metrics.csv", "summary.json"}));
  EXPECT_EQ(EntriesIn(dir.Path("")), 1);
}

// Another tool's summary.json and metrics.csv, with no asyncdp manifest, are not an asyncdp result: the
// directory is refused and nothing in it changes (it used to be taken for an old result and replaced).
TEST(OutputDirectory, ADirectoryWithoutManifestIsRefusedWhateverItsFilesAreCalled) {
  TempDir dir;
  const fs::path target = dir.Path("other_tool");
  fs::create_directories(target);
  WriteText(target / "summary.json", "{\"tool\": \"other\"}");
  WriteText(target / "metrics.csv", "other metrics");
  EXPECT_FALSE(PreviousOutputFiles(target).has_value());
  try {
    OutputDirectory out(target);
    ADD_FAILURE() << "a directory without a manifest was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("holds no asyncdp result"));
  }
  EXPECT_EQ(Slurp(target / "summary.json"), "{\"tool\": \"other\"}");
  EXPECT_EQ(Slurp(target / "metrics.csv"), "other metrics");
}

// The publish into an earlier result, killed at every step (a child process _exits there, as SIGKILL
// would leave it): the target is always all-old or all-new, and the files asyncdp did not write survive
// unchanged (the same inode).
void ExitAtStep(CommitStep step) {
  const char* want = std::getenv("ASYNCDP_TEST_KILL_STEP");
  if (want != nullptr && std::atoi(want) == static_cast<int>(step)) _exit(0);
}

TEST(OutputDirectory, APublishInterruptedAtAnyStepLeavesAllOldOrAllNewAndEveryForeignFile) {
  for (int step = static_cast<int>(CommitStep::kStaged); step <= static_cast<int>(CommitStep::kDone); ++step) {
    SCOPED_TRACE(step);
    TempDir dir;
    const fs::path target = dir.Path("run");
    {
      OutputDirectory out(target);
      out.Write("config.resolved.toml", "seed = 1");
      out.Write("metrics.csv", "metrics old");
      out.Write("summary.json", "{\"seed\": 1}");
      out.Commit();
    }
    WriteText(target / "analysis.py", "print(1)");
    WriteText(target / "notes.md", "my notes");
    fs::create_directories(target / "plots");
    WriteText(target / "plots" / "a.png", "png");
    struct stat before {};
    ASSERT_EQ(::lstat((target / "notes.md").c_str(), &before), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      setenv("ASYNCDP_TEST_KILL_STEP", std::to_string(step).c_str(), 1);
      SetCommitHookForTesting(ExitAtStep);
      OutputDirectory out(target);
      out.Write("config.resolved.toml", "seed = 7");
      out.Write("metrics.csv", "metrics new");
      out.Write("summary.json", "{\"seed\": 7}");
      out.Write("phases.csv", "phases new");
      out.Commit();
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    const std::string config = Slurp(target / "config.resolved.toml");
    const bool is_new = config == "seed = 7";
    EXPECT_TRUE(is_new || config == "seed = 1") << config;
    EXPECT_EQ(Slurp(target / "metrics.csv"), is_new ? "metrics new" : "metrics old");
    EXPECT_EQ(Slurp(target / "summary.json"), is_new ? "{\"seed\": 7}" : "{\"seed\": 1}");
    EXPECT_EQ(fs::exists(target / "phases.csv"), is_new);
    const auto owned = PreviousOutputFiles(target);
    ASSERT_TRUE(owned.has_value());
    EXPECT_EQ(owned->contains("phases.csv"), is_new);
    EXPECT_EQ(Slurp(target / "analysis.py"), "print(1)");
    EXPECT_EQ(Slurp(target / "notes.md"), "my notes");
    struct stat after {};
    ASSERT_EQ(::lstat((target / "notes.md").c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(is_new, step >= static_cast<int>(CommitStep::kExchanged));
    // A sub-directory asyncdp did not write moves in after the swap; killed before that, the next run on
    // this target brings it back first.
    { OutputDirectory next(target); }
    EXPECT_EQ(Slurp(target / "plots" / "a.png"), "png");
    EXPECT_EQ(EntriesIn(dir.Path("")), 1) << "the old result was not cleaned up";
  }
}

TEST(OutputDirectory, NeverOverwritesAFileItDidNotWriteEvenUnderOneOfItsNames) {
  TempDir dir;
  const fs::path target = dir.Path("run");
  {
    OutputDirectory out(target);
    out.Write("summary.json", "old");
    out.Commit();
  }
  WriteText(target / "metrics.csv", "the user's own metrics");
  OutputDirectory out(target);
  out.Write("metrics.csv", "new");
  out.Write("summary.json", "new");
  try {
    out.Commit();
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("metrics.csv, not written by asyncdp"));
  }
  EXPECT_EQ(Slurp(target / "metrics.csv"), "the user's own metrics");
  EXPECT_EQ(Slurp(target / "summary.json"), "old");  // nothing changed
}

TEST(OutputDirectory, AnUncommittedRunLeavesTheTargetAsItWas) {
  TempDir dir;
  const fs::path target = dir.Path("run");
  WriteResult(target, "old");
  {
    OutputDirectory out(target);
    out.Write("metrics.csv", "half-written");
  }  // no Commit: the run failed
  EXPECT_EQ(Slurp(target / "metrics.csv"), "metrics old");
  EXPECT_EQ(EntriesIn(dir.Path("")), 1);
}

TEST(OutputDirectory, AManifestNamingPathsOutsideTheDirectoryIsRefused) {
  TempDir dir;
  const fs::path target = dir.Path("run");
  fs::create_directories(target);
  WriteText(target / kOutputManifestName, "summary.json\n../thesis.tex\n");
  EXPECT_THROW(OutputDirectory out(target), InputError);
}

}  // namespace
}  // namespace asyncdp::sim
