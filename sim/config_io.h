// Reading, overriding, validating and writing TrainConfig. All errors are typed (core/error.h): a TOML
// syntax or type error is a ParseError with file:line:col; an unknown key or a bad value is a ConfigError
// naming the key's dotted path.
#pragma once

#include <string>
#include <vector>

#include "sim/config.h"

namespace asyncdp::sim {

// Parses a TOML file. Unknown keys are rejected.
TrainConfig LoadConfigFile(const std::string& path);
// Parses TOML text (`origin` names it in error messages).
TrainConfig ParseConfigText(const std::string& text, const std::string& origin);

// Applies one `dotted.key=value` override (the CLI's --set). Values are TOML-like: numbers, true/false,
// strings with or without quotes, integer lists as `1,2,3` or `[1, 2, 3]`.
void ApplyOverride(TrainConfig& config, const std::string& assignment);
// Applies one layer of overrides (a command's --set list; in Python, train()'s keyword overrides, or a dict
// configuration) in order; a later layer overrides an earlier one's keys, as --set does the file's. Within a
// layer a key given again with another value replaces the earlier value with a warning that names both.
void ApplyOverrides(TrainConfig& config, const std::vector<std::string>& assignments);

// Checks ranges and cross-field rules (e.g. dropout needs exclude_after). Throws ConfigError.
void ValidateConfig(const TrainConfig& config, bool refuse_unused_keys = true);

// The full configuration as TOML, one [section] per group, every key present.
std::string ToToml(const TrainConfig& config);

// docs/config.md: every key with its default and documentation.
std::string RenderConfigDoc();

}  // namespace asyncdp::sim
