// The config field registry: each dotted key of TrainConfig bound to its member, documentation and the
// values it accepts. Parsing (TOML and --set), the resolved-config writer and docs/config.md all walk it,
// so a key cannot be parsed without being documented.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sim/config.h"
#include "sim/config_enum.h"

namespace asyncdp::sim {

// The values a numeric key accepts: a finite number in [min, max] (an end excluded when its *_open flag is
// set). For an integer list the range applies to every element. Every real number from a user is checked
// against it where it enters (TOML file: FILE:LINE:COL; --set: the key), so nothing downstream sees NaN,
// an infinity or a magnitude it cannot compute with.
struct NumericRange {
  double min = 0.0;
  double max = 0.0;
  bool min_open = false;
  bool max_open = false;

  bool Contains(double value) const;
  std::string ToString() const;  // "[0, 1e+06]", "(0, 1)", ...
};

struct ConfigField {
  using Target = std::variant<int64_t*, uint64_t*, double*, bool*, std::string*, std::vector<int64_t>*,
                              std::vector<double>*, EnumBinding>;
  ConfigField(std::string key_path, Target member, std::string documentation, std::vector<std::string> allowed = {})
      : key(std::move(key_path)), target(member), doc(std::move(documentation)), choices(std::move(allowed)) {}
  // An enumerated key: its choices are the enum's words (EnumNames<E>).
  template <NamedEnum E>
  ConfigField(std::string key_path, E* member, std::string documentation)
      : key(std::move(key_path)),
        target(EnumBinding(member)),
        doc(std::move(documentation)),
        choices(EnumBinding(member).Names()) {}
  ConfigField(std::string key_path, Target member, std::string documentation, NumericRange accepted)
      : key(std::move(key_path)), target(member), doc(std::move(documentation)), range(accepted) {}

  std::string key;                   // dotted path, e.g. "dp.sigma"
  Target target;                     // the member it sets
  std::string doc;                   // what it means, its unit and trade-off
  std::vector<std::string> choices;  // allowed values for enumerated strings (empty = free)
  std::optional<NumericRange> range;  // numeric keys: the accepted values (every numeric key has one)
};

// The registry for `config` (pointers into it). Order = documentation order.
std::vector<ConfigField> ConfigFields(TrainConfig& config);

// The field for `key`, or nullptr.
ConfigField* FindField(std::vector<ConfigField>& fields, const std::string& key);

// Renders a field's current value as TOML text (for messages and documentation).
std::string FieldValueText(const ConfigField& field);

// A number for messages: integers below 10^16 in full, other numbers in their shortest round-trip form,
// with 6 significant digits and an exponent beyond 10^16 or below 10^-4 (never hundreds of digits);
// "inf", "-inf" and "nan" as such.
std::string NumberText(double value);

// Throws ConfigError(where, "<key>: ... must be ... in <range>, got <value>") unless `value` is finite and
// in the field's range (no-op for a field without one).
void CheckNumberInRange(const ConfigField& field, double value, const std::string& where);
// CheckNumberInRange for every number `field` currently holds (each element of a list).
void CheckFieldRange(const ConfigField& field, const std::string& where);

}  // namespace asyncdp::sim
