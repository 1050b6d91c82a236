#include "sim/config_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <toml++/toml.h>

#include "core/error.h"
#include "sim/config_fields.h"

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

// Sets `field` from a TOML node; `where` locates the node for errors.
void SetFromNode(ConfigField& field, const toml::node& node, const std::string& where) {
  auto fail = [&](const char* expected) {
    throw ConfigError(where, fmt::format("{}: expected {}", field.key, expected));
  };
  std::visit(
      [&](auto* p) {
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
          if (!node.is_integer()) fail("an integer");
          *p = node.as_integer()->get();
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          if (!node.is_integer() || node.as_integer()->get() < 0) fail("a non-negative integer");
          *p = static_cast<uint64_t>(node.as_integer()->get());
        } else {
          if (!node.is_array()) fail("an array of integers");
          p->clear();
          for (const auto& item : *node.as_array()) {
            if (!item.is_integer()) fail("an array of integers");
            p->push_back(item.as_integer()->get());
          }
        }
      },
      field.target);
}

void WalkTable(const toml::table& table, const std::string& prefix, std::vector<ConfigField>& fields,
               const std::string& origin) {
  for (const auto& [key, node] : table) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    const std::string where = Where(origin, node.source());
    if (node.is_table()) {
      WalkTable(*node.as_table(), path, fields, origin);
      continue;
    }
    ConfigField* field = FindField(fields, path);
    if (field == nullptr) {
      throw ConfigError(where, fmt::format("unknown key \"{}\" (see docs/config.md)", path));
    }
    SetFromNode(*field, node, where);
  }
}

std::string Trim(std::string s) {
  const auto not_space = [](unsigned char ch) { return !std::isspace(ch); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
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
  WalkTable(table, "", fields, origin);
  return config;
}

TrainConfig LoadConfigFile(const std::string& path) {
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
  const bool is_string = std::holds_alternative<std::string*>(field->target);
  const bool is_list = std::holds_alternative<std::vector<int64_t>*>(field->target);
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
  SetFromNode(*field, *parsed.get("v"), "--set " + key);
}

void ValidateConfig(const TrainConfig& c) {
  auto require = [](bool ok, const char* key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  require(!c.data.train.empty(), "data.train", "required: path of the training data");
  require(c.data.features >= 0, "data.features", "must be >= 0");
  require(c.data.test_fraction > 0 && c.data.test_fraction < 1, "data.test_fraction", "must be in (0, 1)");
  require(c.data.dirichlet_alpha > 0, "data.dirichlet_alpha", "must be > 0");
  require(c.data.rows_per_client >= 0, "data.rows_per_client", "must be >= 0");
  require(c.data.eval_rows >= 0, "data.eval_rows", "must be >= 0");
  require(c.model.l2_lambda >= 0, "model.l2_lambda", "must be >= 0");
  require(c.model.threads >= 1, "model.threads", "must be >= 1");
  for (int64_t h : c.model.hidden) require(h >= 1, "model.hidden", "widths must be >= 1");
  // The virtual runtime packs the client id into 24 bits of its event key.
  require(c.clients.count >= 1 && c.clients.count <= 10'000'000, "clients.count", "must be in [1, 10000000]");
  require(c.clients.gradient_cost > 0, "clients.gradient_cost", "must be > 0");
  require(c.clients.speed_sigma >= 0, "clients.speed_sigma", "must be >= 0");
  require(c.clients.latency_mean >= 0, "clients.latency_mean", "must be >= 0");
  require(c.clients.straggler_factor >= 1, "clients.straggler_factor", "must be >= 1");
  require(c.clients.dropout_round >= 0, "clients.dropout_round", "must be >= 0");
  require(c.clients.delay_extra >= 0, "clients.delay_extra", "must be >= 0");
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
  require(c.protocol.tau >= 0, "protocol.tau", "must be >= 0");
  require(c.protocol.exclude_after >= 0, "protocol.exclude_after", "must be >= 0");
  require(c.protocol.worker_threads >= 0, "protocol.worker_threads", "must be >= 0");
  require(c.protocol.mpi_timeout > 0 && std::isfinite(c.protocol.mpi_timeout), "protocol.mpi_timeout",
          "must be a finite number > 0");
  require(c.dp.clip > 0, "dp.clip", "must be > 0");
  require(c.dp.sigma >= 0 && std::isfinite(c.dp.sigma), "dp.sigma", "must be a finite number >= 0");
  require(c.dp.epsilon >= 0, "dp.epsilon", "must be >= 0");
  require(c.dp.delta >= 0 && c.dp.delta < 1, "dp.delta", "must be in [0, 1)");
  require(!c.dp.enabled || c.dp.sigma > 0 || c.dp.epsilon > 0, "dp.sigma",
          "DP is enabled: set dp.sigma > 0, or dp.epsilon > 0 to calibrate sigma (or dp.enabled = false)");
  require(c.schedule.sample_size >= 1, "schedule.sample_size", "must be >= 1");
  require(c.schedule.sample_sizes != "list" || !c.schedule.sample_size_list.empty(),
          "schedule.sample_size_list", "required when schedule.sample_sizes = \"list\"");
  for (int64_t s : c.schedule.sample_size_list) require(s >= 1, "schedule.sample_size_list", "must be >= 1");
  require(c.schedule.iterations >= 0, "schedule.iterations", "must be >= 0");
  require(c.schedule.epochs > 0, "schedule.epochs", "must be > 0");
  require(c.schedule.rounds >= 0, "schedule.rounds", "must be >= 0");
  require(c.schedule.eta0 > 0, "schedule.eta0", "must be > 0");
  require(c.schedule.beta >= 0, "schedule.beta", "must be >= 0");
  require(c.eval.points >= 0, "eval.points", "must be >= 0");
  require(c.eval.train_rows >= 0, "eval.train_rows", "must be >= 0");
}

std::string ToToml(const TrainConfig& config) {
  TrainConfig copy = config;
  const auto fields = ConfigFields(copy);
  std::string out;
  std::string section;
  for (const auto& f : fields) {
    const auto dot = f.key.find('.');
    const std::string this_section = dot == std::string::npos ? "" : f.key.substr(0, dot);
    const std::string name = dot == std::string::npos ? f.key : f.key.substr(dot + 1);
    if (this_section != section) {
      out += fmt::format("\n[{}]\n", this_section);
      section = this_section;
    }
    // Strings go through toml++ for correct escaping.
    if (const auto* s = std::get_if<std::string*>(&f.target)) {
      std::ostringstream os;
      os << toml::value<std::string>(**s);
      out += fmt::format("{} = {}\n", name, os.str());
    } else {
      out += fmt::format("{} = {}\n", name, FieldValueText(f));
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
      "exit code 2 and the key's path. Override any key from the command line with `--set key=value`.\n\n"
      "| key | default | allowed | meaning |\n|---|---|---|---|\n";
  for (const auto& f : fields) {
    std::string allowed;
    for (const auto& c : f.choices) allowed += (allowed.empty() ? "" : ", ") + c;
    out += fmt::format("| `{}` | `{}` | {} | {} |\n", f.key, FieldValueText(f), allowed, f.doc);
  }
  return out;
}

}  // namespace asyncdp::sim
