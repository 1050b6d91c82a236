// libFuzzer target: the TOML configuration reader (sim/config_io.h) on arbitrary text, and `--set`
// overrides. Contract checked: bad input throws an InputError subclass, never anything else; a
// configuration that parses and validates has every number finite and in its registry range, and
// writing it out (ToToml) and reading it back gives the same configuration again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "sim/config_fields.h"
#include "sim/config_io.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace asyncdp;
  const std::string text(reinterpret_cast<const char*>(bytes), size);
  // Lines after a "--set" line are overrides, the text before it is the TOML file.
  const size_t marker = text.find("\n--set\n");
  const std::string toml = text.substr(0, marker);
  try {
    sim::TrainConfig config = sim::ParseConfigText(toml, "fuzz.toml");
    if (marker != std::string::npos) {
      size_t start = marker + 7;
      while (start < text.size()) {
        const size_t end = std::min(text.find('\n', start), text.size());
        sim::ApplyOverride(config, text.substr(start, end - start));
        start = end + 1;
      }
    }
    if (config.data.train.empty()) config.data.train = "train.svm";
    sim::ValidateConfig(config);
    sim::TrainConfig copy = config;
    for (const sim::ConfigField& field : sim::ConfigFields(copy)) {
      try {
        sim::CheckFieldRange(field, field.key);
      } catch (const InputError&) {
        std::abort();  // validated, yet out of range
      }
    }
    const std::string written = sim::ToToml(config);
    const sim::TrainConfig again = sim::ParseConfigText(written, "resolved.toml");
    Require(sim::ToToml(again) == written);
  } catch (const InputError&) {
  }
  return 0;
}
