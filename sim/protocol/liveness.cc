#include "sim/protocol/liveness.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace asyncdp::sim {

Liveness::Liveness(int64_t clients, double exclude_after, double start)
    : exclude_after_(exclude_after), last_heard_(static_cast<size_t>(clients), start), last_model_(start) {
  ASYNCDP_CHECK(clients >= 1 && exclude_after >= 0.0);
}

void Liveness::Heard(int64_t client, double arrival) {
  double& heard = last_heard_[static_cast<size_t>(client)];
  heard = std::max(heard, arrival);
}

void Liveness::ModelFormed(double now) { last_model_ = std::max(last_model_, now); }

double Liveness::SilentFor(int64_t client, double now) const {
  return now - std::max(last_heard_[static_cast<size_t>(client)], last_model_);
}

std::vector<int64_t> Liveness::ToExclude(const ServerProtocol& server, double now) const {
  std::vector<int64_t> silent;
  if (exclude_after_ <= 0.0 || !server.held_up()) return silent;
  for (int64_t c = 0; c < static_cast<int64_t>(last_heard_.size()); ++c) {
    if (server.lagging(c) && SilentFor(c, now) > exclude_after_) silent.push_back(c);
  }
  return silent;
}

bool Liveness::CutOff(const ServerProtocol& server, int64_t client, double now) const {
  return exclude_after_ > 0.0 && server.excluded(client) && SilentFor(client, now) > exclude_after_;
}

double Liveness::CutOffAt(const ServerProtocol& server, int64_t client) const {
  if (exclude_after_ <= 0.0 || !server.excluded(client)) return std::numeric_limits<double>::infinity();
  return std::max(last_heard_[static_cast<size_t>(client)], last_model_) + exclude_after_;
}

double Liveness::SkipPast(double next, double now) {
  constexpr double kPastDeadline = 1e-9;
  return std::max(0.0, next - now + kPastDeadline * std::max(1.0, next));
}

double Liveness::NextExclusion(const ServerProtocol& server) const {
  double next = std::numeric_limits<double>::infinity();
  if (exclude_after_ <= 0.0 || !server.held_up()) return next;
  for (int64_t c = 0; c < static_cast<int64_t>(last_heard_.size()); ++c) {
    if (!server.lagging(c)) continue;
    next = std::min(next, std::max(last_heard_[static_cast<size_t>(c)], last_model_) + exclude_after_);
  }
  return next;
}

}  // namespace asyncdp::sim
