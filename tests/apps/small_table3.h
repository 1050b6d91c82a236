// The `asyncdp train` arguments of a Table 3 run shrunk to seconds, shared by the end-to-end train tests.
#pragma once

#include <string>

#include "tests/apps/cli_runner.h"

namespace asyncdp::testing {

// The Table 3 strongly convex config, shrunk to seconds with --set: one epoch, or `rounds` local rounds
// (rounds > 0; then no epochs override, which such a run would not read and so refuse).
inline std::string SmallTable3Args(const std::string& out, int rounds = 0) {
  const std::string length = rounds > 0 ? " --set schedule.rounds=" + std::to_string(rounds)
                                        : std::string(" --set schedule.epochs=1");
  return "train --quiet --config " + Quoted(SourceDir() + "/experiments/table3_strongly_convex.toml") +
         " --set data.train=" + Quoted(SharedFile("datasets/libsvm/a9a.gz")) +
         " --set data.test=" + Quoted(SharedFile("datasets/libsvm/a9a.t.gz")) +
         " --set data.rows_per_client=500" + length + " --set eval.points=3 --set seed=5 --out " +
         Quoted(out);
}

}  // namespace asyncdp::testing
