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
    for (const auto& shard : e.data.shards) copies.push_back(shard.Copy());
    for (size_t c = 0; c < copies.size(); ++c) {
      ClientOptions options;
      options.id = static_cast<int64_t>(c);
      options.seed = e.config.seed;
      options.clip = e.config.dp.clip;
      clients.push_back(std::make_unique<ClientProtocol>(
          options, copies[c], *e.model, e.plans[c], *e.protocol.delay_rule,
          MakeSampler(e.privacy.sampling(), copies[c].rows(), e.config.seed, static_cast<uint32_t>(c)),
          e.initial_model));
    }
  } else {
    clients = MakeClients(e);
  }
  ServerProtocol server(e.config.clients.count, e.initial_model, e.protocol.server);
  ObserverList observers;
  RunVirtual(e.protocol.runtime, e.protocol.faults, clients, server, observers);
  return server.model();
}

void ExpectViewsTrainLikeCopies(const TrainConfig& config) {
  const Experiment e = BuildExperiment(config);
  ASSERT_GE(e.data.shards.size(), 2u);
  for (const auto& shard : e.data.shards) EXPECT_EQ(shard.data, e.data.train.get());  // no copy
  const Eigen::VectorXf viewed = FinalModel(e, false);
  const Eigen::VectorXf copied = FinalModel(e, true);
  ASSERT_EQ(viewed.size(), copied.size());
  ASSERT_NE(viewed, e.initial_model);
  for (Eigen::Index j = 0; j < viewed.size(); ++j) ASSERT_EQ(viewed[j], copied[j]) << "parameter " << j;
}

TEST(ShardView, SparseLogisticRunIsBitIdenticalToCopiedShards) {
  TrainConfig c = testing::SmallA9aConfig(3, 300);
  c.data.partition =
      data::PartitionScheme::kDirichlet;  // unequal, label-skewed shards: the row mapping is not an identity
  ExpectViewsTrainLikeCopies(c);
}

TEST(ShardView, DenseLeNetRunIsBitIdenticalToCopiedShards) {
  ExpectViewsTrainLikeCopies(testing::SmallLenetConfig(2));
}

// A process that hosts some clients (an MPI rank, sim/train.cc) reads only their rows: the shards, plans
// and classes are those of a full build, the hosted clients' rows carry the same features, nobody else's do,
// and the test rows are read only by the process that evaluates.
void ExpectHostingReadsOnlyHostedRows(TrainConfig config, bool evaluates) {
  const Experiment full = BuildExperiment(config);
  Hosting hosting;
  hosting.clients = [](const PlanTable& plans) {
    std::vector<bool> hosted(plans.size());
    for (size_t c = 0; c < plans.size(); ++c) hosted[c] = c % 2 == 1;
    return hosted;
  };
  hosting.evaluates = evaluates;
  const Experiment part = BuildExperiment(config, hosting);
  ASSERT_EQ(part.data.hosted.size(), full.data.shards.size());
  EXPECT_EQ(part.data.train->class_names, full.data.train->class_names);
  EXPECT_EQ(part.data.train->features(), full.data.train->features());
  EXPECT_LT(part.data.train->nnz(), full.data.train->nnz());
  for (size_t c = 0; c < full.data.shards.size(); ++c) {
    EXPECT_EQ(part.plans[c], full.plans[c]) << "client " << c;
    EXPECT_EQ(part.plans[c].n_records, full.data.shards[c].rows());
    if (!part.data.hosted[c]) {
      EXPECT_TRUE(part.data.shards[c].indices.empty()) << "client " << c << ": not hosted, no row list";
      if (!evaluates) {  // (the evaluating process also reads the train-loss rows, eval.train_rows)
        for (int64_t r : full.data.shards[c].indices)
          ASSERT_FALSE(part.data.train->Holds(r)) << "client " << c << " row " << r;
      }
      continue;
    }
    ASSERT_EQ(part.data.shards[c].indices, full.data.shards[c].indices) << "client " << c;
    for (int64_t r : part.data.shards[c].indices) {
      ASSERT_TRUE(part.data.train->Holds(r)) << "client " << c << " row " << r;
      ASSERT_EQ(part.data.train->labels[static_cast<size_t>(r)],
                full.data.train->labels[static_cast<size_t>(r)]);
      const Eigen::VectorXf a = part.data.train->sparse.row(r);
      const Eigen::VectorXf b = full.data.train->sparse.row(r);
      ASSERT_EQ(a, b) << "client " << c << " row " << r;
    }
  }
  EXPECT_EQ(MakeClients(part, part.data.hosted).size(),
            full.data.shards.size());  // hosted rows are all there
  if (evaluates) {
    EXPECT_EQ(part.data.test.rows(), full.data.test.rows());
    EXPECT_EQ(part.data.test.nnz(), full.data.test.nnz());
    EXPECT_EQ(part.data.train_eval.nnz(), full.data.train_eval.nnz());
  } else {
    EXPECT_EQ(part.data.test.nnz(), 0);  // no test features read
    EXPECT_EQ(part.data.train_eval.rows(), 0);
  }
}

TEST(ShardView, AHostingProcessReadsOnlyItsClientsRows) {
  TrainConfig c = testing::SmallA9aConfig(4, 300);
  c.data.partition =
      data::PartitionScheme::kDirichlet;  // the label-skewed partition is decided from the labels alone
  c.eval.train_rows = 50;
  ExpectHostingReadsOnlyHostedRows(c, false);
  ExpectHostingReadsOnlyHostedRows(c, true);
}

TEST(ShardView, AHostingProcessReadsTheHeldOutTestRowsOnlyIfItEvaluates) {
  TrainConfig c = testing::SmallA9aConfig(3, 200);
  c.data.test.clear();
  c.data.test_fraction = 0.2;  // the test rows come from the training file
  ExpectHostingReadsOnlyHostedRows(c, true);
  ExpectHostingReadsOnlyHostedRows(c, false);
}

// Image data (IDX) are read whole; a hosting process still hosts exactly its clients (placed from the final
// plans) and builds only them.
TEST(ShardView, AHostingProcessWithImageDataReadsItWholeAndHostsItsClients) {
  const TrainConfig c = testing::SmallLenetConfig(2);
  Hosting hosting;
  hosting.clients = [](const PlanTable& plans) {
    std::vector<bool> hosted(plans.size());
    for (size_t k = 0; k < plans.size(); ++k) hosted[k] = k % 2 == 1;
    return hosted;
  };
  hosting.evaluates = false;
  const Experiment part = BuildExperiment(c, hosting);
  EXPECT_EQ(part.data.hosted, (std::vector<bool>{false, true}));
  EXPECT_TRUE(part.data.train->HoldsEveryRow());
  const auto clients = MakeClients(part, part.data.hosted);
  EXPECT_EQ(clients[0], nullptr);
  EXPECT_NE(clients[1], nullptr);
}

}  // namespace
}  // namespace asyncdp::sim
