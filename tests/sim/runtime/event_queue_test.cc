#include "sim/runtime/event_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace asyncdp::sim {
namespace {

TEST(EventKey, OrdersExactlyLikeTimeThenClientThenSequence) {
  std::mt19937_64 rng(5);
  // Few distinct times and clients, so ties on the leading fields are frequent.
  const double times[] = {0.0, 1e-300, 2.5e-4, 2.5e-4 + 1e-19, 0.001, 1.0, 3.75, 1e9};
  struct Triple {
    double time;
    int64_t client;
    uint64_t sequence;
  };
  std::vector<Triple> triples;
  for (int i = 0; i < 400; ++i) {
    triples.push_back({times[rng() % 8], static_cast<int64_t>(rng() % 4 == 0 ? kMaxClients - 1 - rng() % 3 : rng() % 5),
                       rng() % 3 == 0 ? kMaxSequence - 1 - rng() % 3 : rng() % 7});
  }
  for (const Triple& a : triples) {
    for (const Triple& b : triples) {
      const bool tuple_less = std::tie(a.time, a.client, a.sequence) < std::tie(b.time, b.client, b.sequence);
      ASSERT_EQ(MakeKey(a.time, a.client, a.sequence) < MakeKey(b.time, b.client, b.sequence), tuple_less);
    }
  }
}

TEST(EventKey, RoundTripsTimeAndClient) {
  for (double t : {0.0, 1e-12, 0.5, 123.456}) {
    for (int64_t c : {int64_t{0}, int64_t{7}, static_cast<int64_t>(kMaxClients - 1)}) {
      const EventKey key = MakeKey(t, c, 42);
      EXPECT_EQ(TimeOf(key), t);
      EXPECT_EQ(ClientOf(key), c);
    }
  }
  EXPECT_EQ(MakeKey(-0.0, 1, 1), MakeKey(0.0, 1, 1));  // −0 is normalised, not ordered after +inf
}

TEST(SlotPool, ReusesFreedSlots) {
  SlotPool<std::string> pool;
  const int64_t a = pool.Put("a");
  const int64_t b = pool.Put("b");
  EXPECT_NE(a, b);
  pool.Free(a);
  const int64_t c = pool.Put("c");
  EXPECT_EQ(c, a);
  EXPECT_EQ(pool[c], "c");
  EXPECT_EQ(pool[b], "b");
  pool.Free(b);
  const int64_t d = pool.Acquire();  // keeps what was there, for buffer reuse
  EXPECT_EQ(d, b);
  EXPECT_EQ(pool[d], "b");
}

}  // namespace
}  // namespace asyncdp::sim
