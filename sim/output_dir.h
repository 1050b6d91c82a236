// An output directory that appears complete or not at all, and never loses a file asyncdp did not write.
//
// Files are written into a hidden sibling staging directory (".NAME.partial-PID"), which is published on
// Commit(); a failed run leaves nothing that could be mistaken for a result. Every result carries a
// manifest, ".asyncdp-output", naming the files asyncdp wrote there. The target may be:
//  - absent or empty: the staging directory is renamed onto it (rename(2): atomic);
//  - a previous asyncdp result (it has a manifest): the staging directory receives a hard link to every
//    file of the target that the previous manifest does not name (files asyncdp did not write), and is then
//    swapped with the target in one renameat2(RENAME_EXCHANGE). Whenever the process stops, the target is
//    the whole old result or the whole new one, and every file asyncdp did not write is in it, unchanged
//    (the same inode). Afterwards only the previous manifest's files are removed from the old directory; an
//    entry that appeared there during the swap is moved into the new result, never deleted;
//  - anything else (a non-empty directory with no manifest — another tool's summary.json included —, a
//    directory holding a sub-directory asyncdp did not write, or a regular file): refused with an InputError
//    before any work is done (the CLI exits with code 2).
// A new file whose name is taken by a file asyncdp did not write is refused at Commit(), before anything
// in the target changes.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>

namespace asyncdp::sim {

// The manifest file inside every result directory: one written file name per line.
inline constexpr const char* kOutputManifestName = ".asyncdp-output";

// The files in `dir` that an earlier asyncdp run wrote (the manifest itself excluded), or nullopt when `dir`
// holds no asyncdp result (no manifest). Throws InputError when the manifest cannot be read.
std::optional<std::set<std::string>> PreviousOutputFiles(const std::filesystem::path& dir);

// The steps of a Commit into a previous result, in order, for tests that interrupt it at each step
// (tests/sim/output_dir_test.cc kills a child process there). Production code leaves the hook null.
enum class CommitStep { kStaged, kLinked, kExchanged, kAdopted, kRemovedOld, kDone };
using CommitHook = void (*)(CommitStep);
void SetCommitHookForTesting(CommitHook hook);

// The target's judgement alone, as OutputDirectory makes it (absent, empty or a previous result; anything
// else, an empty path included, throws InputError), without staging anything: commands call it before their
// work so that a bad --out is refused before a run rather than after it, and a run killed meanwhile leaves
// no staging directory behind. Returns the absolute target.
std::filesystem::path CheckOutputTarget(const std::filesystem::path& target);

class OutputDirectory {
 public:
  // Throws InputError when `target` exists and is neither empty nor a previous asyncdp result.
  explicit OutputDirectory(const std::filesystem::path& target);
  ~OutputDirectory();  // removes the staging directory unless committed
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  // Where to write `name` now (inside the staging directory); `name` becomes part of the result.
  std::filesystem::path File(const std::string& name);
  // Writes `text` to File(name); throws InputError on failure.
  void Write(const std::string& name, const std::string& text);
  // Publishes the result (see the file comment). Throws InputError, leaving the target as it was, when
  // a new file would overwrite a file asyncdp did not write.
  void Commit();

 private:
  void ExchangeWithPrevious(const std::set<std::string>& previous);

  std::filesystem::path target_;
  std::filesystem::path staging_;
  std::set<std::string> written_;
  bool committed_ = false;
};

}  // namespace asyncdp::sim
