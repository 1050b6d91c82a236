// Config validation at the boundary (issue 14): every number a user gives is finite and in its key's
// documented range, checked where it enters, with the key path and, for a TOML file, FILE:LINE:COL.
// The property test walks the whole field registry, so a key added later is covered automatically.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"
#include "sim/config_fields.h"
#include "sim/config_io.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

bool IsNumeric(const ConfigField& f) {
  return std::holds_alternative<int64_t*>(f.target) || std::holds_alternative<uint64_t*>(f.target) ||
         std::holds_alternative<double*>(f.target) || std::holds_alternative<std::vector<int64_t>*>(f.target) ||
         std::holds_alternative<std::vector<double>*>(f.target);
}
bool IsList(const ConfigField& f) {
  return std::holds_alternative<std::vector<int64_t>*>(f.target) ||
         std::holds_alternative<std::vector<double>*>(f.target);
}
bool IsDouble(const ConfigField& f) {
  return std::holds_alternative<double*>(f.target) || std::holds_alternative<std::vector<double>*>(f.target);
}

std::vector<ConfigField> Registry() {
  static TrainConfig defaults;
  return ConfigFields(defaults);
}

// A TOML file setting `key` (dotted) to the literal `value`, on line 2 (line 1 is a comment).
std::string TomlSetting(const std::string& key, const std::string& value) {
  const auto dot = key.rfind('.');
  const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
  const std::string name = dot == std::string::npos ? key : key.substr(dot + 1);
  if (section.empty()) return "# property test\n" + name + " = " + value + "\n";
  return "[" + section + "]\n" + name + " = " + value + "\n";
}

struct Boundary {
  std::string literal;  // TOML spelling
  double value;         // what it means (NaN for nan)
};

// 0, negatives, NaN, ±inf, ±1e308, the int64 extremes, a float beyond int64, and huge floats with
// integral values (1e15, 1e30) that an integer key may be given.
std::vector<Boundary> Boundaries() {
  const double inf = std::numeric_limits<double>::infinity();
  return {{"0", 0.0},
          {"-1", -1.0},
          {"-0.5", -0.5},
          {"nan", std::nan("")},
          {"inf", inf},
          {"-inf", -inf},
          {"1e308", 1e308},
          {"-1e308", -1e308},
          {"9223372036854775807", 9223372036854775807.0},
          {"-9223372036854775808", -9223372036854775808.0},
          {"1e15", 1e15},
          {"1e30", 1e30},
          {"10.5", 10.5}};
}

TEST(ConfigValidation, EveryNumericKeyDeclaresARange) {
  for (const ConfigField& f : Registry()) {
    if (IsNumeric(f)) {
      EXPECT_TRUE(f.range.has_value()) << f.key << ": numeric keys need a documented range";
    } else {
      EXPECT_FALSE(f.range.has_value()) << f.key;
    }
  }
}

