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

void ProgressReporter::Draw(const char* what, int64_t done, int64_t expected, int64_t gradients,
                            const std::string& extra) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < std::chrono::milliseconds(200)) return;
  last_print_ = now;
  expected = std::max<int64_t>(1, expected);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double share = std::min(1.0, static_cast<double>(done) / static_cast<double>(expected));
  const double eta = share > 0 ? elapsed * (1.0 - share) / share : 0.0;
  const std::string counted = gradients >= 0 ? fmt::format("  {} gradients", gradients) : std::string();
  std::fprintf(stderr, "\r[train] %s %lld/%lld (%3.0f%%)%s  elapsed %.1fs  ETA %.1fs%s   ", what,
               static_cast<long long>(done), static_cast<long long>(expected), 100.0 * share, counted.c_str(),
               elapsed, eta, extra.c_str());
  std::fflush(stderr);
}

void ProgressReporter::End() {
  if (!enabled_) return;
  std::fprintf(stderr, "\n");
}

void ProgressReporter::OnGlobalRound(const ServerProtocol& server, const RunClock& clock) {
  if (!enabled_) return;
  const std::string phases = phase_ends_.empty() ? std::string() : "  " + PhaseSummary(server, phase_ends_);
  Draw("global round", server.global_round(), expected_, clock.gradients, phases);
}

void ProgressReporter::OnFinish(const ServerProtocol&, const RunClock&) { End(); }

void ProgressReporter::OnCheckInStep(int64_t taken, int64_t total, const RunClock& /*clock*/) {
  if (!enabled_) return;
  // The gradients behind the steps are the check-ins' secret: not shown.
  Draw("step", taken, total, -1, std::string());
}

void ProgressReporter::OnCheckInFinish(int64_t, const RunClock&) { End(); }

}  // namespace asyncdp::sim
