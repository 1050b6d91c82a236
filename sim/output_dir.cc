#include "sim/output_dir.h"

#include <unistd.h>

#include <fstream>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace asyncdp::sim {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSummaryName = "summary.json";
constexpr size_t kMaxNamesInMessage = 5;

// Names a result could hold before results carried a manifest (asyncdp 0.1 train and utility-graph).
bool IsLegacyOutputName(std::string_view name) {
  for (const char* known : {"config.resolved.toml", "metrics.csv", "clients.csv", "summary.json",
                            "utility_graph.csv"}) {
    if (name == known) return true;
  }
  return name.starts_with("wstar_C") && name.ends_with(".metrics.csv");
}

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

void RemoveFile(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec)) && !fs::is_symlink(fs::symlink_status(path, ec))) return;
  fs::remove(path, ec);
  if (ec) throw InputError(path.string(), "cannot replace the previous result's file: " + ec.message());
}

void MoveFile(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw InputError(to.string(), "cannot publish result file: " + ec.message());
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
  if (!fs::is_regular_file(dir / kSummaryName, ec)) return std::nullopt;
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (IsLegacyOutputName(name) && entry.is_regular_file(ec)) names.insert(name);
  }
  return names;
}

OutputDirectory::OutputDirectory(const fs::path& target) : target_(fs::absolute(target).lexically_normal()) {
  if (target_.filename().empty()) target_ = target_.parent_path();
  std::error_code ec;
  if (fs::exists(target_, ec)) {
    if (!fs::is_directory(target_, ec)) {
      throw InputError(target_.string(), "output path exists and is not a directory");
    }
    if (!fs::is_empty(target_, ec) && !PreviousOutputFiles(target_)) {
      throw InputError(target_.string(),
                       "output directory is not empty and holds no asyncdp result (no " +
                           std::string(kOutputManifestName) + " or " + kSummaryName +
                           "); refusing to write into it: choose a new or empty --out directory");
    }
  }
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
    ReplaceOwnFiles(*previous);
    fs::remove_all(staging_, ec);
  }
  committed_ = true;
}

void OutputDirectory::ReplaceOwnFiles(const std::set<std::string>& previous) {
  std::error_code ec;
  std::vector<std::string> foreign;
  for (const std::string& name : written_) {
    if (!previous.contains(name) && fs::exists(fs::symlink_status(target_ / name, ec))) foreign.push_back(name);
  }
  if (!foreign.empty()) {
    throw InputError(target_.string(), "holds " + ListNames(foreign) +
                                           ", not written by asyncdp; refusing to overwrite (move it away or "
                                           "choose another --out directory)");
  }
  // The old manifest goes first and the new one comes last: a directory interrupted in between has no
  // manifest, so a later run claims only the fixed legacy names in it, never a file it did not write.
  RemoveFile(target_ / kOutputManifestName);
  for (const std::string& name : previous) {
    if (!written_.contains(name)) RemoveFile(target_ / name);
  }
  for (const std::string& name : written_) {
    if (name != kSummaryName) MoveFile(staging_ / name, target_ / name);
  }
  if (written_.contains(kSummaryName)) MoveFile(staging_ / kSummaryName, target_ / kSummaryName);
  MoveFile(staging_ / kOutputManifestName, target_ / kOutputManifestName);
}

}  // namespace asyncdp::sim
