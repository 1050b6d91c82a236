#include "sim/runtime/trace_recorder.h"

#include <fmt/format.h>

namespace asyncdp::sim {

TraceRecorder::TraceRecorder() : csv_("event,client,local_round,computed_at,global_round\n") {}

void TraceRecorder::OnUpdate(const UpdateMessage& message, const RunClock& /*clock*/) {
  // Called before the server applies the update: global_round_ is the round it is applied at.
  csv_ += fmt::format("update,{},{},{},{}\n", message.client, message.local_round, message.computed_at, global_round_);
}

void TraceRecorder::OnGlobalRound(const ServerProtocol& server, const RunClock& /*clock*/) {
  global_round_ = server.global_round();
  csv_ += fmt::format("broadcast,,,,{}\n", global_round_);
}

void TraceRecorder::OnClientExcluded(int64_t client, const RunClock& /*clock*/) {
  csv_ += fmt::format("exclude,{},,,{}\n", client, global_round_);
}

}  // namespace asyncdp::sim
