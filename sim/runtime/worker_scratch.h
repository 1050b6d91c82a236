// Model scratch space (models::Workspace) per worker thread instead of per client.
//
// A workspace holds a round's intermediate buffers: for LeNet-5 ≈ 0.7 MiB plus a oneTBB arena. Only the
// clients whose rounds are computing at this moment need one, and a worker computes one round at a time,
// so a runtime with W workers and n clients needs W workspaces, not n: at 1,000 LeNet clients that is
// 1.4 → 0.7 GB (BENCHMARKS.md, "Memory"), and a worker keeps reusing memory that is already in its cache.
//
// Each worker owns one WorkerScratch and lends it to the rounds it computes (ClientProtocol::ComputeRound).
// Clients share a workspace only if they have the same model object and the same planned largest batch
// (ClientProtocol::scratch_batch): a workspace's chunking follows that batch, so a client computes with
// exactly the workspace it would have made itself and its rounds keep their bits. Usually all clients
// share one; an audited client's canary model or per-client sample sizes add a few more. Past
// kMaxWorkspaces pairs (clients whose largest batches all differ) the rest keep their own workspace, so
// no run holds more workspaces than it did with one per client, plus kMaxWorkspaces per worker.
//
// Not thread-safe: one worker thread uses it at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/model.h"
#include "sim/protocol/client.h"

namespace asyncdp::sim {

class WorkerScratch {
 public:
  static constexpr size_t kMaxWorkspaces = 8;

  // The workspace for `client`'s round, made (model().NewWorkspace(scratch_batch())) the first time a
  // client of that (model, batch) pair computes on this worker; nullptr (the client uses its own) when
  // this worker already holds kMaxWorkspaces others.
  models::Workspace* For(const ClientProtocol& client);

 private:
  struct Entry {
    const models::Model* model;
    int64_t batch;
    std::unique_ptr<models::Workspace> workspace;
  };
  std::vector<Entry> entries_;  // few: searched linearly
};

}  // namespace asyncdp::sim
