#include "sim/output_dir.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2 (glibc >= 2.28)
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace asyncdp::sim {
namespace fs = std::filesystem;
namespace {

CommitHook g_commit_hook = nullptr;
void Reached(CommitStep step) {
  if (g_commit_hook != nullptr) g_commit_hook(step);
}
constexpr size_t kMaxNamesInMessage = 5;

std::string ListNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxNamesInMessage; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kMaxNamesInMessage) out += " and " + std::to_string(names.size() - kMaxNamesInMessage) + " more";
  return out;
}

// A file name asyncdp may own: one path component, no separators, not "." or "..".
bool IsPlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

// Entries of `dir` other than its manifest, by name.
std::vector<std::string> EntryNames(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != kOutputManifestName) names.push_back(name);
  }
  if (ec) throw InputError(dir.string(), "cannot list the output directory: " + ec.message());
  return names;
}

bool SameInode(const fs::path& a, const fs::path& b) {
  struct stat sa {}, sb {};
  return ::lstat(a.c_str(), &sa) == 0 && ::lstat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

bool IsDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec));
}

// The foreign entries of a previous result: everything its manifest does not name.
std::vector<std::string> ForeignEntries(const fs::path& dir, const std::set<std::string>& previous) {
  std::vector<std::string> foreign;
  for (const std::string& name : EntryNames(dir)) {
    if (!previous.contains(name)) foreign.push_back(name);
  }
  return foreign;
}

// Moves what is left in `old` (a result swapped out of `target`, or a staging directory) that asyncdp did not
// write back into `target` (when the name is free there), removes what asyncdp wrote, and removes `old` if
// that leaves it empty. Never deletes a file asyncdp did not write.
void SettleOldDirectory(const fs::path& old, const fs::path& target) {
  std::error_code ec;
  const auto own = PreviousOutputFiles(old).value_or(std::set<std::string>{});
  for (const std::string& name : EntryNames(old)) {
    if (own.contains(name) || SameInode(old / name, target / name)) continue;
    if (!fs::exists(fs::symlink_status(target / name, ec))) fs::rename(old / name, target / name, ec);
  }
  Reached(CommitStep::kAdopted);
  for (const std::string& name : EntryNames(old)) {
    if (own.contains(name) || SameInode(old / name, target / name)) fs::remove(old / name, ec);
  }
  fs::remove(old / kOutputManifestName, ec);
  Reached(CommitStep::kRemovedOld);
  fs::remove(old, ec);  // only if empty: anything left there was not ours
}

// A publish killed after its swap leaves the old result in a hidden sibling ".NAME.partial-PID" of a process
// that no longer runs, holding the sub-directories asyncdp did not write (they move after the swap): they
// go back into the target before anything else happens.
void RecoverInterruptedPublishes(const fs::path& target) {
  std::error_code ec;
  const std::string prefix = "." + target.filename().string() + ".partial-";
  if (!fs::is_directory(target, ec)) return;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !IsDirectory(entry.path())) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos) {
      continue;  // not a staging directory of ours (pids fit in 9 digits)
    }
    const pid_t pid = static_cast<pid_t>(std::stoll(pid_text));
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to judge)
    if (!PreviousOutputFiles(entry.path())) {
      fs::remove_all(entry.path(), ec);  // a staging directory that never got to publish: only our files
      continue;
    }
    SettleOldDirectory(entry.path(), target);
  }
}

}  // namespace

std::optional<std::set<std::string>> PreviousOutputFiles(const fs::path& dir) {
  std::error_code ec;
  const fs::path manifest = dir / kOutputManifestName;
  if (fs::is_regular_file(manifest, ec)) {
    std::ifstream in(manifest);
    if (!in) throw InputError(manifest.string(), "cannot read the asyncdp result manifest");
    std::set<std::string> names;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line.front() == '#') continue;
      // A manifest names files inside the directory only; anything else is not one we wrote.
      if (!IsPlainName(line) || line == kOutputManifestName) {
        throw InputError(manifest.string(), "not an asyncdp result manifest (unexpected entry \"" +
                                                line.substr(0, 60) + "\"); refusing to touch the directory");
      }
      names.insert(line);
    }
    return names;
  }
  // No manifest: not an asyncdp result, whatever its files are called (another tool's summary.json too).
  return std::nullopt;
}

void SetCommitHookForTesting(CommitHook hook) { g_commit_hook = hook; }

namespace {
// fs::absolute("") throws a bare filesystem_error ("cannot make absolute path"), which reached users as an
// exit-1 crash after the run; an empty target is bad input.
fs::path AbsoluteTarget(const fs::path& target) {
  if (target.empty()) throw InputError("", "the output directory is an empty path");
  fs::path absolute = fs::absolute(target).lexically_normal();
  if (absolute.filename().empty()) absolute = absolute.parent_path();
  return absolute;
}
}  // namespace

