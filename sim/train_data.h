// The data of a run, loaded and split into clients' shards the same way for every participation mode
// (asynchronous rounds, sim/experiment.cc; random check-ins at the user level, sim/checkin/checkin_run.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "data/dataset.h"
#include "sim/config.h"

namespace asyncdp::sim {

struct LoadedData {
  data::Dataset train;
  data::Dataset test;  // data.test, or the data.test_fraction split; capped to data.eval_rows
};

// What a process that needs only some rows reads (an MPI rank holds its clients' rows; docs/mpi.md).
// Default: everything.
struct RowHolding {
  // Given the training set's labels (after the data.test_fraction split), the training rows whose features
  // this process needs. Called once, for LIBSVM data; other formats are read whole.
  std::function<std::vector<bool>(const data::Dataset& train_labels)> train_rows;
  bool test = true;  // false: this process never evaluates, and LoadedData::test comes back empty
};

// Reads data.train (and data.test, or holds out data.test_fraction with `seed`). ConfigError naming the
// data.* key for a test set that does not line up with the training set.
LoadedData LoadTrainData(const DataConfig& config, uint64_t seed, const RowHolding& holding = {});

// The rows of `train` each of `clients` clients holds: data.partition (iid, or Dirichlet label skew with
// data.dirichlet_alpha) with `seed`, each shard capped at data.rows_per_client. ConfigError when there are
// more clients than rows.
std::vector<std::vector<int64_t>> ClientShards(const DataConfig& config, const data::Dataset& train, int64_t clients,
                                               uint64_t seed);

}  // namespace asyncdp::sim
