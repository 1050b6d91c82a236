// libFuzzer target: the IDX reader (data/idx.h) and gzip inflation (data/file_contents.h) on arbitrary
// bytes. The input is split into a labels file and an images file at an offset given by its first two
// bytes; when a part starts with the gzip magic it is inflated first, as the loader does.
// Contract checked: bad input throws an InputError subclass (BinaryFormatError offsets inside the file);
// a parsed data set has one label per image, labels below 10 and pixels in [0, 1]; the header-only
// reader (IdxDeclaredDims) agrees with the full parser.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "data/file_contents.h"
#include "data/idx.h"
#include "data/load.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

std::string Inflated(std::string_view part, const std::string& name) {
  if (!asyncdp::data::HasGzipMagic(part)) return std::string(part);
  const std::string whole = asyncdp::data::Gunzip(part, name);
  // The prefix reader must agree with the whole stream.
  const std::string head = asyncdp::data::GunzipPrefix(part, 16, name);
  Require(whole.compare(0, head.size(), head) == 0 && head.size() == std::min<size_t>(16, whole.size()));
  return whole;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace asyncdp;
  if (size < 2) return 0;
  const size_t split = std::min<size_t>((size_t{bytes[0]} << 8 | bytes[1]), size - 2);
  const std::string_view rest(reinterpret_cast<const char*>(bytes) + 2, size - 2);
  try {
    const std::string labels = Inflated(rest.substr(0, split), "labels");
    const std::string images = Inflated(rest.substr(split), "images");
    (void)data::DetectFormat("images", images);
    const data::Dataset d = data::ParseIdxPair(images, "images", labels, "labels");
    Require(!d.is_sparse && d.rows() == static_cast<int64_t>(d.labels.size()));
    Require(data::IdxDeclaredDims(images, "images", data::kIdxImagesMagic)[0] == d.rows());
    for (int32_t label : d.labels) Require(label >= 0 && label < 10);
    for (int64_t i = 0; i < d.dense.size(); ++i) Require(d.dense.data()[i] >= 0.0f && d.dense.data()[i] <= 1.0f);
  } catch (const BinaryFormatError& e) {
    Require(e.byte_offset() >= 0);
  } catch (const InputError&) {
  }
  return 0;
}
