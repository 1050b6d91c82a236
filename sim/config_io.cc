#include "sim/config_io.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <toml++/toml.h>

#include "core/accounting/schedule.h"
#include "core/error.h"
#include "sim/audit/train_canaries.h"
#include "sim/config_fields.h"
#include "sim/config_usage.h"
#include "sim/privacy_setup.h"
#include "sim/round_plan.h"

namespace asyncdp::sim {
namespace {

std::string Where(const std::string& origin, const toml::source_region& src) {
  return fmt::format("{}:{}:{}", origin, src.begin.line, src.begin.column);
}

void CheckChoice(const ConfigField& field, const std::string& value, const std::string& where) {
  if (field.choices.empty()) return;
  if (std::find(field.choices.begin(), field.choices.end(), value) != field.choices.end()) return;
  std::string allowed;
  for (const auto& c : field.choices) allowed += (allowed.empty() ? "" : ", ") + c;
  throw ConfigError(where, fmt::format("{}: expected one of {}, got \"{}\"", field.key, allowed, value));
}

// An integer key's value: a TOML integer, or a float with an integral value (`iterations = 5e4`). A float
// beyond int64 is reported against the key's range, never converted.
int64_t IntegerOf(const ConfigField& field, const toml::node& node, const std::string& where,
                  const char* expected) {
  if (node.is_integer()) return node.as_integer()->get();
  if (node.is_floating_point()) {
    const double v = node.as_floating_point()->get();
    if (std::isfinite(v) && v == std::trunc(v)) {
      CheckNumberInRange(field, v, where);
      if (std::fabs(v) < 9.2e18) return static_cast<int64_t>(v);
    }
    throw ConfigError(where, fmt::format("{}: expected {}, got {}", field.key, expected, NumberText(v)));
  }
  throw ConfigError(where, fmt::format("{}: expected {}", field.key, expected));
}

// Sets `field` from a TOML node; `where` locates the node for errors.
void SetFromNode(ConfigField& field, const toml::node& node, const std::string& where) {
  auto fail = [&](const char* expected) {
    throw ConfigError(where, fmt::format("{}: expected {}", field.key, expected));
  };
  std::visit(
      [&](const auto& target) {
        if constexpr (std::is_same_v<std::decay_t<decltype(target)>, EnumBinding>) {
          if (!node.is_string()) fail("a string");
          const std::string text = node.as_string()->get();
          CheckChoice(field, text, where);  // one of the enum's words, or a message naming them all
          target.Set(text);
        } else {
          auto* p = target;
          using T = std::decay_t<decltype(*p)>;
          if constexpr (std::is_same_v<T, std::string>) {
            if (!node.is_string()) fail("a string");
            *p = node.as_string()->get();
            CheckChoice(field, *p, where);
          } else if constexpr (std::is_same_v<T, bool>) {
            if (!node.is_boolean()) fail("true or false");
            *p = node.as_boolean()->get();
          } else if constexpr (std::is_same_v<T, double>) {
            if (node.is_integer()) {
              *p = static_cast<double>(node.as_integer()->get());
            } else if (node.is_floating_point()) {
              *p = node.as_floating_point()->get();
            } else {
              fail("a number");
            }
          } else if constexpr (std::is_same_v<T, int64_t>) {
            *p = IntegerOf(field, node, where, "an integer");
          } else if constexpr (std::is_same_v<T, uint64_t>) {
            const int64_t v = IntegerOf(field, node, where, "a non-negative integer");
            if (v < 0) fail("a non-negative integer");
            *p = static_cast<uint64_t>(v);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            if (!node.is_array()) fail("an array of numbers");
            p->clear();
            for (const auto& item : *node.as_array()) {
              if (item.is_integer()) {
                p->push_back(static_cast<double>(item.as_integer()->get()));
              } else if (item.is_floating_point() && std::isfinite(item.as_floating_point()->get())) {
                p->push_back(item.as_floating_point()->get());
              } else {
                fail("an array of finite numbers");
              }
            }
          } else {
            if (!node.is_array()) fail("an array of integers");
            p->clear();
            for (const auto& item : *node.as_array()) {
              p->push_back(IntegerOf(field, item, where, "an array of integers"));
            }
          }
        }
      },
      field.target);
  // Every number is checked here, where it enters, so the error carries FILE:LINE:COL (or the --set key).
  CheckFieldRange(field, where);
}

void WalkTable(const toml::table& table, const std::string& prefix, std::vector<ConfigField>& fields,
               const std::string& origin, TrainConfig& config) {
  for (const auto& [key, node] : table) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    const std::string where = Where(origin, node.source());
    if (node.is_table()) {
      WalkTable(*node.as_table(), path, fields, origin, config);
      continue;
    }
    ConfigField* field = FindField(fields, path);
    if (field == nullptr) {
      throw ConfigError(where, fmt::format("unknown key \"{}\" (see docs/config.md)", path));
    }
    SetFromNode(*field, node, where);
    config.given.NoteBase(path);
  }
}

std::string Trim(std::string s) {
  const auto not_space = [](unsigned char ch) { return !std::isspace(ch); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// With schedule.iterations = K given, the number of rounds T a client's plan will hold follows from the
// sample sizes alone (capping s at N_c later can only add rounds): T = the smallest T with sum_{i<T} s_i >= K,
// as MakeRoundPlan counts. Refuse a K whose plan would exceed the schedule.rounds limit, instead of building
// it until memory runs out.
void CheckImpliedRounds(const TrainConfig& c) {
  const ScheduleConfig& s = c.schedule;
  if (s.rounds > 0 || s.iterations == 0) return;
  TrainConfig copy = c;
  auto fields = ConfigFields(copy);
  const auto max_rounds = static_cast<int64_t>(FindField(fields, "schedule.rounds")->range->max);
  int64_t rounds = 0;
  if (s.sample_sizes == SampleSizes::kConstant) {
    rounds = (s.iterations + s.sample_size - 1) / s.sample_size;
  } else {
    for (int64_t t = 0; t < s.iterations && rounds <= max_rounds; ++rounds) t += SampleSizeAt(s, rounds);
  }
  if (rounds > max_rounds) {
    throw ConfigError("schedule.iterations",
                      fmt::format("K = {} gradient computations take more than {} rounds per client with these "
                                  "sample sizes (the round limit, see schedule.rounds); raise the sample size or "
                                  "lower K",
                                  s.iterations, max_rounds));
  }
}

// dp.sampling = "random_allocation" inside the Proactive-DP clients: what it combines with. Every round has
// the same rate k/m and is accounted by the random-allocation accountant only.
void ValidateAllocation(const TrainConfig& c) {
  const auto require = [](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  // Which accountant can account the rounds is the mechanism's (core/accounting/dp_event.h,
  // ApplicableLimitation), checked where the privacy setup is resolved (sim/privacy_setup.cc).
  if (c.dp.sampling != SamplingModel::kRandomAllocation) return;
  require(
      c.protocol.participation == Participation::kAsyncRounds, "dp.sampling",
      "random_allocation samples a Proactive-DP client's records (protocol.participation = "
      "\"async_rounds\"); check-ins (\"check_in\") allocate clients to steps themselves: leave dp.sampling "
      "at its default");
  require(!c.dp.secure_noise, "dp.secure_noise",
          "the random-allocation bounds assume continuous Gaussian noise; secure noise is not covered");
  require(c.schedule.sample_sizes == SampleSizes::kConstant, "schedule.sample_sizes",
          "random allocation gives every round the same expected batch N k / m: use \"constant\"");
  require(c.targets.accuracy == 0 && c.targets.client_accuracy.empty(), "targets.accuracy",
          "the proactive phases are planned for Poisson sampling; random_allocation runs without them");
  require(c.dp.allocation_steps == 0 || c.dp.allocation_k <= c.dp.allocation_steps, "dp.allocation_k",
          fmt::format("k = {} allocations per window exceed the window's m = {} rounds", c.dp.allocation_k,
                      c.dp.allocation_steps));
}

// Adaptive clipping (dp.clip_mode = "adaptive"): what it is accounted for and where it runs.
void ValidateClipping(const TrainConfig& c) {
  if (c.dp.clip_mode != ClipMode::kAdaptive) return;
  const auto require = [](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  require(!c.dp.enabled || c.dp.clip_count_sigma > 0, "dp.clip_count_sigma",
          "required (> 0) with DP and adaptive clipping: the count of unclipped examples is released with this "
          "noise and accounted (0 would release it exactly)");
  require(!c.dp.secure_noise, "dp.secure_noise", "adaptive clipping is accounted for continuous Gaussian noise only");
  require(c.dp.sampling != SamplingModel::kRandomAllocation, "dp.sampling",
          "adaptive clipping is accounted by the subsampled-Gaussian accountants; random_allocation is not "
          "covered");
  require(c.targets.accuracy == 0 && c.targets.client_accuracy.empty(), "targets.accuracy",
          "the proactive phases plan a fixed clip norm; run adaptive clipping without them");
  require(c.dp.sigma_schedule.empty(), "dp.sigma_schedule",
          "adaptive clipping's count noise is fixed per round; a sigma profile would not calibrate linearly");
  require(c.audit.canaries == 0, "audit.canaries",
          "the training-run audit plants canaries scaled to a fixed C; audit adaptive clipping with `asyncdp audit`");
}

// User-level DP (dp.unit = "client"): what its accounting covers.
void ValidateUnit(const TrainConfig& c) {
  if (c.dp.unit != PrivacyUnit::kClient) return;
  const auto require = [](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  require(c.dp.client_clip > 0, "dp.client_clip", "required (> 0) with dp.unit = \"client\": the norm a round's "
                                                  "whole update is clipped to");
  require(c.dp.sampling == SamplingModel::kPoisson, "dp.sampling",
          "user-level DP composes every round of a client (no amplification by the record sampler); the "
          "record-level guarantee beside it assumes Poisson sampling: leave dp.sampling = \"poisson\"");
  require(!c.dp.secure_noise, "dp.secure_noise", "user-level DP is accounted for continuous Gaussian noise only");
  require(c.dp.clip_mode == ClipMode::kFixed, "dp.clip_mode",
          "adaptive clipping is accounted per record, not per client");
  require(c.targets.accuracy == 0 && c.targets.client_accuracy.empty(), "targets.accuracy",
          "the proactive phases are planned for record-level DP");
  require(c.audit.canaries == 0, "audit.canaries", "the training-run audit plants record canaries (record-level)");
}

// The proactive framework's keys (targets.*, proactive.*) and dp.sigma_schedule.
void ValidateTargets(const TrainConfig& c) {
  const auto require = [](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  for (double m : c.dp.sigma_schedule) {
    require(m > 0 && std::isfinite(m), "dp.sigma_schedule", "multipliers must be finite and > 0");
  }
  const TargetsConfig& t = c.targets;
  require(t.accuracy >= 0 && t.accuracy <= 1, "targets.accuracy", "must be in [0, 1] (0 = off)");
  require(t.epsilon >= 0 && std::isfinite(t.epsilon), "targets.epsilon", "must be a finite number >= 0");
  require(t.delta >= 0 && t.delta < 1, "targets.delta", "must be in [0, 1)");
  require(t.holdout_fraction > 0 && t.holdout_fraction < 1, "targets.holdout_fraction", "must be in (0, 1)");
  for (const auto* list : {&t.client_accuracy, &t.client_epsilon}) {
    const std::string key = list == &t.client_accuracy ? "targets.client_accuracy" : "targets.client_epsilon";
    require(list->empty() || static_cast<int64_t>(list->size()) == c.clients.count, key,
            fmt::format("needs one entry per client ({}), got {}", c.clients.count, list->size()));
  }
  for (double a : t.client_accuracy) require(a > 0 && a <= 1, "targets.client_accuracy", "entries must be in (0, 1]");
  for (double e : t.client_epsilon) require(e > 0, "targets.client_epsilon", "entries must be > 0");
  const bool on = t.on();
  if (!on) return;
  require(c.dp.enabled, "dp.enabled", "targets.accuracy needs DP (the budget is what the phases spend)");
  require(t.epsilon > 0 || !t.client_epsilon.empty(), "targets.epsilon",
          "required with targets.accuracy: the budget epsilon_target each client may never exceed");
  // dp.sigma, dp.epsilon and dp.sigma_schedule, which the phases replace, are refused by the usage rules
  // (config_usage.h) like every other key the framework does not read.
  require(!c.dp.secure_noise, "dp.secure_noise",
          "the proactive phases are accounted for Gaussian noise only");
  const ProactiveConfig& p = c.proactive;
  require(!p.phase_sigmas.empty(), "proactive.phase_sigmas", "needs at least one phase");
  require(p.phase_epochs.size() == p.phase_sigmas.size(), "proactive.phase_epochs",
          fmt::format("needs one entry per phase ({}), got {}", p.phase_sigmas.size(), p.phase_epochs.size()));
  for (double k : p.phase_epochs) require(k > 0, "proactive.phase_epochs", "entries must be > 0");
  const bool e1 = p.phase_sizing == PhaseSizing::kE1;
  for (size_t j = 0; j < p.phase_sigmas.size(); ++j) {
    const double sigma = p.phase_sigmas[j];
    const bool derive_first = e1 && j == 0 && sigma == 0.0;
    require(derive_first || sigma > 0, "proactive.phase_sigmas",
            fmt::format("entry {} must be > 0{}", j, e1 && j == 0 ? " (or 0 = derive from (35))" : ""));
    if (j > 0 && p.phase_sigmas[j - 1] > 0) {
      require(sigma < p.phase_sigmas[j - 1], "proactive.phase_sigmas",
              "must decrease: a later phase lowers sigma (Appendix E.1; docs/theory.md §6)");
    }
  }
  require(c.dp.sampling == SamplingModel::kPoisson || !e1, "dp.sampling",
          "the E.1 calculator (proactive.phase_sizing = \"e1\") assumes Poisson sampling");
}

}  // namespace

TrainConfig ParseConfigText(const std::string& text, const std::string& origin) {
  toml::table table;
  try {
    table = toml::parse(std::string_view(text), std::string_view(origin));
  } catch (const toml::parse_error& e) {
    throw ParseError(origin, e.source().begin.line, e.source().begin.column, std::string(e.description()));
  }
  TrainConfig config;
  auto fields = ConfigFields(config);
  WalkTable(table, "", fields, origin, config);
  // What the file alone leaves unread is the file's own contradiction; what only the overrides (or code
  // editing the loaded file) leave unread is their doing (sim/config_usage.h).
  for (const std::string& key : config.given.base) {
    if (UnusedKeyReason(key, config)) config.given.unread_in_base.push_back(key);
  }
  return config;
}

TrainConfig LoadConfigFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path, "is a directory, expected a TOML configuration file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open config file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseConfigText(buffer.str(), path);
}

void ApplyOverride(TrainConfig& config, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) {
    throw ConfigError("--set " + assignment, "expected key=value");
  }
  const std::string key = Trim(assignment.substr(0, eq));
  std::string value = Trim(assignment.substr(eq + 1));
  auto fields = ConfigFields(config);
  ConfigField* field = FindField(fields, key);
  if (field == nullptr) throw ConfigError(key, "unknown key (see docs/config.md)");
  // Reuse the TOML value grammar: strings may come unquoted, lists without brackets.
  const bool is_string = std::holds_alternative<std::string*>(field->target) ||
                         std::holds_alternative<EnumBinding>(field->target);
  const bool is_list = std::holds_alternative<std::vector<int64_t>*>(field->target) ||
                       std::holds_alternative<std::vector<double>*>(field->target);
  if (is_string && (value.empty() || value.front() != '"')) {
    std::string quoted = "\"";
    for (char ch : value) quoted += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
    value = quoted + "\"";
  }
  if (is_list && (value.empty() || value.front() != '[')) value = "[" + value + "]";
  toml::table parsed;
  try {
    const std::string text = "v = " + value;
    parsed = toml::parse(std::string_view(text), std::string_view("--set"));
  } catch (const toml::parse_error& e) {
    throw ConfigError(key, fmt::format("cannot parse value \"{}\": {}", value, e.description()));
  }
  SetFromNode(*field, *parsed.get("v"), "--set");
  config.given.NoteOverride(key);
}

void ApplyOverrides(TrainConfig& config, const std::vector<std::string>& assignments) {
  std::map<std::string, std::string> earlier;  // key → the assignment that set it so far in this layer
  const auto value_of = [](const std::string& assignment) { return Trim(assignment.substr(assignment.find('=') + 1)); };
  for (const std::string& assignment : assignments) {
    ApplyOverride(config, assignment);  // refuses a malformed or unknown one first
    const std::string key = Trim(assignment.substr(0, assignment.find('=')));
    // Later replaces earlier (a wrapper's --set list plus one more is a common way to vary one key), but
    // not silently: the dropped value is named. The same value again replaces nothing.
    const auto at = earlier.find(key);
    if (at != earlier.end() && value_of(at->second) != value_of(assignment)) {
      spdlog::warn("{}: given twice ({}, then {}); the later value is used", key, at->second, Trim(assignment));
    }
    earlier.insert_or_assign(key, Trim(assignment));
  }
}

void ValidateConfig(const TrainConfig& c, bool refuse_unused_keys) {
  // Ranges first: each key's range lives in the registry and was checked where the value entered; this
  // repeats it for configurations built in code.
  {
    TrainConfig copy = c;
    for (const ConfigField& field : ConfigFields(copy)) CheckFieldRange(field, field.key);
  }
  auto require = [](bool ok, const char* key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  require(!c.data.train.empty(), "data.train", "required: path of the training data");
  for (const auto* ids : {&c.clients.straggler_ids, &c.clients.dropout_ids, &c.clients.delay_ids}) {
    for (int64_t id : *ids) {
      require(id >= 0 && id < c.clients.count, "clients", fmt::format("client id {} out of range", id));
    }
  }
  require(c.clients.dropout_ids.empty() || c.protocol.exclude_after > 0, "protocol.exclude_after",
          "clients.dropout_ids is set: a silent client would stall the global round forever; set "
          "protocol.exclude_after > 0");
  require(static_cast<int64_t>(c.clients.dropout_ids.size()) < c.clients.count, "clients.dropout_ids",
          "at least one client must not drop out");
  require(c.protocol.participation != Participation::kCheckIn ||
              (c.protocol.server_step == ServerStep::kFull && c.protocol.staleness_exponent == 0.0),
          "protocol.server_step", "applies to async_rounds only; random check-ins use checkin.step_rule");
  ValidateTargets(c);
  ValidateAllocation(c);
  // The mechanism's rule, not a copy of it: which accountants can account it (sim/privacy_setup.h).
  if (c.protocol.participation == Participation::kAsyncRounds) CheckAccountantApplies(c);
  ValidateClipping(c);
  ValidateUnit(c);
  require(!c.dp.enabled || c.dp.sigma > 0 || c.dp.epsilon > 0 || c.targets.accuracy > 0, "dp.sigma",
          "DP is enabled: set dp.sigma > 0, or dp.epsilon > 0 to calibrate sigma (or dp.enabled = false)");
  if (c.dp.enabled && c.dp.sigma > 0) {
    accounting::ValidateNoiseMultiplier(c.dp.sigma, "dp.sigma");
    for (const double m : c.dp.sigma_schedule) {
      accounting::ValidateNoiseMultiplier(c.dp.sigma * m, "dp.sigma_schedule");  // sigma * m_j per part
    }
  }
  require(c.schedule.sample_sizes != SampleSizes::kList || !c.schedule.sample_size_list.empty(),
          "schedule.sample_size_list", "required when schedule.sample_sizes = \"list\"");
  CheckImpliedRounds(c);
  audit::ValidateTrainAudit(c);
  if (refuse_unused_keys) RefuseUnusedKeys(c);
}

std::string ToToml(const TrainConfig& config) {
  TrainConfig copy = config;
  TrainConfig defaults_config;
  const auto fields = ConfigFields(copy);
  const auto defaults = ConfigFields(defaults_config);
  std::string out;
  std::string section;
  for (size_t i = 0; i < fields.size(); ++i) {
    const ConfigField& f = fields[i];
    const auto dot = f.key.find('.');
    const std::string this_section = dot == std::string::npos ? "" : f.key.substr(0, dot);
    const std::string name = dot == std::string::npos ? f.key : f.key.substr(dot + 1);
    if (this_section != section) {
      out += fmt::format("\n[{}]\n", this_section);
      section = this_section;
    }
    // Strings go through toml++ for correct escaping.
    std::string value;
    if (const auto* s = std::get_if<std::string*>(&f.target)) {
      std::ostringstream os;
      os << toml::value<std::string>(**s);
      value = os.str();
    } else if (const auto* e = std::get_if<EnumBinding>(&f.target)) {
      std::ostringstream os;
      os << toml::value<std::string>(e->Get());
      value = os.str();
    } else {
      value = FieldValueText(f);
    }
    // A key this run does not read is written as a comment when it sits at its default or the user wrote
    // it: re-running the file must not give it (in a file alone, a written key that is not read is refused,
    // sim/config_usage.h), and the reader still sees its value. (An unread key set in code away from its
    // default is written as it is, so the text parses back to the same configuration; such a configuration
    // is refused when it is run.)
    if (const auto why = UnusedKeyReason(f.key, config);
        why && (FieldValueText(f) == FieldValueText(defaults[i]) || IsGivenKey(config, f.key))) {
      out += fmt::format("# {} = {}  # not read: {}\n", name, value, *why);
    } else {
      out += fmt::format("{} = {}\n", name, value);
    }
  }
  return out;
}

std::string RenderConfigDoc() {
  TrainConfig defaults;
  const auto fields = ConfigFields(defaults);
  std::string out =
      "# `asyncdp train` configuration keys\n\n"
      "Generated by `asyncdp train --config-doc` from the field registry (sim/config_fields.cc); every key\n"
      "the parser accepts is listed here, with its default. Unknown keys and bad values are rejected with\n"
      "exit code 2 and the key's path (and FILE:LINE:COL for a key read from a TOML file). Every number\n"
      "must be finite and in the range of the \"allowed\" column; an integer key also accepts a float with\n"
      "an integral value (`5e4`). Override any key from the command line with `--set key=value`; of two\n"
      "`--set`s of one key the later is used, with a warning naming both values. A key the run does not\n"
      "read (e.g. `dp.sampling` for random check-ins) is refused too, even when it is written at its\n"
      "default value, with the reason; `config.resolved.toml` and `--print-config` write such keys as\n"
      "comments, so the file runs again as it is.\n\n"
      "| key | default | allowed | meaning |\n|---|---|---|---|\n";
  for (const auto& f : fields) {
    std::string allowed = f.range ? f.range->ToString() : "";
    for (const auto& c : f.choices) allowed += (allowed.empty() ? "" : ", ") + c;
    out += fmt::format("| `{}` | `{}` | {} | {} |\n", f.key, FieldValueText(f), allowed, f.doc);
  }
  return out;
}

}  // namespace asyncdp::sim
