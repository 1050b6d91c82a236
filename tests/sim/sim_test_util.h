// Shared fixtures for the simulator tests: small, fast configurations on real data.
#pragma once

#include <string>
#include <vector>

#include "sim/config.h"
#include "tests/sim/config_change.h"
#include "tests/test_data.h"

namespace asyncdp::sim::testing {

using ::asyncdp::testing::kTimingSummaryKeys;  // tests/sim/config_change.h

// The LIBSVM a9a training and test files shipped in datasets/ (123 features).
inline void UseA9a(TrainConfig& c) {
  c.data.train = asyncdp::testing::SharedFile("datasets/libsvm/a9a.gz");
  c.data.test = asyncdp::testing::SharedFile("datasets/libsvm/a9a.t.gz");
  c.data.features = 123;
}

// A plan of `rounds` local rounds per client instead of K: schedule.rounds > 0 leaves schedule.epochs and
// schedule.iterations unread, so they go back to their defaults (a set one would be refused, config_usage.h).
inline void UseRounds(TrainConfig& c, int64_t rounds) {
  c.schedule.rounds = rounds;
  c.schedule.epochs = ScheduleConfig{}.epochs;
  c.schedule.iterations = ScheduleConfig{}.iterations;
}

// For a proactive run (targets.accuracy > 0): the phases plan each client's rounds, σ and (E.1 sizing) sample
// sizes, so the schedule's length and sample-size keys and dp.sigma go back to their defaults (a set one is
// refused, config_usage.h). Calibrated sizing reads schedule.sample_size: set it after this.
inline void LeaveScheduleToPhases(TrainConfig& c) {
  const ScheduleConfig defaults;
  c.schedule.epochs = defaults.epochs;
  c.schedule.iterations = defaults.iterations;
  c.schedule.rounds = defaults.rounds;
  c.schedule.sample_sizes = defaults.sample_sizes;
  c.schedule.sample_size = defaults.sample_size;
  c.dp.sigma = 0.0;
}

// L2-regularised logistic regression on a9a with `clients` clients of `rows` records each.
inline TrainConfig SmallA9aConfig(int64_t clients = 3, int64_t rows = 400) {
  TrainConfig c;
  UseA9a(c);
  c.data.rows_per_client = rows;
  c.data.eval_rows = 2000;
  c.model.kind = "logistic_l2";
  c.clients.count = clients;
  c.dp.clip = 0.1;
  c.dp.sigma = 2.0;
  c.schedule.sample_size = 10;
  c.schedule.epochs = 1.0;
  c.eval.points = 4;
  c.eval.train_rows = 0;  // the train-loss diagnostic: tests that opt in to output.diagnostics set it
  c.seed = 11;
  return c;
}

// LeNet-5 on `clients` × 40 Fashion-MNIST training rows, s = 8, 3 rounds: small, but its workspace
// holds per-chunk buffers and partial sums, so it shows state carried between rounds or clients.
inline TrainConfig SmallLenetConfig(int64_t clients = 2) {
  TrainConfig c;
  c.data.train = asyncdp::testing::FashionMnistFile("train-images-idx3-ubyte.gz");
  c.data.test = asyncdp::testing::FashionMnistFile("t10k-images-idx3-ubyte.gz");
  c.data.rows_per_client = 40;
  c.data.eval_rows = 10;
  c.model.kind = "lenet";
  c.clients.count = clients;
  c.dp.clip = 0.025;
  c.dp.sigma = 2.0;
  c.schedule.sample_size = 8;
  UseRounds(c, 3);
  c.seed = 5;
  return c;
}

}  // namespace asyncdp::sim::testing
