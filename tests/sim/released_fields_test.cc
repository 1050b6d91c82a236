// Every field asyncdp releases is listed, with its privacy status, in docs/design.md ("Released fields"):
// covered by the reported ε, public by assumption, or diagnostic (not covered; opt-in). This test derives
// the fields from the outputs of runs that switch every output on (diagnostics, proactive targets, a
// training audit, the trace, the threads runtime) and fails on any field the table does not list — a new
// output cannot appear without its status.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "sim/train.h"
#include "tests/sim/sim_test_util.h"
#include "tests/test_data.h"

namespace asyncdp::sim {
namespace {

using testing::SmallA9aConfig;

// `file field` pairs of the table: rows "| file | `field` | status | ... |" (a trailing * is a wildcard).
std::set<std::string> ListedFields() {
  std::ifstream in(asyncdp::testing::SourceDir() + "/docs/design.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto start = text.find("### Released fields");
  std::set<std::string> listed;
  if (start == std::string::npos) {
    ADD_FAILURE() << "docs/design.md has no \"Released fields\" section";
    return listed;
  }
  std::istringstream lines(text.substr(start));
  const std::regex row(R"(^\| *([a-z_.]+) *\| *`([^`]+)` *\| *(covered|public|diagnostic) *\|)");
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("## ")) break;
    std::smatch m;
    if (std::regex_search(line, m, row)) listed.insert(m[1].str() + " " + m[2].str());
  }
  return listed;
}

bool Listed(const std::set<std::string>& listed, const std::string& file, const std::string& field) {
  if (listed.contains(file + " " + field)) return true;
  for (const std::string& entry : listed) {
    if (entry.back() != '*') continue;
    const std::string prefix = entry.substr(0, entry.size() - 1);
    if ((file + " " + field).starts_with(prefix)) return true;
  }
  return false;
}

void CsvColumns(const std::string& file, const std::string& csv, std::set<std::string>& out) {
  std::istringstream header(csv.substr(0, csv.find('\n')));
  for (std::string column; std::getline(header, column, ',');) out.insert(file + " " + column);
}

// summary.json: top-level keys, and one level into the objects that group released values.
void SummaryFields(const nlohmann::json& s, std::set<std::string>& out) {
  for (const auto& [key, value] : s.items()) {
    out.insert("summary.json " + key);
    if (key == "config") continue;  // the resolved configuration: every key is an input (docs/config.md)
    if (value.is_object()) {
      for (const auto& [inner, unused] : value.items()) out.insert("summary.json " + key + "." + inner);
    }
  }
  if (s.contains("proactive")) {
    for (const auto& client : s["proactive"]["clients"]) {
      for (const auto& [key, unused] : client.items()) out.insert("summary.json proactive.clients[]." + key);
    }
  }
}

TEST(ReleasedFields, EveryFieldOfEveryOutputHasAStatusInTheDesignDocument) {
  const std::set<std::string> listed = ListedFields();
  EXPECT_GT(listed.size(), 40u);
  std::set<std::string> fields;
  auto collect = [&](const TrainResult& r) {
    SummaryFields(r.summary, fields);
    CsvColumns("metrics.csv", r.metrics_csv, fields);
    CsvColumns("clients.csv", r.clients_csv, fields);
    if (!r.phases_csv.empty()) CsvColumns("phases.csv", r.phases_csv, fields);
    if (!r.events_csv.empty()) CsvColumns("events.csv", r.events_csv, fields);
  };
  for (const bool diagnostics : {false, true}) {
    TrainConfig c = SmallA9aConfig(3, 300);
    c.output.diagnostics = diagnostics;
    c.output.trace = true;
    c.eval.gradient_norm = diagnostics;
    c.eval.train_rows = diagnostics ? 200 : 0;
    collect(RunTraining(c, {.progress = false}));
    c.protocol.runtime = RuntimeKind::kThreads;
    collect(RunTraining(c, {.progress = false}));
    TrainConfig audited = SmallA9aConfig(3, 300);
    audited.output.diagnostics = diagnostics;
    audited.audit.canaries = 20;
    collect(RunTraining(audited, {.progress = false}));
    TrainConfig proactive = SmallA9aConfig(5, 2000);
    testing::LeaveScheduleToPhases(proactive);
    proactive.output.diagnostics = diagnostics;
    proactive.targets.accuracy = 0.8;
    proactive.targets.epsilon = 2.0;
    proactive.proactive.phase_sigmas = {8.0, 5.0};
    proactive.proactive.phase_epochs = {0.2, 1.0};
    collect(RunTraining(proactive, {.progress = false}));
  }
  // Random check-ins, record level and user level (their own driver, sim/checkin/).
  for (const bool user_level : {false, true}) {
    TrainConfig checkin = SmallA9aConfig(3, 300);
    checkin.clients.count = 2000;
    checkin.data.rows_per_client = 0;
    checkin.schedule = ScheduleConfig{};  // the asynchronous rounds' plan is not read by check-ins
    checkin.protocol.participation = Participation::kCheckIn;
    checkin.checkin.steps = 500;
    checkin.checkin.batch_steps = 5;
    checkin.dp.sigma = 2.0;
    if (user_level) {
      checkin.dp.unit = PrivacyUnit::kClient;
      checkin.dp.client_clip = 1.0;
    }
    collect(RunTraining(checkin, {.progress = false}));
  }
  std::string missing;
  for (const std::string& field : fields) {
    const auto space = field.find(' ');
    if (!Listed(listed, field.substr(0, space), field.substr(space + 1))) missing += "\n  " + field;
  }
  EXPECT_TRUE(missing.empty()) << "fields released without a status in docs/design.md (Released fields):" << missing;
}

}  // namespace
}  // namespace asyncdp::sim
