// StepRuntime (sim/runtime/step_runtime.h), the runtime of the check-ins' server steps, and the check-in
// clients it runs (sim/checkin/checkin_client.h): every client's buffer holds its own update whatever the
// thread count, a remote replaces the local computation on rank 0 and not on a worker rank, and a client's
// update is its clipped-gradient sum, projected onto the ball of radius C_u at the user level.
#include "sim/runtime/step_runtime.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "data/libsvm.h"
#include "models/factory.h"
#include "sim/checkin/checkin_client.h"
#include "tests/test_data.h"

namespace asyncdp::sim {
namespace {

data::Dataset A9aTest() {
  const std::string path = asyncdp::testing::SharedFile("datasets/libsvm/a9a.t.gz");
  EXPECT_FALSE(path.empty());
  return data::ReadLibsvm(path, {});
}

std::unique_ptr<models::Model> Logistic(const data::Dataset& data) {
  models::ModelOptions options;
  options.kind = "logistic";
  return models::MakeModel(options, data.features(), data.num_classes(), data.image);
}

TEST(StepRuntime, EveryClientsBufferHoldsItsOwnUpdateForAnyThreadCount) {
  const data::Dataset data = A9aTest();
  const auto model = Logistic(data);
  const int64_t p = model->NumParams();
  // A client's "update": theta scaled by its id plus one, and id + 1 records.
  const StepRuntime::ClientWork work = [](std::span<const float> theta, int32_t client, Eigen::VectorXf& out,
                                          models::Workspace&) {
    out = Eigen::Map<const Eigen::VectorXf>(theta.data(), static_cast<Eigen::Index>(theta.size())) *
          static_cast<float>(client + 1);
    return static_cast<int64_t>(client + 1);
  };
  const Eigen::VectorXf theta = Eigen::VectorXf::LinSpaced(p, -1.0f, 1.0f);
  const std::span<const float> t(theta.data(), static_cast<size_t>(p));
  const std::vector<int32_t> clients = {7, 0, 3, 12, 5};
  for (const int threads : {1, 2, 3}) {
    StepRuntime runtime(threads, 16, *model, work);
    std::vector<Eigen::VectorXf> out;
    std::vector<int64_t> records;
    for (int step = 0; step < 20; ++step) {
      runtime.Gather(t, clients, out, records);
      ASSERT_EQ(records.size(), clients.size());
      for (size_t j = 0; j < clients.size(); ++j) {
        EXPECT_EQ(records[j], clients[j] + 1);
        EXPECT_TRUE(out[j] == theta * static_cast<float>(clients[j] + 1))
            << threads << " threads, client " << j;
      }
    }
  }
}

TEST(StepRuntime, ARemoteAnswersGatherButNotCompute) {
  const data::Dataset data = A9aTest();
  const auto model = Logistic(data);
  const int64_t p = model->NumParams();
  int local = 0, remote = 0;
  StepRuntime runtime(1, 4, *model,
                      [&](std::span<const float>, int32_t, Eigen::VectorXf& out, models::Workspace&) {
                        ++local;
                        out.setZero();
                        return int64_t{1};
                      });
  runtime.SetRemote([&](std::span<const float>, std::span<const int32_t> clients,
                        std::vector<Eigen::VectorXf>& out, std::vector<int64_t>& records) {
    ++remote;
    out.assign(clients.size(), Eigen::VectorXf::Ones(p));
    records.assign(clients.size(), 2);
  });
  const Eigen::VectorXf theta = Eigen::VectorXf::Zero(p);
  const std::span<const float> t(theta.data(), static_cast<size_t>(p));
  const std::vector<int32_t> clients = {1, 2};
  std::vector<Eigen::VectorXf> out;
  std::vector<int64_t> records;
  runtime.Gather(t, clients, out, records);
  EXPECT_EQ(remote, 1);
  EXPECT_EQ(local, 0);
  EXPECT_EQ(records, (std::vector<int64_t>{2, 2}));
  runtime.Compute(t, clients, out, records);  // a worker rank computes what it is asked
  EXPECT_EQ(remote, 1);
  EXPECT_EQ(local, 2);
  EXPECT_EQ(records, (std::vector<int64_t>{1, 1}));
}

TEST(CheckInClients, AnUpdateIsTheClippedSumAndAtTheUserLevelItsProjection) {
  const data::Dataset data = A9aTest();
  const auto model = Logistic(data);
  const int64_t p = model->NumParams();
  std::vector<std::vector<int64_t>> rows(3);
  rows[0] = {4};
  rows[1].resize(40);
  std::iota(rows[1].begin(), rows[1].end(), 100);
  rows[2] = {7, 9};
  const double clip = 0.5;
  const Eigen::VectorXf theta = Eigen::VectorXf::LinSpaced(p, -0.2f, 0.3f);
  const std::span<const float> t(theta.data(), static_cast<size_t>(p));
  auto workspace = model->NewWorkspace(64);

  const auto sum_of = [&](int32_t client) {
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(p);
    model->ClippedGradientSum(t, data, rows[static_cast<size_t>(client)], clip,
                              std::span<float>(sum.data(), static_cast<size_t>(p)), *workspace);
    return sum;
  };
  const sim::checkin::CheckInClients record{.model = *model, .data = data, .rows = rows, .clip = clip};
  Eigen::VectorXf out(p);
  for (int32_t c = 0; c < 3; ++c) {
    EXPECT_EQ(record.Update(t, c, out, *workspace),
              static_cast<int64_t>(rows[static_cast<size_t>(c)].size()));
    EXPECT_TRUE(out == sum_of(c)) << "client " << c;
  }

  // User level: client 1's 40 clipped gradients sum past C_u = 1 and are projected onto the ball; client 0's
  // single one (norm at most C = 0.5) is left as it is.
  const double client_clip = 1.0;
  const sim::checkin::CheckInClients user{
      .model = *model, .data = data, .rows = rows, .clip = clip, .client_clip = client_clip};
  const Eigen::VectorXf whole = sum_of(1);
  ASSERT_GT(whole.norm(), client_clip);
  user.Update(t, 1, out, *workspace);
  EXPECT_NEAR(out.norm(), client_clip, 1e-5);
  EXPECT_NEAR(out.dot(whole) / (out.norm() * whole.norm()), 1.0, 1e-6);
  user.Update(t, 0, out, *workspace);
  EXPECT_TRUE(out == sum_of(0));
}

}  // namespace
}  // namespace asyncdp::sim
