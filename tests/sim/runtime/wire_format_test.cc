// The MPI runtime's wire formats against the protocol's messages (sim/runtime/mpi_transport.h): every field
// of UpdateMessage travels (the static_assert in mpi_transport.cc stops the build when one is added), and a
// rank's outcome carries diagnostics only when output.diagnostics is on.
#include <gtest/gtest.h>

#if ASYNCDP_WITH_MPI
#include "sim/runtime/mpi_transport.h"

namespace asyncdp::sim::mpi {
namespace {

TEST(WireFormat, AnUpdateRoundTripsEveryFieldOfUpdateMessage) {
  UpdateMessage sent;
  sent.client = 7;
  sent.local_round = 123456789012LL;
  sent.computed_at = 98765;
  sent.step_size = 0.0123456789;
  sent.clip = 0.0371234;
  sent.update = Eigen::VectorXf::LinSpaced(5, -2.0f, 3.5f);
  Buffer bytes(UpdateBytes(5));
  EncodeUpdate(sent, bytes.data());
  UpdateMessage got;
  ASSERT_TRUE(DecodeUpdate(bytes, 5, got));
  EXPECT_EQ(got.client, sent.client);
  EXPECT_EQ(got.local_round, sent.local_round);
  EXPECT_EQ(got.computed_at, sent.computed_at);
  EXPECT_EQ(got.step_size, sent.step_size);
  EXPECT_EQ(got.clip, sent.clip);
  EXPECT_TRUE(got.update == sent.update);
  EXPECT_EQ(UpdateBytes(5), 3 * sizeof(int64_t) + 2 * sizeof(double) + 5 * sizeof(float));  // + step size, clip
  Buffer short_bytes(UpdateBytes(4));
  EXPECT_FALSE(DecodeUpdate(short_bytes, 5, got));
}

TEST(WireFormat, AnOutcomeCarriesDiagnosticsOnlyWhenTheyAreOn) {
  RankOutcome outcome;
  ClientOutcome client;
  client.id = 3;
  client.rounds = 10;
  client.gradients = 257;
  client.clip_totals.examples = 257;
  client.clip_totals.clipped = 12;
  client.clip_totals.norm_sum = 31.5;
  client.staleness_histogram = {9, 1};
  outcome.clients.push_back(client);
  const RankOutcome with = DecodeOutcome(EncodeOutcome(outcome, true));
  EXPECT_EQ(with.clients[0].gradients, 257);
  EXPECT_EQ(with.clients[0].clip_totals.norm_sum, 31.5);
  const RankOutcome without = DecodeOutcome(EncodeOutcome(outcome, false));
  EXPECT_EQ(without.clients[0].rounds, 10);
  EXPECT_EQ(without.clients[0].staleness_histogram, client.staleness_histogram);
  EXPECT_EQ(without.clients[0].gradients, 0);
  EXPECT_EQ(without.clients[0].clip_totals.examples, 0);
  EXPECT_EQ(without.clients[0].clip_totals.clipped, 0);
  EXPECT_EQ(without.clients[0].clip_totals.norm_sum, 0.0);
}

}  // namespace
}  // namespace asyncdp::sim::mpi
#endif
