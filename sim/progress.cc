#include "sim/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace asyncdp::sim {

ProgressReporter::ProgressReporter(int64_t expected_global_rounds, std::vector<std::vector<int64_t>> phase_ends)
    : expected_(std::max<int64_t>(1, expected_global_rounds)),
      phase_ends_(std::move(phase_ends)),
      enabled_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

std::string ProgressReporter::PhaseSummary(const ServerProtocol& server,
                                          const std::vector<std::vector<int64_t>>& phase_ends) {
  std::vector<int64_t> per_phase;
  int64_t paused = 0;
  for (size_t c = 0; c < phase_ends.size(); ++c) {
    const auto& ends = phase_ends[c];
    if (ends.empty()) continue;  // not admitted
    const int64_t prefix = server.delivered_prefix(static_cast<int64_t>(c));
    const auto phase = std::min<size_t>(std::upper_bound(ends.begin(), ends.end(), prefix) - ends.begin(), ends.size() - 1);
    if (per_phase.size() <= phase) per_phase.resize(phase + 1, 0);
    ++per_phase[phase];
    paused += server.paused(static_cast<int64_t>(c)) ? 1 : 0;
  }
  std::string out = "phases";
  for (size_t j = 0; j < per_phase.size(); ++j) {
    if (per_phase[j] > 0) out += fmt::format(" {}:{}", j + 1, per_phase[j]);
  }
  return out + fmt::format(" paused:{}", paused);
}

void ProgressReporter::OnGlobalRound(const ServerProtocol& server, const RunClock& clock) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < std::chrono::milliseconds(200)) return;
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double done = std::min(1.0, static_cast<double>(server.global_round()) / static_cast<double>(expected_));
  const double eta = done > 0 ? elapsed * (1.0 - done) / done : 0.0;
  const std::string phases = phase_ends_.empty() ? std::string() : "  " + PhaseSummary(server, phase_ends_);
  std::fprintf(stderr, "\r[train] global round %lld/%lld (%3.0f%%)  %lld gradients  elapsed %.1fs  ETA %.1fs%s   ",
               static_cast<long long>(server.global_round()), static_cast<long long>(expected_), 100.0 * done,
               static_cast<long long>(clock.gradients), elapsed, eta, phases.c_str());
  std::fflush(stderr);
}

void ProgressReporter::OnFinish(const ServerProtocol&, const RunClock&) {
  if (!enabled_) return;
  std::fprintf(stderr, "\n");
}

}  // namespace asyncdp::sim
