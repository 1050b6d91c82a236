// Which configuration keys a run reads (issue: "no setting silently ignored"). Each rule names keys and
// the condition under which this run does not read them; a key the user wrote (TrainConfig::given_keys), or
// one set to anything but its default, while its rule says "unused" stops the run (exit 2) with the key and
// the reason. Re-running a config.resolved.toml still works: ToToml writes the unused keys as comments.
#pragma once

#include <optional>
#include <string>

#include "sim/config.h"

namespace asyncdp::sim {

// Why `key` is not read by a run of `config`, or nullopt when it is read (or has no rule).
std::optional<std::string> UnusedKeyReason(const std::string& key, const TrainConfig& config);

// Throws ConfigError(key, "...") for the first key that was given (or differs from its default) and that
// this run does not read (UnusedKeyReason).
void RefuseUnusedKeys(const TrainConfig& config);

}  // namespace asyncdp::sim
