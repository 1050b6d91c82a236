// Which keys the objective F of `asyncdp reference-optimum` reads (sim/reference_objective.h), probed:
// every registry key set to another valid value either changes w* (F reads it), is refused with a message,
// or is called unread with a reason — and then leaves w* bit-identical. The command refuses an override of
// an unread key; this test keeps that list true in both directions.
#include "sim/reference_objective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "tests/sim/key_probe.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

using ::testing::HasSubstr;

// w* and F(w*) of a configuration's objective, bit for bit (JSON writes doubles so that they read back).
std::string Solution(const TrainConfig& config) {
  const models::ReferenceOptimum ref = SolveReferenceObjective(BuildReferenceObjective(config), {});
  std::vector<double> out(ref.params.data(), ref.params.data() + ref.params.size());
  out.push_back(ref.objective);
  out.push_back(ref.evaluated_objective);
  return nlohmann::json(out).dump();
}

TEST(ReferenceObjective, EveryKeyChangesTheOptimumOrIsCalledUnreadAndChangesNothing) {
  const TrainConfig base = testing::SmallA9aConfig(3, 300);
  // Keys F reads that leave w* unchanged in this base, and why.
  const std::map<std::string, std::string> no_effect_here = {
      {"data.format", "\"auto\" already reads the LIBSVM files as LIBSVM"},
      {"data.features", "another column count is refused or pads columns no row uses"},
  };
  const auto [read, unread] =
      ::asyncdp::testing::ProbeEveryKey(base, Solution, ReferenceObjectiveUnreadReason, no_effect_here, "w*");
  EXPECT_GE(read, 8);     // seed, the data split, the model's objective keys
  EXPECT_GT(unread, 80);  // privacy, schedule, protocol, evaluation, outputs, ...
}

TEST(ReferenceObjective, AnOverrideOfAKeyTheObjectiveDoesNotReadIsRefusedNamingIt) {
  TrainConfig config = testing::SmallA9aConfig(3, 300);
  const auto refuse = [&config] {
    RefuseUnreadOverrides(config, "reference-optimum", [&config](const std::string& key) {
      return ReferenceObjectiveUnreadReason(key, config);
    });
  };
  ApplyOverride(config, "seed=3");
  ApplyOverride(config, "model.l2_lambda=0.01");
  EXPECT_NO_THROW(refuse());
  ApplyOverride(config, "dp.sigma=3");
  try {
    refuse();
    ADD_FAILURE() << "dp.sigma was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dp.sigma"));
    EXPECT_THAT(e.what(), HasSubstr("reference-optimum"));
    EXPECT_THAT(e.what(), HasSubstr("data.train"));  // names what F does read
  }
  // A key of the objective the split does not read: the Dirichlet concentration of an iid split.
  TrainConfig iid = testing::SmallA9aConfig(3, 300);
  ApplyOverride(iid, "data.dirichlet_alpha=0.1");
  EXPECT_TRUE(ReferenceObjectiveUnreadReason("data.dirichlet_alpha", iid));
}

}  // namespace
}  // namespace asyncdp::sim
