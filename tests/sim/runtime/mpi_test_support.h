// What the MPI runtime's end-to-end tests share (mpi_runtime_test.cc, mpi_features_test.cc): the Table 3
// command line with absolute data paths, mpirun with the environment it needs, and output readers.
#pragma once

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/apps/cli_runner.h"
#include "tests/test_data.h"

namespace asyncdp::sim {
namespace {

using testing::Quoted;

// `asyncdp train` of experiments/CONFIG (an a9a configuration) with its data paths made absolute.
inline std::string TrainA9a(const std::string& config, const std::string& extra = "", bool quiet = true) {
  const std::string shared = testing::SharedDir();
  return std::string("train ") + (quiet ? "--quiet " : "") + "--config " +
         Quoted(testing::SourceDir() + "/experiments/" + config) + " --set " +
         Quoted("data.train=\"" + shared + "/datasets/libsvm/a9a.gz\"") + " --set " +
         Quoted("data.test=\"" + shared + "/datasets/libsvm/a9a.t.gz\"") + " " + extra;
}

// The Table 3 strongly convex configuration with its data paths made absolute.
inline std::string Table3(const std::string& extra = "", bool quiet = true) {
  return TrainA9a("table3_strongly_convex.toml", extra, quiet);
}

// Adds " value" to the environment variable name once (sanitizer option lists are space-separated).
inline void AppendEnv(const char* name, const std::string& value) {
  const char* current = std::getenv(name);
  const std::string old = current ? current : "";
  if (old.find(value) != std::string::npos) return;
  setenv(name, (old.empty() ? value : old + " " + value).c_str(), 1);
}

// mpirun as root inside CI containers needs these; the test sets them itself.
inline std::string Mpirun(int ranks) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  // Under the asan/tsan presets the ranks are instrumented. Open MPI's uninstrumented threads would be
  // reported as races: the suppression file names only Open MPI's libraries, so a race in asyncdp's own
  // threads still fails the run (scripts/sanitizers/openmpi.tsan.supp). Its start-up allocations are
  // reported as leaks from "<unknown module>" (the mca_* components are unloaded before the leak check),
  // which no suppression can name: leak checking is off in the ranks (address and UB errors still abort
  // them; the rest of the suite checks leaks, the threads runtime included). Later options win.
  AppendEnv("ASAN_OPTIONS", "detect_leaks=0");
  AppendEnv("TSAN_OPTIONS", "suppressions=" + testing::SourceDir() + "/scripts/sanitizers/openmpi.tsan.supp");
  return std::string("timeout 120 ") + ASYNCDP_MPIEXEC + " --oversubscribe --allow-run-as-root -np " +
         std::to_string(ranks) + " " + Quoted(testing::AsyncdpBinary()) + " ";
}

inline nlohmann::json Summary(const std::string& dir) {
  return nlohmann::json::parse(testing::ReadFile(dir + "/summary.json"));
}

// The lines of a CSV file.
inline std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Table 3 shortened to one epoch (K = N_c, 250 rounds per client) to keep the test to seconds: on an
// oversubscribed machine a global round over MPI waits for several processes to be scheduled.
inline const std::string kOneEpoch = "--set schedule.epochs=1 ";

// Counts the occurrences of `needle` in `text`.
inline size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace
}  // namespace asyncdp::sim
