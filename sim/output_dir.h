// An output directory that appears complete or not at all: files are written into a hidden sibling
// staging directory, which replaces the target only on Commit(). A failed run leaves nothing behind that
// could be mistaken for a result. An existing target is replaced only if it is empty or holds an earlier
// asyncdp result (summary.json or audit.json); anything else is refused with an InputError.
#pragma once

#include <filesystem>
#include <string>

namespace asyncdp::sim {

class OutputDirectory {
 public:
  explicit OutputDirectory(const std::filesystem::path& target);
  ~OutputDirectory();  // removes the staging directory unless committed
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  // Where to write `name` now (inside the staging directory).
  std::filesystem::path File(const std::string& name) const { return staging_ / name; }
  // Writes `text` to File(name); throws InputError on failure.
  void Write(const std::string& name, const std::string& text) const;
  // Atomically publishes the staging directory as the target.
  void Commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace asyncdp::sim
