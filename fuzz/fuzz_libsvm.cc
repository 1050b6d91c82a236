// libFuzzer target: the LIBSVM text parser (data/libsvm.h) on arbitrary bytes.
// Contract checked: malformed input throws an InputError subclass (ParseError with a line and column
// inside the text, or ConfigError for options), never anything else; a parsed data set is consistent
// (CSR structure, labels within the classes, declared feature count honoured). The first byte picks the
// options, so the declared-feature and fixed-class paths are fuzzed too: bit 0 declares
// 1 + 4 * (bits 1..6) features, bit 7 fixes the classes to {-1, +1}.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "data/libsvm.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();  // a broken invariant is a finding
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace asyncdp;
  if (size == 0) return 0;
  const uint8_t selector = bytes[0];
  const std::string_view text(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  data::LibsvmOptions options;
  if (selector & 1) options.num_features = 1 + 4 * ((selector >> 1) & 0x3f);  // 1..253 declared
  if (selector & 0x80) options.class_names = {"-1", "+1"};
  try {
    const data::Dataset d = data::ParseLibsvm(text, "fuzz.svm", options);
    Require(d.is_sparse && d.rows() >= 1);
    Require(d.sparse.isCompressed() && d.sparse.rows() == d.rows());
    if (options.num_features > 0) Require(d.features() == options.num_features);
    for (int32_t label : d.labels) Require(label >= 0 && label < d.num_classes());
    const auto* outer = d.sparse.outerIndexPtr();
    for (int64_t r = 0; r < d.rows(); ++r) {
      Require(outer[r] <= outer[r + 1]);
      for (auto k = outer[r]; k < outer[r + 1]; ++k) {
        Require(d.sparse.innerIndexPtr()[k] >= 0 && d.sparse.innerIndexPtr()[k] < d.features());
        if (k > outer[r]) Require(d.sparse.innerIndexPtr()[k - 1] < d.sparse.innerIndexPtr()[k]);
      }
    }
  } catch (const ParseError& e) {
    Require(e.line() >= 1 && e.column() >= 1 && e.file() == "fuzz.svm");
  } catch (const InputError&) {
  }
  return 0;
}
