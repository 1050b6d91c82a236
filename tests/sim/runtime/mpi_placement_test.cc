// Placement of clients on MPI worker ranks (sim/runtime/mpi_transport.h): every scheme places each client on
// exactly one worker rank, the same way on every rank; balanced placement evens out the planned work.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "sim/runtime/mpi_transport.h"

namespace asyncdp::sim::mpi {
namespace {

TEST(MpiPlacement, BlockKeepsContiguousRangesAndRoundRobinCycles) {
  const Placement block = Placement::Make(4, 10, MpiPlacement::kBlock);  // 3 workers
  EXPECT_EQ(block.Hosted(1), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(block.Hosted(2), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(block.Hosted(3), (std::vector<int64_t>{6, 7, 8, 9}));
  EXPECT_EQ(block.Describe(3), "clients 6..9");
  const Placement robin = Placement::Make(4, 10, MpiPlacement::kRoundRobin);
  EXPECT_EQ(robin.Hosted(1), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(robin.RankOf(5), 3);
  EXPECT_EQ(robin.Describe(1), "4 clients (round_robin)");
  // More workers than clients: the last ranks host nobody.
  EXPECT_EQ(Placement::Make(5, 2, MpiPlacement::kRoundRobin).Describe(4), "no client");
}

TEST(MpiPlacement, BalancedEvensOutThePlannedWork) {
  // One heavy client and many light ones: block puts the heavy one beside its neighbours.
  std::vector<int64_t> work(12, 10);
  work[0] = 60;
  const auto loads = [&](const Placement& p) {
    std::vector<int64_t> load(static_cast<size_t>(p.ranks), 0);
    for (int64_t c = 0; c < p.clients; ++c) load[static_cast<size_t>(p.RankOf(c))] += work[static_cast<size_t>(c)];
    return *std::max_element(load.begin() + 1, load.end());
  };
  const Placement block = Placement::Make(4, 12, MpiPlacement::kBlock, work);
  const Placement balanced = Placement::Make(4, 12, MpiPlacement::kBalanced, work);
  EXPECT_EQ(loads(block), 60 + 3 * 10);
  EXPECT_EQ(loads(balanced), 60);  // the heavy client alone; the other two ranks share the rest (60 + 50)
  // Every client exactly once, and the same placement every time (every rank computes it).
  for (const Placement& p : {block, balanced, Placement::Make(4, 12, MpiPlacement::kRoundRobin, work)}) {
    std::vector<int64_t> all;
    for (int r = 1; r < 4; ++r) {
      const auto hosted = p.Hosted(r);
      all.insert(all.end(), hosted.begin(), hosted.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expected(12);
    std::iota(expected.begin(), expected.end(), int64_t{0});
    EXPECT_EQ(all, expected);
  }
  EXPECT_EQ(Placement::Make(4, 12, MpiPlacement::kBalanced, work).rank_of, balanced.rank_of);
}

}  // namespace
}  // namespace asyncdp::sim::mpi
