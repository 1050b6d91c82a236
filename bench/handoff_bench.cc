// What it costs to pass something from one core to the other: the floor under the threads runtime's
// per-round protocol cost when a client's round and the server's drain run on different cores
// (BENCHMARKS.md, "Simulator"). Two threads pinned to CPUs 0 and 1 (when the machine has two) pass a token
// back and forth; one benchmark iteration is one round trip, so a one-way hand-off is half of it.
//   flag        a 64-byte line holding a counter: the bare cache-line transfer
//   update_124  the writer first fills 124 floats (a Table 3 update U, 496 bytes = 8 cache lines), the
//               reader adds them up before answering: moving one logistic-regression update
//   mutex       the token is a counter under a std::mutex: the cheapest locked hand-off
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

namespace asyncdp {
namespace {

constexpr int kFloats = 124;  // a9a's 123 features + bias

struct alignas(64) Line {
  std::atomic<uint64_t> turn{0};  // odd: the partner's turn; even: the benchmark thread's
};

struct alignas(64) Message {
  std::array<float, kFloats> values{};
};

struct alignas(64) LockedToken {
  std::mutex mutex;
  uint64_t turn = 0;  // guarded by mutex
};

void PinToCpu(int cpu) {
  if (std::thread::hardware_concurrency() < 2) return;  // one CPU: both threads share it (still correct)
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: unpinned still measures
}

enum class Kind { kFlag, kUpdate, kMutex };

// Waits until `ready(turn)` sees the expected turn; the partner returns when `stop` is set.
template <typename Ready>
bool SpinUntil(Ready ready, const std::atomic<bool>& stop) {
  while (!ready()) {
    if (stop.load(std::memory_order_relaxed)) return false;
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  return true;
}

void BM_CoreHandoff(benchmark::State& state, Kind kind) {
  Line line;
  Message message;
  LockedToken token;
  std::atomic<bool> stop{false};
  float checksum = 0.0f;  // the partner's reads, kept observable

  // The partner: waits for an odd turn, (update_124: reads the message, writes its own reply into it),
  // answers with the next even turn.
  std::thread partner([&] {
    PinToCpu(1);
    for (uint64_t expect = 1;; expect += 2) {
      if (kind == Kind::kMutex) {
        const bool go = SpinUntil(
            [&] {
              std::lock_guard lock(token.mutex);
              if (token.turn != expect) return false;
              token.turn = expect + 1;
              return true;
            },
            stop);
        if (!go) return;
        continue;
      }
      if (!SpinUntil([&] { return line.turn.load(std::memory_order_acquire) == expect; }, stop)) return;
      if (kind == Kind::kUpdate) {
        float sum = 0.0f;
        for (float& v : message.values) {
          sum += v;
          v = sum;
        }
        checksum += sum;
      }
      line.turn.store(expect + 1, std::memory_order_release);
    }
  });
  PinToCpu(0);

  uint64_t turn = 0;
  for (auto _ : state) {
    if (kind == Kind::kMutex) {
      {
        std::lock_guard lock(token.mutex);
        token.turn = turn + 1;
      }
      SpinUntil(
          [&] {
            std::lock_guard lock(token.mutex);
            return token.turn == turn + 2;
          },
          stop);
    } else {
      if (kind == Kind::kUpdate) {
        for (int j = 0; j < kFloats; ++j) message.values[j] = static_cast<float>(turn + j);
      }
      line.turn.store(turn + 1, std::memory_order_release);
      SpinUntil([&] { return line.turn.load(std::memory_order_acquire) == turn + 2; }, stop);
    }
    turn += 2;
  }
  stop.store(true, std::memory_order_relaxed);
  partner.join();
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(state.iterations());
  // One iteration = a round trip = two hand-offs; shown in seconds per hand-off (e.g. "60n" = 60 ns).
  state.counters["one_way"] =
      benchmark::Counter(2.0 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK_CAPTURE(BM_CoreHandoff, flag, Kind::kFlag)->UseRealTime()->MinTime(0.5);
BENCHMARK_CAPTURE(BM_CoreHandoff, update_124, Kind::kUpdate)->UseRealTime()->MinTime(0.5);
BENCHMARK_CAPTURE(BM_CoreHandoff, mutex, Kind::kMutex)->UseRealTime()->MinTime(0.5);

}  // namespace
}  // namespace asyncdp
