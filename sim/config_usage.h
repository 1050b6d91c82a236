// Which configuration keys a run reads (issue: "no setting silently ignored"). Each rule names keys and
// the condition under which this run does not read them. A key the user wrote (TrainConfig::given, even at
// its default value) or one set in code away from its default, while its rule says "unused", stops the run
// (exit 2) with the key and the reason — with one exception: a key of the configuration file that the file
// alone reads and only the overrides (--set, Python keywords, in any order; or code editing the loaded file)
// left unread, such as the file's dp.sigma under `--set dp.enabled=false`, is a warning naming the key: the
// override is the user's deliberate switch.
// Re-running a config.resolved.toml still works: ToToml writes such keys as comments.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config.h"

namespace asyncdp::sim {

// Why `key` is not read by a run of `config`, or nullopt when it is read (or has no rule).
std::optional<std::string> UnusedKeyReason(const std::string& key, const TrainConfig& config);

// Throws ConfigError(key, "...") for the first key refused by the rule above.
void RefuseUnusedKeys(const TrainConfig& config);
// For a command that takes a run's configuration and reads only part of it (reference-optimum reads the
// objective, utility-graph a non-private w* run, audit canary trainings): throws ConfigError(key, "is set by
// --set but `asyncdp COMMAND` does not read it: REASON; ...") for the first override (--set) that `unread`
// gives a reason for. The configuration file's own keys are the run's and are not judged: the file may be
// the very run whose objective the command solves.
void RefuseUnreadOverrides(const TrainConfig& config, std::string_view command,
                           const std::function<std::optional<std::string>(const std::string& key)>& unread);

// For a command that runs asynchronous rounds only (utility-graph, audit): throws ConfigError on
// protocol.participation for random check-ins, saying `asyncdp COMMAND` runs asynchronous rounds and `why`.
void RequireAsyncRounds(const TrainConfig& config, std::string_view command, std::string_view why);

// One line per file key that only the overrides left unread (the rule's exception), for the run's log.
std::vector<std::string> UnreadKeyWarnings(const TrainConfig& config);

}  // namespace asyncdp::sim