// For every numeric key and boundary value, in a TOML file and through --set: either an error that
// names the key (TOML: at FILE:LINE:COL), or acceptance of a value that is in the documented range and
// stored exactly. Nothing else: no other exception type, no silent change of the value.
TEST(ConfigValidation, BoundaryValuesAreRefusedWithTheKeyOrAcceptedWithinTheRange) {
  int refused = 0, accepted = 0;
  for (const ConfigField& field : Registry()) {
    if (!IsNumeric(field)) continue;
    for (const Boundary& b : Boundaries()) {
      const std::string literal = IsList(field) ? "[" + b.literal + "]" : b.literal;
      SCOPED_TRACE(field.key + " = " + literal);
      const bool integral = std::isfinite(b.value) && b.value == std::trunc(b.value);
      // An integer literal always fits (TOML integers are int64); a float only well inside int64.
      const bool integer_literal = b.literal.find_first_of(".en") == std::string::npos;
      const bool representable =
          IsDouble(field) || (integral && (integer_literal || std::fabs(b.value) < 9.2e18));
      const bool should_accept = representable && field.range->Contains(b.value) &&
                                 !(std::holds_alternative<uint64_t*>(field.target) && b.value < 0);
      // TOML file.
      try {
        TrainConfig config = ParseConfigText(TomlSetting(field.key, literal), "prop.toml");
        EXPECT_TRUE(should_accept) << "accepted a value outside " << field.range->ToString();
        TrainConfig probe = config;
        for (ConfigField& f : ConfigFields(probe)) {
          if (f.key != field.key) continue;
          const std::string text = FieldValueText(f);
          if (!IsDouble(f) && !IsList(f)) {
            EXPECT_EQ(std::stod(text), b.value) << "value changed";
          }
        }
        ++accepted;
      } catch (const ConfigError& e) {
        EXPECT_FALSE(should_accept) << e.what();
        EXPECT_THAT(e.where(), StartsWith("prop.toml:2:")) << e.what();
        EXPECT_THAT(e.message(), HasSubstr(field.key));
        EXPECT_EQ(std::string(e.what()).size() < 300, true) << "overlong message: " << e.what();
        ++refused;
      } catch (const ParseError& e) {  // a literal TOML itself cannot hold (beyond int64)
        EXPECT_FALSE(should_accept) << e.what();
        EXPECT_EQ(e.line(), 2) << e.what();
        ++refused;
      }
      // --set.
      TrainConfig config;
      try {
        ApplyOverride(config, field.key + "=" + literal);
        EXPECT_TRUE(should_accept) << "--set accepted a value outside " << field.range->ToString();
      } catch (const ConfigError& e) {
        EXPECT_FALSE(should_accept) << e.what();
        EXPECT_THAT(e.what(), HasSubstr(field.key));
      }
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

TEST(ConfigValidation, RangeEndsAreAcceptedAndTheNextValuesOutsideRefused) {
  for (const ConfigField& field : Registry()) {
    if (!IsNumeric(field) || !std::isfinite(field.range->max)) continue;
    SCOPED_TRACE(field.key);
    const NumericRange& r = *field.range;
    const bool integer = !IsDouble(field);
    const double above = integer ? r.max + 1 : std::nextafter(r.max, HUGE_VAL);
    const double below = integer ? r.min - 1 : std::nextafter(r.min, -HUGE_VAL);
    EXPECT_EQ(r.Contains(r.max), !r.max_open);
    EXPECT_EQ(r.Contains(r.min), !r.min_open);
    EXPECT_FALSE(r.Contains(above));
    EXPECT_FALSE(r.Contains(below));
    auto literal = [&](double v) {
      char exact[40];
      std::snprintf(exact, sizeof(exact), "%.17g", v);
      std::string text = integer ? std::to_string(static_cast<int64_t>(v)) : std::string(exact);
      if (!integer && text.find_first_of(".e") == std::string::npos) text += ".0";
      return IsList(field) ? "[" + text + "]" : text;
    };
    if (!r.max_open) {
      EXPECT_NO_THROW(ParseConfigText(TomlSetting(field.key, literal(r.max)), "t.toml"));
    }
    EXPECT_THROW(ParseConfigText(TomlSetting(field.key, literal(above)), "t.toml"), ConfigError);
  }
}

TEST(ConfigValidation, IssueReproducersAreRefusedWithKeyAndPosition) {
  struct Case {
    std::string key, value, expected;
  };
  const std::vector<Case> cases = {
      {"dp.clip", "inf", "dp.clip: the value must be a finite number in (0, 1000000], got inf"},
      {"clients.gradient_cost", "inf", "clients.gradient_cost"},
      {"clients.latency_mean", "inf", "clients.latency_mean"},
      {"clients.straggler_factor", "inf", "clients.straggler_factor"},
      {"clients.speed_sigma", "inf", "clients.speed_sigma"},
      {"clients.delay_extra", "inf", "clients.delay_extra"},
      {"protocol.exclude_after", "inf", "protocol.exclude_after"},
      {"dp.epsilon", "inf", "dp.epsilon"},
      {"schedule.beta", "inf", "schedule.beta"},
      {"schedule.eta0", "1e308", "schedule.eta0: the value must be a finite number in (0, 10000], got 1e+308"},
      {"schedule.epochs", "inf", "schedule.epochs"},
      {"schedule.epochs", "1e30", "schedule.epochs: the value must be a finite number in (0, 1000000], got 1e+30"},
      {"schedule.iterations", "1e15", "schedule.iterations: the value must be an integer in [0, 1000000000], got 1000000000000000"},
      {"schedule.sample_size_slope", "-2", "schedule.sample_size_slope"},
      {"schedule.sample_size_slope", "inf", "schedule.sample_size_slope"},
      {"dp.sigma", "nan", "dp.sigma"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key + " = " + c.value);
    try {
      ParseConfigText("# a run\n\n" + TomlSetting(c.key, c.value), "run.toml");
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.where(), StartsWith("run.toml:4:"));
      EXPECT_THAT(e.message(), HasSubstr(c.expected));
    }
    TrainConfig config;
    try {
      ApplyOverride(config, c.key + "=" + c.value);
      ADD_FAILURE() << "--set accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.where(), "--set");
      EXPECT_THAT(e.message(), HasSubstr(c.expected));
    }
  }
}

TEST(ConfigValidation, IntegerKeysTakeIntegralFloatsAndRefuseFractions) {
  TrainConfig config = ParseConfigText("[schedule]\niterations = 5e4\n", "t.toml");
  EXPECT_EQ(config.schedule.iterations, 50000);
  try {
    ParseConfigText("[clients]\ncount = 2.5\n", "t.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "t.toml:2:9");
    EXPECT_THAT(e.message(), HasSubstr("clients.count: expected an integer, got 2.5"));
  }
}

TEST(ConfigValidation, AnIterationCountWhosePlanWouldExceedTheRoundLimitIsRefused) {
  TrainConfig config;
  config.data.train = "train.svm";
  config.dp.sigma = 1;
  config.schedule.sample_size = 1;
  config.schedule.iterations = 100'000'000;  // 10^8 rounds of one example
  try {
    ValidateConfig(config);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), "schedule.iterations");
    EXPECT_THAT(e.message(), HasSubstr("more than 10000000 rounds per client"));
  }
  config.schedule.sample_size = 100;  // 10^6 rounds: fine
  EXPECT_NO_THROW(ValidateConfig(config));
  // Linear sizes grow: K = 10^9 with s_i = 1 + 100 i takes about 4500 rounds.
  config.schedule.sample_sizes = SampleSizes::kLinear;
  config.schedule.sample_size = 1;
  config.schedule.sample_size_slope = 100;
  config.schedule.iterations = 1'000'000'000;
  EXPECT_NO_THROW(ValidateConfig(config));
  // One definition of s_i (SampleSizeAt) for this check and the plan: a fractional slope rounds to nearest
  // in both, and the plan's sizes are SampleSizeAt's (all below N_c here).
  config.schedule.sample_size = 2;
  config.schedule.sample_size_slope = 0.3;
  config.schedule.iterations = 1000;
  EXPECT_NO_THROW(ValidateConfig(config));
  const RoundPlan plan = MakeRoundPlan(config.schedule, 1'000'000);
  int64_t total = 0;
  for (int64_t i = 0; i < plan.rounds(); ++i) {
    EXPECT_EQ(plan.sample_sizes[static_cast<size_t>(i)], SampleSizeAt(config.schedule, i)) << i;
    total += SampleSizeAt(config.schedule, i);
  }
  EXPECT_GE(total, 1000);
  EXPECT_LT(total - SampleSizeAt(config.schedule, plan.rounds() - 1), 1000);  // the smallest such T
}

TEST(ConfigValidation, ValidateConfigChecksRangesOfConfigurationsBuiltInCode) {
  TrainConfig config;
  config.data.train = "train.svm";
  config.dp.sigma = 1;
  config.dp.clip = std::numeric_limits<double>::infinity();
  try {
    ValidateConfig(config);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dp.clip: the value must be a finite number in (0, 1000000], got inf"));
  }
}

TEST(ConfigValidation, ADirectoryIsNotAConfigFile) {
  try {
    LoadConfigFile("/");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.message(), HasSubstr("is a directory, expected a TOML configuration file"));
  }
}

TEST(ConfigValidation, NumbersInMessagesAreShort) {
  EXPECT_EQ(NumberText(1e300), "1e+300");
  EXPECT_EQ(NumberText(2147483647), "2147483647");
  EXPECT_EQ(NumberText(1e15), "1000000000000000");
  EXPECT_EQ(NumberText(1e16), "1e+16");
  EXPECT_EQ(NumberText(0.1), "0.1");
  EXPECT_EQ(NumberText(1e6), "1000000");
  EXPECT_EQ(NumberText(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(NumberText(std::nan("")), "nan");
  EXPECT_LE(NumberText(std::numeric_limits<double>::denorm_min()).size(), 14u);
}

}  // namespace
}  // namespace asyncdp::sim
