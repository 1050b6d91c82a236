#include "sim/runtime/worker_scratch.h"

namespace asyncdp::sim {

models::Workspace* WorkerScratch::For(const ClientProtocol& client) {
  const models::Model* model = &client.model();
  const int64_t batch = client.scratch_batch();
  for (Entry& entry : entries_) {
    if (entry.model == model && entry.batch == batch) return entry.workspace.get();
  }
  if (entries_.size() == kMaxWorkspaces) return nullptr;
  entries_.push_back(Entry{model, batch, model->NewWorkspace(batch)});
  return entries_.back().workspace.get();
}

}  // namespace asyncdp::sim
