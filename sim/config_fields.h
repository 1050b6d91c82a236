// The config field registry: each dotted key of TrainConfig bound to its member, documentation and the
// values it accepts. Parsing (TOML and --set), the resolved-config writer and docs/config.md all walk it,
// so a key cannot be parsed without being documented.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sim/config.h"

namespace asyncdp::sim {

struct ConfigField {
  using Target = std::variant<int64_t*, uint64_t*, double*, bool*, std::string*, std::vector<int64_t>*,
                              std::vector<double>*>;
  ConfigField(std::string key_path, Target member, std::string documentation, std::vector<std::string> allowed = {})
      : key(std::move(key_path)), target(member), doc(std::move(documentation)), choices(std::move(allowed)) {}

  std::string key;                   // dotted path, e.g. "dp.sigma"
  Target target;                     // the member it sets
  std::string doc;                   // what it means, its unit and trade-off
  std::vector<std::string> choices;  // allowed values for enumerated strings (empty = free)
};

// The registry for `config` (pointers into it). Order = documentation order.
std::vector<ConfigField> ConfigFields(TrainConfig& config);

// The field for `key`, or nullptr.
ConfigField* FindField(std::vector<ConfigField>& fields, const std::string& key);

// Renders a field's current value as TOML text (for messages and documentation).
std::string FieldValueText(const ConfigField& field);

}  // namespace asyncdp::sim
