// Where tests find real data. The small sets the default job needs (LIBSVM a9a, a9a.t) ship in the
// repository under datasets/; larger ones come from ../shared beside the checkout (CI has it there) and the
// Debian package dataset-fashion-mnist. A missing file is a failure with a clear message — never a skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace asyncdp::testing {

inline std::string SharedDir() {
  if (const char* env = std::getenv("ASYNCDP_SHARED_DIR")) return env;
  return ASYNCDP_SHARED_DIR;
}

inline std::string SourceDir() { return ASYNCDP_SOURCE_DIR; }

// The path of the `asyncdp` binary built alongside the tests (for end-to-end CLI tests).
inline std::string AsyncdpBinary() { return ASYNCDP_BINARY; }

// Absolute path of a data file by its path under shared/ (e.g. "datasets/libsvm/a9a.gz"): the
// repository's own copy (datasets/ at the source root) when it ships one, else the one under shared/;
// fails the current test when neither exists. Use as: const auto path = SharedFile("...");
// ASSERT_FALSE(path.empty());
inline std::string SharedFile(const std::string& relative) {
  const std::filesystem::path in_repo = std::filesystem::path(SourceDir()) / relative;
  if (relative.starts_with("datasets/") && std::filesystem::exists(in_repo)) return in_repo.string();
  const std::filesystem::path p = std::filesystem::path(SharedDir()) / relative;
  if (!std::filesystem::exists(p)) {
    ADD_FAILURE() << "test data missing: " << p
                  << " (expected ../shared beside the checkout, or set ASYNCDP_SHARED_DIR)";
    return {};
  }
  return p.string();
}

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// A Fashion-MNIST file from the Debian package dataset-fashion-mnist; fails the test when absent.
inline std::string FashionMnistFile(const std::string& name) {
  const std::filesystem::path p = std::filesystem::path(kFashionMnistDir) / name;
  if (!std::filesystem::exists(p)) {
    ADD_FAILURE() << "Fashion-MNIST missing: " << p << " (run scripts/install-deps.sh)";
    return {};
  }
  return p.string();
}

}  // namespace asyncdp::testing
