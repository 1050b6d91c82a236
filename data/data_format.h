// The file formats a data set is read from, past parsing (Dataset::format, DataLoadOptions::format).
#pragma once

#include <string>
#include <string_view>

namespace asyncdp::data {

// kAuto: detect from the content (data/load.h); kSynthetic: made in memory (tests, benchmarks), never read.
enum class DataFormat { kAuto, kLibsvm, kIdx, kCifar, kSynthetic };

// "auto", "libsvm", "idx", "cifar", "synthetic".
std::string_view ToString(DataFormat format);
// The inverse of ToString for the formats a configuration may name (not "synthetic"); throws
// ConfigError(key_path, ...) for any other name.
DataFormat ParseDataFormat(std::string_view name, const std::string& key_path = "format");

}  // namespace asyncdp::data
