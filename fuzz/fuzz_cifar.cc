// libFuzzer target: the CIFAR-10 binary reader (data/cifar.h) and format detection (data/load.h).
// Contract checked: bad input throws BinaryFormatError with an offset inside the file; a parsed batch has
// size / 3073 rows of 3072 pixels in [0, 1] and labels 0..9; detection calls a file CIFAR that the CIFAR
// parser then rejects only for a binary file under a .bin name (so that its error is CIFAR's).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "data/cifar.h"
#include "data/load.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace asyncdp;
  const std::string_view contents(reinterpret_cast<const char*>(bytes), size);
  bool parsed = false;
  try {
    const data::Dataset d = data::ParseCifar10(contents, "batch.bin");
    parsed = true;
    Require(d.rows() * data::kCifar10RecordBytes == static_cast<int64_t>(size));
    Require(d.features() == data::kCifar10PixelBytes && d.image.channels == 3);
    for (int32_t label : d.labels) Require(label >= 0 && label < 10);
    for (int64_t i = 0; i < d.dense.size(); ++i) Require(d.dense.data()[i] >= 0.0f && d.dense.data()[i] <= 1.0f);
  } catch (const BinaryFormatError& e) {
    Require(e.byte_offset() >= 0 && e.byte_offset() <= static_cast<int64_t>(size));
  }
  try {
    // By content, detection never calls a file CIFAR that the CIFAR parser rejects. Under a .bin name a
    // binary file (a byte below 9, which no text has) is read as CIFAR whatever its content, so that a bad
    // batch gets CIFAR's precise error (data/load.cc).
    bool binary = false;
    for (size_t i = 0; i < size && i < 65536; ++i) binary = binary || bytes[i] < 9;
    for (const char* name : {"batch.bin", "batch.bin.gz", "batch"}) {
      const bool bin_name = std::string_view(name).find(".bin") != std::string_view::npos;
      if (data::DetectFormat(name, contents) == data::DataFormat::kCifar) Require(parsed || (bin_name && binary));
    }
  } catch (const InputError&) {  // an IDX labels file is refused by name
  }
  return 0;
}
