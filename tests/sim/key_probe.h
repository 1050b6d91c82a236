// The probe the "which keys does this command read" tests share (tests/sim/reference_objective_test.cc,
// utility_graph_test.cc, audit/audit_keys_test.cc): every registry key of a base configuration, set alone
// to another valid value, either changes the outputs (read), is refused with a message, or is called unread
// with a reason — and then leaves the outputs bit-identical. A key called read that changes nothing must be
// listed with the reason it has no effect in that base. In asyncdp::testing beside config_change.h.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/error.h"
#include "sim/config.h"
#include "sim/config_fields.h"
#include "tests/sim/config_change.h"

namespace asyncdp::testing {

struct KeyProbeCounts {
  int read = 0;    // keys called read whose change ran
  int unread = 0;  // keys called unread whose change ran
};

// `outputs` runs a configuration and returns what it reports (timings removed); `unread` is the command's
// reason function; `what` names the outputs in failure messages ("w*", "the graph", "the audit").
inline KeyProbeCounts ProbeEveryKey(
    const sim::TrainConfig& base, const std::function<std::string(const sim::TrainConfig&)>& outputs,
    const std::function<std::optional<std::string>(const std::string& key, const sim::TrainConfig&)>& unread,
    const std::map<std::string, std::string>& no_effect_here, const std::string& what) {
  KeyProbeCounts counts;
  const std::string baseline = outputs(base);
  sim::TrainConfig probe = base;
  const size_t keys = sim::ConfigFields(probe).size();
  for (size_t i = 0; i < keys; ++i) {
    sim::TrainConfig changed = base;
    auto fields = sim::ConfigFields(changed);
    ConfigField& field = fields[i];
    if (!SetOtherValue(field)) continue;
    SCOPED_TRACE(field.key + " = " + sim::FieldValueText(field));
    const std::optional<std::string> why = unread(field.key, changed);
    std::string changed_outputs;
    try {
      changed_outputs = outputs(changed);
    } catch (const InputError&) {
      continue;  // refused with a message (a key called unread: as an override it is refused before this)
    }
    if (why) {
      ++counts.unread;
      EXPECT_EQ(changed_outputs, baseline)
          << field.key << " is called unread (" << *why << ") but changed " << what;
    } else {
      ++counts.read;
      if (changed_outputs == baseline) {
        EXPECT_TRUE(no_effect_here.contains(field.key)) << field.key << " is called read but changed nothing";
      }
    }
  }
  return counts;
}

}  // namespace asyncdp::testing
