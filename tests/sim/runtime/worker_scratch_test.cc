// Model workspaces lent per worker (sim/runtime/worker_scratch.h): who shares one, and that a round
// computed on a lent workspace is bit for bit the round computed on the client's own.
#include "sim/runtime/worker_scratch.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/experiment.h"
#include "tests/sim/sim_test_util.h"

namespace asyncdp::sim {
namespace {

TEST(WorkerScratch, ClientsOfOneModelAndBatchShareOneWorkspace) {
  const Experiment experiment = BuildExperiment(testing::SmallLenetConfig(3));
  const auto clients = MakeClients(experiment);
  WorkerScratch scratch;
  models::Workspace* first = scratch.For(*clients[0]);
  ASSERT_NE(first, nullptr);
  for (const auto& client : clients) EXPECT_EQ(scratch.For(*client), first);
}

TEST(WorkerScratch, RoundsOnALentWorkspaceMatchRoundsOnTheirOwn) {
  const Experiment experiment = BuildExperiment(testing::SmallLenetConfig(3));
  auto lent = MakeClients(experiment);
  auto own = MakeClients(experiment);
  WorkerScratch scratch;
  // Interleaved: every round on the shared workspace follows another client's round on it.
  for (int64_t round = 0; round < experiment.plans[0].rounds(); ++round) {
    for (size_t c = 0; c < lent.size(); ++c) {
      ASSERT_TRUE(lent[c]->BeginRound());
      ASSERT_TRUE(own[c]->BeginRound());
      lent[c]->ComputeRound(scratch.For(*lent[c]));
      own[c]->ComputeRound();  // its own workspace
      const UpdateMessage a = lent[c]->CompleteRound();
      const UpdateMessage b = own[c]->CompleteRound();
      ASSERT_EQ(a.update.size(), b.update.size());
      for (int64_t j = 0; j < a.update.size(); ++j) {
        ASSERT_EQ(a.update[j], b.update[j]) << "client " << c << " round " << round << " coordinate " << j;
      }
    }
    // The next global model (any model will do, the same for both sets), so Υ lets the next round start.
    const BroadcastMessage next{round + 1, std::make_shared<const Eigen::VectorXf>(lent[0]->local_model())};
    for (size_t c = 0; c < lent.size(); ++c) {
      lent[c]->OnBroadcast(next);
      own[c]->OnBroadcast(next);
    }
  }
}

TEST(WorkerScratch, OtherBatchesGetTheirOwnUpToTheCap) {
  std::vector<Experiment> experiments;
  std::vector<std::vector<std::unique_ptr<ClientProtocol>>> clients;
  for (size_t k = 0; k <= WorkerScratch::kMaxWorkspaces; ++k) {
    TrainConfig c = testing::SmallA9aConfig(1, 200);
    c.schedule.sample_size = static_cast<int64_t>(5 + k);  // a different largest batch each time
    experiments.push_back(BuildExperiment(c));
  }
  for (const Experiment& e : experiments) clients.push_back(MakeClients(e));
  WorkerScratch scratch;
  std::vector<models::Workspace*> seen;
  for (size_t k = 0; k < WorkerScratch::kMaxWorkspaces; ++k) {
    models::Workspace* w = scratch.For(*clients[k][0]);
    ASSERT_NE(w, nullptr);
    for (models::Workspace* other : seen) EXPECT_NE(w, other);
    seen.push_back(w);
    EXPECT_EQ(scratch.For(*clients[k][0]), w);  // found again, not made again
  }
  // One pair more than the cap: that client keeps its own workspace.
  EXPECT_EQ(scratch.For(*clients[WorkerScratch::kMaxWorkspaces][0]), nullptr);
}

}  // namespace
}  // namespace asyncdp::sim
