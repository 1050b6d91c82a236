#include "data/data_format.h"

#include "core/error.h"

namespace asyncdp::data {

std::string_view ToString(DataFormat format) {
  switch (format) {
    case DataFormat::kAuto:
      return "auto";
    case DataFormat::kLibsvm:
      return "libsvm";
    case DataFormat::kIdx:
      return "idx";
    case DataFormat::kCifar:
      return "cifar";
    case DataFormat::kSynthetic:
      return "synthetic";
  }
  return "?";
}

DataFormat ParseDataFormat(std::string_view name, const std::string& key_path) {
  for (DataFormat f : {DataFormat::kAuto, DataFormat::kLibsvm, DataFormat::kIdx, DataFormat::kCifar}) {
    if (name == ToString(f)) return f;
  }
  throw ConfigError(key_path, "expected one of auto, libsvm, idx, cifar, got '" + std::string(name) + "'");
}

}  // namespace asyncdp::data
