// An output directory that appears complete or not at all, and never loses a file asyncdp did not write.
//
// Files are written into a hidden sibling staging directory (".NAME.partial-PID"), which is published on
// Commit(); a failed run leaves nothing that could be mistaken for a result. Every result carries a
// manifest, ".asyncdp-output", naming the files asyncdp wrote there. The target may be:
//  - absent or empty: the staging directory is renamed onto it (atomic);
//  - a previous asyncdp result: its manifest's files are replaced (removed, then the new files moved in,
//    summary.json and the manifest last). Every other file in the directory is left untouched. A result
//    written before manifests existed (summary.json, no manifest) counts as one whose files are those it
//    could have written: config.resolved.toml, metrics.csv, clients.csv, summary.json, utility_graph.csv,
//    wstar_C*.metrics.csv;
//  - anything else (a non-empty directory with no asyncdp result, or a regular file): refused with an
//    InputError before any work is done (the CLI exits with code 2).
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
// holds no asyncdp result. Throws InputError when the manifest cannot be read.
std::optional<std::set<std::string>> PreviousOutputFiles(const std::filesystem::path& dir);

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
  void ReplaceOwnFiles(const std::set<std::string>& previous);

  std::filesystem::path target_;
  std::filesystem::path staging_;
  std::set<std::string> written_;
  bool committed_ = false;
};

}  // namespace asyncdp::sim
