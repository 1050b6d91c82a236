// Client shards are views into the one loaded training set (data::RowView), not copies. A view must train
// exactly like a copy: the same run with every client built on a copied shard (data::Subset, what the
// simulator did before) commits bit-identical models.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/sampling.h"
#include "sim/experiment.h"
#include "sim/runtime/virtual_runtime.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

// The final model of a virtual-runtime run of `e`, its clients reading their shards through views
// (MakeClients) or from copies.
Eigen::VectorXf FinalModel(const Experiment& e, bool copied_shards) {
  std::vector<data::Dataset> copies;
  std::vector<std::unique_ptr<ClientProtocol>> clients;
  if (copied_shards) {
    for (const auto& shard : e.shards) copies.push_back(shard.Copy());
    for (size_t c = 0; c < copies.size(); ++c) {
      ClientOptions options;
      options.id = static_cast<int64_t>(c);
      options.seed = e.config.seed;
      options.clip = e.config.dp.clip;
      clients.push_back(std::make_unique<ClientProtocol>(
          options, copies[c], *e.model, e.plans[c], *e.delay_rule,
          MakeSampler(e.sampling, copies[c].rows(), e.config.seed, static_cast<uint32_t>(c)), e.initial_model));
    }
  } else {
    clients = MakeClients(e);
  }
  ServerProtocol server(e.config.clients.count, e.initial_model, e.server);
  ObserverList observers;
  RunVirtual(e.runtime, e.faults, clients, server, observers);
  return server.model();
}

void ExpectViewsTrainLikeCopies(const TrainConfig& config) {
  const Experiment e = BuildExperiment(config);
  ASSERT_GE(e.shards.size(), 2u);
  for (const auto& shard : e.shards) EXPECT_EQ(shard.data, e.train.get());  // no copy
  const Eigen::VectorXf viewed = FinalModel(e, false);
  const Eigen::VectorXf copied = FinalModel(e, true);
  ASSERT_EQ(viewed.size(), copied.size());
  ASSERT_NE(viewed, e.initial_model);
  for (Eigen::Index j = 0; j < viewed.size(); ++j) ASSERT_EQ(viewed[j], copied[j]) << "parameter " << j;
}

TEST(ShardView, SparseLogisticRunIsBitIdenticalToCopiedShards) {
  TrainConfig c = testing::SmallA9aConfig(3, 300);
  c.data.partition = "dirichlet";  // unequal, label-skewed shards: the row mapping is not an identity
  ExpectViewsTrainLikeCopies(c);
}

TEST(ShardView, DenseLeNetRunIsBitIdenticalToCopiedShards) {
  ExpectViewsTrainLikeCopies(testing::SmallLenetConfig(2));
}

}  // namespace
}  // namespace asyncdp::sim
