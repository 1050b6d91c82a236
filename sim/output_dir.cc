#include "sim/output_dir.h"

#include <unistd.h>

#include <fstream>

#include "core/error.h"

namespace asyncdp::sim {
namespace fs = std::filesystem;

OutputDirectory::OutputDirectory(const fs::path& target) : target_(fs::absolute(target).lexically_normal()) {
  if (target_.filename().empty()) target_ = target_.parent_path();
  std::error_code ec;
  if (fs::exists(target_, ec)) {
    if (!fs::is_directory(target_)) throw InputError(target_.string(), "output path exists and is not a directory");
    // summary.json marks a train result, audit.json an audit result (sim/audit/audit.h).
    if (!fs::is_empty(target_) && !fs::exists(target_ / "summary.json") && !fs::exists(target_ / "audit.json")) {
      throw InputError(target_.string(),
                       "output directory is not empty and holds no asyncdp result (summary.json or audit.json); "
                       "refusing to overwrite it");
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

void OutputDirectory::Write(const std::string& name, const std::string& text) const {
  std::ofstream out(File(name), std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw InputError(File(name).string(), "cannot write output file");
}

void OutputDirectory::Commit() {
  std::error_code ec;
  fs::remove_all(target_, ec);
  fs::rename(staging_, target_, ec);
  if (ec) throw InputError(target_.string(), "cannot publish results: " + ec.message());
  committed_ = true;
}

}  // namespace asyncdp::sim
