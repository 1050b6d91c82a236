// The runtime-invariant oracle: checks one run's protocol invariants from its outputs alone — events.csv
// (output.trace) and summary.json — sharing no code with the server, the runtimes or the trace writer's
// reader side. Used on the virtual, threads and MPI runtimes alike (runtime_invariants_test.cc,
// mpi_runtime_test.cc). Header-only: std and nlohmann-json, so the MPI test binary can use it too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace asyncdp::sim::invariants {

struct RunFacts {
  int64_t clients = 0;
  int64_t planned_rounds = 0;  // T of every client (the tests use one plan length)
  int64_t tau = 1;             // -1: unbounded rule
  std::vector<int64_t> dropout_ids;
  int64_t dropout_round = 0;
};

// The violations found (empty = every invariant holds). Invariants (docs/design.md, "End of a run"):
//  1. every applied (client, round) is applied exactly once, and is a round of the plan;
//  2. broadcasts are numbered increasingly, and v̂_k is formed only once every client that was never
//     excluded before it has had its rounds 0..min(k, its final rounds) − 1 applied;
//  3. staleness i − k ≤ τ, and lag ≤ τ + 1, for every update of a client never excluded;
//  4. lag = applied-at − computed-at ≥ 0, and its maximum is the summary's max_update_lag;
//  5. G ≤ T, and G is the last broadcast;
//  6. a client not reported unfinished had every round it completed applied;
//  7. every client finished its plan, stopped by a configured rule (dropout), or is reported unfinished
//     with a reason; truncated ⇔ some client is unfinished.
inline std::vector<std::string> CheckRunInvariants(const std::string& events_csv, const nlohmann::json& summary,
                                                   const RunFacts& facts) {
  std::vector<std::string> bad;
  auto fail = [&](const std::string& what) {
    if (bad.size() < 20) bad.push_back(what);
  };
  const auto n = static_cast<size_t>(facts.clients);
  std::vector<std::set<int64_t>> applied(n);
  std::vector<bool> excluded_ever(n, false);
  std::vector<int64_t> final_rounds(n, 0);
  for (size_t c = 0; c < n; ++c) final_rounds[c] = summary["rounds_per_client"][c].get<int64_t>();
  struct Broadcast {
    int64_t k;
    std::vector<int64_t> prefix;     // applied prefix of each client at that moment
    std::vector<bool> excluded;      // excluded at least once before it
  };
  std::vector<Broadcast> broadcasts;
  int64_t last_k = 0, max_lag = 0;
  std::istringstream in(events_csv);
  std::string line;
  std::getline(in, line);
  if (line != "event,client,local_round,computed_at,global_round") fail("events.csv header: " + line);
  auto prefix_of = [&](size_t c) {
    int64_t p = 0;
    while (applied[c].count(p)) ++p;
    return p;
  };
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    while (f.size() < 5) f.push_back("");
    if (f[0] == "update") {
      const auto c = static_cast<size_t>(std::stoll(f[1]));
      const int64_t i = std::stoll(f[2]), computed = std::stoll(f[3]), at = std::stoll(f[4]);
      if (c >= n) { fail("update of unknown client " + f[1]); continue; }
      if (i < 0 || i >= facts.planned_rounds) fail("client " + f[1] + " round " + f[2] + " outside the plan");
      if (!applied[c].insert(i).second) fail("client " + f[1] + " round " + f[2] + " applied twice");
      if (at < computed) fail("client " + f[1] + " round " + f[2] + " applied at " + f[4] + " before computed at " + f[3]);
      max_lag = std::max(max_lag, at - computed);
      if (at != last_k) fail("update applied at " + f[4] + " but the newest broadcast is " + std::to_string(last_k));
      if (facts.tau >= 0 && !excluded_ever[c] && i - computed > facts.tau) {
        fail("client " + f[1] + " (never excluded) started round " + f[2] + " on v_" + f[3] + ": staleness > tau");
      }
      // A client that blocks holds the global round at its prefix: its update lands at most τ + 1 late.
      if (facts.tau >= 0 && !excluded_ever[c] && at - computed > facts.tau + 1) {
        fail("client " + f[1] + " (never excluded) round " + f[2] + " applied " + std::to_string(at - computed) +
             " global rounds after it was computed: lag > tau + 1");
      }
    } else if (f[0] == "broadcast") {
      const int64_t k = std::stoll(f[4]);
      if (k <= last_k) fail("broadcast " + f[4] + " after " + std::to_string(last_k));
      last_k = k;
      Broadcast b{k, {}, excluded_ever};
      for (size_t c = 0; c < n; ++c) b.prefix.push_back(prefix_of(c));
      broadcasts.push_back(std::move(b));
    } else if (f[0] == "exclude") {
      excluded_ever[static_cast<size_t>(std::stoll(f[1]))] = true;
    } else {
      fail("unknown event: " + line);
    }
  }
  for (const Broadcast& b : broadcasts) {
    for (size_t c = 0; c < n; ++c) {
      if (b.excluded[c] || excluded_ever[c]) continue;  // (re-admission rules apply to excluded clients)
      const int64_t need = std::min(b.k, final_rounds[c]);
      if (b.prefix[c] < need) {
        fail("v_" + std::to_string(b.k) + " formed with client " + std::to_string(c) + " (never excluded) at " +
             std::to_string(b.prefix[c]) + " applied rounds, needs " + std::to_string(need));
      }
    }
  }
  if (summary["max_update_lag"].get<int64_t>() != max_lag) {
    fail("max_update_lag " + summary["max_update_lag"].dump() + " but the trace gives " + std::to_string(max_lag));
  }
  const int64_t g = summary["global_rounds"].get<int64_t>();
  if (g > facts.planned_rounds) fail("G = " + std::to_string(g) + " > T = " + std::to_string(facts.planned_rounds));
  if (g != last_k) fail("G = " + std::to_string(g) + " but the last broadcast is " + std::to_string(last_k));
  std::map<int64_t, std::string> unfinished;
  for (const auto& u : summary["unfinished"]) unfinished[u["client"].get<int64_t>()] = u["reason"].get<std::string>();
  if (summary["truncated"].get<bool>() != !unfinished.empty()) fail("truncated disagrees with unfinished");
  for (size_t c = 0; c < n; ++c) {
    const auto id = static_cast<int64_t>(c);
    const bool dropout = std::find(facts.dropout_ids.begin(), facts.dropout_ids.end(), id) != facts.dropout_ids.end();
    const int64_t expected = dropout ? std::min(facts.dropout_round, facts.planned_rounds) : facts.planned_rounds;
    if (unfinished.count(id)) {
      if (unfinished[id].empty()) fail("client " + std::to_string(c) + " unfinished without a reason");
      continue;
    }
    if (static_cast<int64_t>(applied[c].size()) != final_rounds[c]) {
      fail("client " + std::to_string(c) + " completed " + std::to_string(final_rounds[c]) + " rounds, " +
           std::to_string(applied[c].size()) + " applied, and is not reported unfinished");
    }
    if (final_rounds[c] != expected) {
      fail("client " + std::to_string(c) + " ran " + std::to_string(final_rounds[c]) + " of " +
           std::to_string(expected) + " rounds and is not reported unfinished");
    }
  }
  return bad;
}

}  // namespace asyncdp::sim::invariants
