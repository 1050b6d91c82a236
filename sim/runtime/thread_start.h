// Starting an OS thread without std::terminate: std::thread's constructor throws std::system_error when the
// system refuses a thread (RLIMIT_NPROC, memory for its stack, a container's pids limit). The runtimes turn
// that into ThreadStartError — an InputError, so the CLI prints `error: ...` and exits with code 2 — after
// stopping and joining the threads they had already started (a joinable std::thread destroyed during
// unwinding would call std::terminate).
#pragma once

#include <functional>
#include <string>
#include <system_error>
#include <thread>

#include "core/error.h"

namespace asyncdp::sim {

class ThreadStartError : public InputError {
 public:
  ThreadStartError(const std::string& where, const std::string& message) : InputError(where, message) {}
};

// How a component starts its threads; tests swap in one that fails (conventions.md §13, faults through a
// swappable interface).
using ThreadStarter = std::function<std::thread(std::function<void()>)>;

inline std::thread StartThread(std::function<void()> body) { return std::thread(std::move(body)); }

// The error for the `index`-th of `count` threads (0-based) of `role`, configured by `key`.
inline ThreadStartError ThreadStartFailure(const std::string& key, const std::string& role, int index, int count,
                                           const std::system_error& e) {
  return ThreadStartError(key, "the system refused to start " + role + " thread " + std::to_string(index + 1) +
                                   " of " + std::to_string(count) + " (" + e.what() +
                                   "); lower this setting or raise the process/thread limit");
}

}  // namespace asyncdp::sim
