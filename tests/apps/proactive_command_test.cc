// End-to-end: a proactive `asyncdp train` run (experiments/proactive_flow.toml) plans the same phases as
// `asyncdp calc --phases` for the same inputs, and writes phases.csv.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {
namespace {

std::vector<std::vector<std::string>> Rows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TEST(ProactiveCommand, PhaseDecisionsEqualTheE1CalculatorForTheSameInputs) {
  TempDir dir;
  const std::string out = dir.Path("run");
  const CliResult r = RunAsyncdp(
      "train --quiet --config " + Quoted(SourceDir() + "/experiments/proactive_flow.toml") +
          " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
          " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
          " --set data.rows_per_client=2000 --set data.eval_rows=500 --set eval.points=2"
          " --set proactive.phase_sigmas=[8,5] --set proactive.phase_epochs=[0.2,1.0] --out " + Quoted(out),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(out + "/phases.csv"));
  const auto phases = Rows(ReadFile(out + "/phases.csv"));
  const auto summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  const auto& client = summary["proactive"]["clients"][0];
  const int64_t n = 1600;  // 2,000 rows, 20% held out for the accuracy check
  EXPECT_DOUBLE_EQ(client["delta"].get<double>(), 1.0 / n);
  // The private accuracy checks take their share first (5% of ε_target and of δ_target); the phases are
  // planned for the rest, which is what the calculator gets.
  const auto& checks = client["accuracy_checks"];
  ASSERT_TRUE(checks["private"].get<bool>());
  const double delta = client["delta"].get<double>() - checks["delta"].get<double>();
  const double epsilon = checks["training_epsilon_budget"].get<double>();
  EXPECT_NEAR(epsilon + checks["epsilon"].get<double>(), 2.0, 1e-12);
  std::ostringstream delta_text, epsilon_text;
  delta_text.precision(17);
  delta_text << delta;
  epsilon_text.precision(17);
  epsilon_text << epsilon;
  // The calculator's input: K_j = round(k_j N_c) and σ_j from the config, N_c, δ = 1/N_c, ε_target.
  std::ofstream(dir.Path("phases_in.csv")) << "K,sigma\n"
                                           << std::llround(0.2 * n) << ",8\n"
                                           << n << ",5\n";
  const CliResult calc = RunAsyncdp("calc --N " + std::to_string(n) + " --delta " + delta_text.str() +
                                        " --epsilon " + epsilon_text.str() + " --mode exact --phases " +
                                        Quoted(dir.Path("phases_in.csv")),
                                    dir);
  ASSERT_EQ(calc.exit_code, 0) << calc.err;
  const auto expected = nlohmann::json::parse(calc.out);
  ASSERT_EQ(phases[0][7], "s");
  for (size_t j = 0; j < 2; ++j) {
    const auto& row = phases[1 + j];  // client 0, phase j
    ASSERT_EQ(row[4], std::to_string(j));
    EXPECT_EQ(std::stoll(row[7]), expected["phases"][j]["s"].get<int64_t>()) << "phase " << j;
    EXPECT_EQ(std::stoll(row[8]), static_cast<int64_t>(std::floor(expected["phases"][j]["T"].get<double>())));
    EXPECT_NEAR(std::stod(row[11]), expected["phases"][j]["epsilon"].get<double>(), 1e-5) << "phase " << j;
  }
}

}  // namespace
}  // namespace asyncdp::testing