fs::path CheckOutputTarget(const fs::path& target) {
  const fs::path absolute = AbsoluteTarget(target);
  std::error_code ec;
  RecoverInterruptedPublishes(absolute);
  if (fs::exists(absolute, ec)) {
    if (!fs::is_directory(absolute, ec)) {
      throw InputError(absolute.string(), "output path exists and is not a directory");
    }
    if (!fs::is_empty(absolute, ec)) {
      const auto previous = PreviousOutputFiles(absolute);
      if (!previous) {
        throw InputError(absolute.string(),
                         "output directory is not empty and holds no asyncdp result (no " +
                             std::string(kOutputManifestName) +
                             " manifest); refusing to write into it: choose a new or empty --out directory");
      }
    }
  }
  return absolute;
}

OutputDirectory::OutputDirectory(const fs::path& target) : target_(CheckOutputTarget(target)) {
  std::error_code ec;
  fs::create_directories(target_.parent_path(), ec);
  staging_ = target_.parent_path() / ("." + target_.filename().string() + ".partial-" + std::to_string(getpid()));
  fs::remove_all(staging_, ec);
  if (!fs::create_directories(staging_, ec) || ec) {
    throw InputError(staging_.string(), "cannot create output directory: " + ec.message());
  }
}

OutputDirectory::~OutputDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
}

fs::path OutputDirectory::File(const std::string& name) {
  if (!IsPlainName(name) || name == kOutputManifestName) {
    throw InputError(name, "not a valid result file name");
  }
  written_.insert(name);
  return staging_ / name;
}

void OutputDirectory::Write(const std::string& name, const std::string& text) {
  const fs::path path = File(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw InputError(path.string(), "cannot write output file");
}

void OutputDirectory::Commit() {
  std::string manifest = "# Files written by asyncdp " ASYNCDP_VERSION
                         "; a later run with this --out replaces exactly these and keeps any other file.\n";
  for (const std::string& name : written_) manifest += name + "\n";
  {
    std::ofstream out(staging_ / kOutputManifestName, std::ios::binary | std::ios::trunc);
    out << manifest;
    out.close();
    if (!out) throw InputError((staging_ / kOutputManifestName).string(), "cannot write output file");
  }
  std::error_code ec;
  // Re-inspect the target: it may have changed while the run was computing.
  if (!fs::exists(target_, ec) || (fs::is_directory(target_, ec) && fs::is_empty(target_, ec))) {
    fs::rename(staging_, target_, ec);  // onto an empty directory: rename(2) replaces it atomically
    if (ec) throw InputError(target_.string(), "cannot publish results: " + ec.message());
  } else {
    const std::optional<std::set<std::string>> previous =
        fs::is_directory(target_, ec) ? PreviousOutputFiles(target_) : std::nullopt;
    if (!previous) {
      throw InputError(target_.string(),
                       "output directory changed during the run and holds no asyncdp result; refusing to "
                       "write into it");
    }
    ExchangeWithPrevious(*previous);
  }
  committed_ = true;
  Reached(CommitStep::kDone);
}

void OutputDirectory::ExchangeWithPrevious(const std::set<std::string>& previous) {
  std::error_code ec;
  std::vector<std::string> clash;
  for (const std::string& name : written_) {
    if (!previous.contains(name) && fs::exists(fs::symlink_status(target_ / name, ec))) clash.push_back(name);
  }
  if (!clash.empty()) {
    throw InputError(target_.string(), "holds " + ListNames(clash) +
                                           ", not written by asyncdp; refusing to overwrite (move it away or "
                                           "choose another --out directory)");
  }
  Reached(CommitStep::kStaged);
  // 1. The new result gets a hard link to every file asyncdp did not write: the same inode, unchanged.
  // (Sub-directories cannot be hard-linked: they move in after the swap, step 3.)
  for (const std::string& name : ForeignEntries(target_, previous)) {
    if (IsDirectory(target_ / name)) continue;
    if (::linkat(AT_FDCWD, (target_ / name).c_str(), AT_FDCWD, (staging_ / name).c_str(), 0) != 0) {
      throw InputError((target_ / name).string(),
                       std::string("cannot carry this file (not written by asyncdp) into the new result: ") +
                           std::strerror(errno) + "; the earlier result is unchanged");
    }
  }
  Reached(CommitStep::kLinked);
  // 2. One atomic swap: the target is the old result before it and the new one after it.
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
    throw InputError(target_.string(), std::string("cannot publish the result (renameat2 RENAME_EXCHANGE: ") +
                                           std::strerror(errno) + "); the earlier result is unchanged");
  }
  committed_ = true;  // the staging path now holds the old result: never remove it wholesale
  Reached(CommitStep::kExchanged);
  // 3. The old directory (now at staging_): what asyncdp did not write and the new result lacks — the
  // sub-directories, and any entry that appeared during the swap — moves into the new result; then the old
  // result's own files go, and the old directory if it is empty. Killed in between, the next OutputDirectory
  // on this target finishes it (RecoverInterruptedPublishes).
  SettleOldDirectory(staging_, target_);
}

}  // namespace asyncdp::sim
