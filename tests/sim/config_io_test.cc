#include "sim/config_io.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <variant>

#include "core/error.h"
#include "sim/config_fields.h"

namespace asyncdp::sim {
namespace {

TEST(ConfigIo, ParsesSectionsAndKeepsDefaultsForMissingKeys) {
  const auto c = ParseConfigText("seed = 7\n[dp]\nsigma = 4\nclip = 0.5\n[model]\nhidden = [8, 4]\n", "t.toml");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_DOUBLE_EQ(c.dp.sigma, 4.0);  // an integer is accepted for a float key
  EXPECT_DOUBLE_EQ(c.dp.clip, 0.5);
  EXPECT_EQ(c.model.hidden, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(c.clients.count, 5);  // default
}

TEST(ConfigIo, RejectsUnknownKeyWithItsPathAndPosition) {
  try {
    ParseConfigText("[dp]\nsigma = 1\nsigmaa = 2\n", "run.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().rfind("run.toml:3:", 0), 0u) << e.where();
    EXPECT_NE(e.message().find("dp.sigmaa"), std::string::npos);
  }
}

TEST(ConfigIo, RejectsWrongTypeAndBadChoice) {
  EXPECT_THROW(ParseConfigText("[clients]\ncount = \"five\"\n", "x"), ConfigError);
  EXPECT_THROW(ParseConfigText("[clients]\ncount = 2.5\n", "x"), ConfigError);
  try {
    ParseConfigText("[protocol]\nruntime = \"fibers\"\n", "x.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(e.message().find("protocol.runtime"), std::string::npos);
    EXPECT_NE(e.message().find("virtual, threads"), std::string::npos);
  }
}

// Enumerated keys (sim/config_enum.h) are parsed once into their enum, from TOML and from --set (quoted or
// not); a word outside the set is refused where it enters, with its position and every allowed word; the
// resolved config writes the word back, and the registry's choices are the enum's words.
TEST(ConfigIo, EnumeratedKeysParseIntoTheirEnum) {
  const TrainConfig parsed = ParseConfigText(
      "[dp]\nclip_mode = \"adaptive\"\nunit = \"client\"\n[schedule]\nsample_sizes = \"linear\"\n", "e.toml");
  EXPECT_EQ(parsed.dp.clip_mode, ClipMode::kAdaptive);
  EXPECT_EQ(parsed.dp.unit, PrivacyUnit::kClient);
  EXPECT_EQ(parsed.schedule.sample_sizes, SampleSizes::kLinear);
  TrainConfig c;
  ApplyOverride(c, "schedule.sample_sizes=list");
  ApplyOverride(c, "dp.unit=\"client\"");
  EXPECT_EQ(c.schedule.sample_sizes, SampleSizes::kList);
  EXPECT_EQ(c.dp.unit, PrivacyUnit::kClient);
  try {
    ParseConfigText("[dp]\nunit = \"user\"\n", "u.toml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().rfind("u.toml:2:", 0), 0u) << e.where();
    EXPECT_NE(e.message().find("dp.unit: expected one of record, client, got \"user\""), std::string::npos)
        << e.message();
  }
  EXPECT_THROW(ApplyOverride(c, "dp.clip_mode=1"), ConfigError);  // not a string
  EXPECT_EQ(c.dp.clip_mode, ClipMode::kFixed);                    // unchanged by the refused values
  const std::string toml = ToToml(parsed);
  EXPECT_NE(toml.find("clip_mode = 'adaptive'"), std::string::npos) << toml;
  EXPECT_NE(toml.find("sample_sizes = 'linear'"), std::string::npos);
  EXPECT_EQ(ParseConfigText(toml, "resolved").dp.unit, PrivacyUnit::kClient);
  auto fields = ConfigFields(c);
  EXPECT_EQ(FindField(fields, "schedule.sample_sizes")->choices,
            (std::vector<std::string>{"constant", "list", "linear"}));
  EXPECT_EQ(FieldValueText(*FindField(fields, "dp.unit")), "\"client\"");
  EXPECT_EQ(ToString(ClipMode::kAdaptive), "adaptive");
  EXPECT_EQ(EnumFromString<PrivacyUnit>("record"), PrivacyUnit::kRecord);
  EXPECT_FALSE(EnumFromString<PrivacyUnit>("Record").has_value());
}

// Every enumerated key, each of its words: --set stores it, the resolved TOML writes it back and reads the
// same enum, a word of another key is refused naming the key and its choices, and the enumerated keys
// converted in issue 30 are all among them.
TEST(ConfigIo, EveryEnumeratedKeyRoundTripsEachOfItsWords) {
  TrainConfig probe;
  std::vector<std::string> enumerated;
  for (const ConfigField& field : ConfigFields(probe)) {
    if (!std::holds_alternative<EnumBinding>(field.target)) continue;
    enumerated.push_back(field.key);
    ASSERT_FALSE(field.choices.empty()) << field.key;
    for (const std::string& word : field.choices) {
      SCOPED_TRACE(field.key + " = " + word);
      TrainConfig c;
      ApplyOverride(c, field.key + "=" + word);
      auto fields = ConfigFields(c);
      EXPECT_EQ(FieldValueText(*FindField(fields, field.key)), "\"" + word + "\"");
      // The word's serialisation is tested, not which keys a default run reads: a written key the run does
      // not read would be a comment in the TOML (config_usage_test.cc covers that), so forget who wrote it.
      c.given = {};
      TrainConfig back = ParseConfigText(ToToml(c), "resolved.toml");
      auto back_fields = ConfigFields(back);
      EXPECT_EQ(FieldValueText(*FindField(back_fields, field.key)), "\"" + word + "\"");
    }
    TrainConfig c;
    try {
      ApplyOverride(c, field.key + "=not_a_word");
      ADD_FAILURE() << field.key << " accepted an unknown word";
    } catch (const ConfigError& e) {
      EXPECT_NE(e.message().find(field.key + ": expected one of " + field.choices.front()), std::string::npos)
          << e.message();
    }
  }
  for (const char* key : {"checkin.variant", "checkin.step_rule", "proactive.phase_sizing", "proactive.gamma_mode",
                          "audit.canary", "data.partition", "dp.sampling", "schedule.step_rule", "dp.accountant",
                          "model.activation", "model.regularizer_convention", "dp.clip_mode", "protocol.runtime"}) {
    EXPECT_NE(std::find(enumerated.begin(), enumerated.end(), key), enumerated.end()) << key;
  }
  // The words past parsing are the enums the code uses.
  TrainConfig c;
  ApplyOverride(c, "checkin.variant=sliding_window");
  ApplyOverride(c, "dp.accountant=rdp");
  ApplyOverride(c, "schedule.step_rule=inverse_sqrt");
  EXPECT_EQ(c.checkin.variant, checkin::Variant::kSlidingWindow);
  EXPECT_EQ(ToAccountantKind(c.dp.accountant), accounting::AccountantKind::kRdp);
  EXPECT_EQ(c.schedule.step_rule, StepSizeSchedule::kInverseSqrt);
}

TEST(ConfigIo, SyntaxErrorReportsLineAndColumn) {
  try {
    ParseConfigText("[dp]\nsigma = = 3\n", "bad.toml");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), "bad.toml");
    EXPECT_EQ(e.line(), 2);
  }
}

TEST(ConfigIo, OverridesUseDottedKeysAndTomlLikeValues) {
  TrainConfig c;
  ApplyOverride(c, "dp.sigma=4");
  ApplyOverride(c, "data.train=/tmp/a b.txt");
  ApplyOverride(c, "protocol.runtime=\"threads\"");
  ApplyOverride(c, "model.hidden=16,8");
  ApplyOverride(c, "dp.enabled=false");
  ApplyOverride(c, "seed=9");
  EXPECT_DOUBLE_EQ(c.dp.sigma, 4.0);
  EXPECT_EQ(c.data.train, "/tmp/a b.txt");
  EXPECT_EQ(c.protocol.runtime, RuntimeKind::kThreads);
  EXPECT_EQ(c.model.hidden, (std::vector<int64_t>{16, 8}));
  EXPECT_FALSE(c.dp.enabled);
  EXPECT_EQ(c.seed, 9u);
  EXPECT_THROW(ApplyOverride(c, "dp.sigmaa=1"), ConfigError);
  EXPECT_THROW(ApplyOverride(c, "dp.sigma"), ConfigError);
  EXPECT_THROW(ApplyOverride(c, "dp.sigma=abc"), ConfigError);
  EXPECT_THROW(ApplyOverride(c, "protocol.runtime=fibers"), ConfigError);
}

TEST(ConfigIo, OverridesApplyInOrderAndTheLaterOfTwoValuesIsUsed) {
  // (The warning that names both values: TrainCommand.ALaterSetOfTheSameKeyWinsWithAWarning.)
  TrainConfig c;
  ApplyOverrides(c, {"dp.sigma=4", "seed=3"});
  ApplyOverrides(c, {"dp.sigma=5"});  // a later layer overrides an earlier one's key, as --set the file's
  EXPECT_DOUBLE_EQ(c.dp.sigma, 5.0);
  EXPECT_EQ(c.seed, 3u);
  ApplyOverrides(c, {"dp.sigma=6", "seed=4", " dp.sigma = 7"});
  EXPECT_DOUBLE_EQ(c.dp.sigma, 7.0);
  EXPECT_EQ(c.seed, 4u);
  EXPECT_THROW(ApplyOverrides(c, {"dp.sigma=1", "dp.sigmaa=1"}), ConfigError);  // each assignment is checked
}

TEST(ConfigIo, ValidationNamesTheOffendingKey) {
  TrainConfig c;
  c.data.train = "x";
  c.dp.sigma = 1.0;
  EXPECT_NO_THROW(ValidateConfig(c));
  auto expect_key = [&](TrainConfig bad, const std::string& key) {
    try {
      ValidateConfig(bad);
      FAIL() << key;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.where(), key);
    }
  };
  TrainConfig bad = c;
  bad.dp.clip = 0;
  expect_key(bad, "dp.clip");
  bad = c;
  bad.clients.dropout_ids = {1};
  expect_key(bad, "protocol.exclude_after");  // a silent client would stall the run
  bad = c;
  bad.dp.sigma = 0;
  expect_key(bad, "dp.sigma");  // DP on, but neither sigma nor a target epsilon
  bad = c;
  bad.data.train.clear();
  expect_key(bad, "data.train");
  // The proactive phases run on every runtime and every MPI placement (docs/mpi.md).
  TrainConfig proactive = c;
  proactive.dp.sigma = 0.0;
  proactive.targets.accuracy = 0.8;
  proactive.targets.epsilon = 2.0;
  proactive.proactive.phase_sigmas = {8.0, 5.0};
  proactive.proactive.phase_epochs = {0.2, 1.0};
  proactive.protocol.runtime = RuntimeKind::kMpi;
  EXPECT_NO_THROW(ValidateConfig(proactive));
  // Balanced placement weighs each client's phases, planned from N_c before any feature is read.
  TrainConfig balanced = proactive;
  balanced.protocol.mpi_placement = MpiPlacement::kBalanced;
  EXPECT_NO_THROW(ValidateConfig(balanced));
  TrainConfig diagnostics = proactive;
  diagnostics.output.diagnostics = true;  // rank 0 reads every client's held-out rows for them
  EXPECT_NO_THROW(ValidateConfig(diagnostics));
}

TEST(ConfigIo, ResolvedTomlRoundTripsEveryField) {
  TrainConfig c;
  c.data.train = "path with \"quotes\".txt";
  c.dp.sigma = 19.29962;
  c.model.kind = "mlp";  // which reads model.hidden (an unread key written back is a comment)
  c.model.hidden = {32, 16};
  c.clients.straggler_ids = {0, 3};
  c.seed = 123456789012345ULL;
  TrainConfig back = ParseConfigText(ToToml(c), "resolved");
  EXPECT_EQ(ToToml(back), ToToml(c));
  EXPECT_EQ(back.data.train, c.data.train);
  EXPECT_EQ(back.seed, c.seed);
}

// -0.0 (a TOML float the user may write) is written as 0, so the resolved text reads back to itself: "-0"
// read back as the integer 0 and was then written "0" (fuzz/fuzz_config.cc found it at model.l2_lambda).
TEST(ConfigIo, NegativeZeroRoundTrips) {
  TrainConfig c = ParseConfigText("[data]\ntrain = \"a.svm\"\n[model]\nkind = \"logistic_l2\"\nl2_lambda = -0.0\n",
                                  "negative_zero.toml");
  const std::string written = ToToml(c);
  EXPECT_THAT(written, ::testing::HasSubstr("\nl2_lambda = 0\n"));
  EXPECT_EQ(ToToml(ParseConfigText(written, "resolved")), written);
}

TEST(ConfigIo, EveryFieldIsDocumented) {
  TrainConfig c;
  for (const auto& f : ConfigFields(c)) EXPECT_FALSE(f.doc.empty()) << f.key;
  const std::string doc = RenderConfigDoc();
  for (const auto& f : ConfigFields(c)) EXPECT_NE(doc.find("`" + f.key + "`"), std::string::npos) << f.key;
}

}  // namespace
}  // namespace asyncdp::sim
