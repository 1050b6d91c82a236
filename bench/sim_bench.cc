// Simulator benchmarks: a whole Table 3 run, protocol overhead, and both runtimes at 10^2–10^4 clients.
// Data loading is excluded (manual time = the runtime's own wall clock).
#include <benchmark/benchmark.h>

#include <string>

#include "sim/config_io.h"
#include "sim/train.h"

namespace asyncdp::sim {
namespace {

std::string Shared(const std::string& relative) { return std::string(ASYNCDP_SHARED_DIR) + "/" + relative; }

// Table 3, strongly convex: 5 clients, a9a split iid (N_c = 6512), K = 5 N_c each, s = 26, σ = 19.29962.
TrainConfig Table3StronglyConvex(const std::string& runtime) {
  TrainConfig c;
  c.data.train = Shared("datasets/libsvm/a9a.gz");
  c.data.test = Shared("datasets/libsvm/a9a.t.gz");
  c.data.features = 123;
  c.model.kind = "logistic_l2";
  c.clients.count = 5;
  c.protocol.runtime = *EnumFromString<RuntimeKind>(runtime);
  // virtual: the event loop alone is fastest for 5 µs rounds; threads: a worker per core (the default).
  c.protocol.worker_threads = runtime == "virtual" ? 1 : 0;
  c.dp.clip = 0.1;
  c.dp.sigma = 19.29962;
  c.schedule.sample_size = 26;
  c.schedule.epochs = 5.0;
  c.schedule.step_rule = StepSizeSchedule::kInverseLinear;
  c.schedule.beta = 0.001;
  c.eval.points = 0;  // evaluate only after the timed run: evaluation is not protocol work
  c.eval.train_rows = 0;
  return c;
}

void RunAndReport(benchmark::State& state, const TrainConfig& config) {
  double rounds = 0, grads = 0, overhead = 0, cpu_share = 0, worker_cpu = 0;
  for (auto _ : state) {
    const TrainResult r = RunTraining(config, {.progress = false});
    state.SetIterationTime(r.runtime.wall_seconds);
    rounds += static_cast<double>(r.runtime.updates);
    grads += static_cast<double>(r.runtime.gradients);
    overhead += ProtocolOverhead(r.runtime);
    worker_cpu += r.runtime.worker_cpu_seconds;
    cpu_share += CpuShare(r.runtime).value_or(0.0);
    benchmark::DoNotOptimize(r.final_model.data());
  }
  state.counters["rounds_per_second"] = benchmark::Counter(rounds, benchmark::Counter::kIsRate);
  state.counters["grads_per_second"] = benchmark::Counter(grads, benchmark::Counter::kIsRate);
  // Share of the run's wall time (minus evaluation) spent outside gradient + noise work, with the work
  // spread over min(clients, threads) cores; mean over iterations.
  state.counters["protocol_overhead"] = overhead / static_cast<double>(state.iterations());
  // Threads runtime (0 elsewhere): the workers' own CPU time per run, and its share of cores × wall — on a
  // shared machine the rest went to other processes or idle waits, and counts as protocol overhead above.
  state.counters["worker_cpu_ms"] = 1e3 * worker_cpu / static_cast<double>(state.iterations());
  state.counters["cpu_share"] = cpu_share / static_cast<double>(state.iterations());
}

void BM_Table3StronglyConvex(benchmark::State& state, const std::string& runtime) {
  RunAndReport(state, Table3StronglyConvex(runtime));
}
BENCHMARK_CAPTURE(BM_Table3StronglyConvex, virtual, std::string("virtual"))
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Table3StronglyConvex, threads, std::string("threads"))
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

// Table 4 (LeNet-5 on Fashion-MNIST, 5 clients, s = 370, C = 0.025, σ = 12.10881), shortened to 16 rounds
// per client: protocol overhead when a round is milliseconds of work.
void BM_Table4LeNet(benchmark::State& state, const std::string& runtime) {
  TrainConfig c = LoadConfigFile(std::string(ASYNCDP_SOURCE_DIR) + "/experiments/table4_lenet.toml");
  c.protocol.runtime = *EnumFromString<RuntimeKind>(runtime);
  c.protocol.worker_threads = 2;  // virtual: both cores compute client rounds
  c.schedule.rounds = 16;
  c.eval.points = 0;
  c.eval.train_rows = 0;
  c.data.eval_rows = 1000;
  RunAndReport(state, c);
}
BENCHMARK_CAPTURE(BM_Table4LeNet, virtual, std::string("virtual"))
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK_CAPTURE(BM_Table4LeNet, threads, std::string("threads"))
    ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(2);

// 10^4 logistic-regression clients on the virtual clock (a9a split 10^4 ways: ~3 records each, s = 1,
// 20 rounds per client, exponential latencies, lognormal speeds).
void BM_VirtualRuntimeManyClients(benchmark::State& state) {
  TrainConfig c = Table3StronglyConvex("virtual");
  c.clients.count = state.range(0);
  c.clients.speed = SpeedModel::kLognormal;
  c.clients.latency = LatencyModel::kExponential;
  c.schedule.sample_size = 1;
  c.schedule.rounds = 20;
  RunAndReport(state, c);
}
BENCHMARK(BM_VirtualRuntimeManyClients)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

// The Table 3 run on the threads runtime (a worker per core) with a9a split over more clients: 100 clients
// (N_c = 325, s = 26, K = 5 N_c: the same 163k gradients as Table 3), and 10⁴ clients (N_c = 3, s = 1,
// 20 rounds each), the clients being tasks on the worker pool.
void BM_ThreadRuntimeManyClients(benchmark::State& state) {
  TrainConfig c = Table3StronglyConvex("threads");
  c.clients.count = state.range(0);
  c.dp.delta = 1e-5;  // 1/N_c would be 1/3 at 10⁴ clients
  if (state.range(0) > 1000) {
    c.schedule.sample_size = 1;
    c.schedule.rounds = 20;
  }
  RunAndReport(state, c);
}
BENCHMARK(BM_ThreadRuntimeManyClients)->Arg(100)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ThreadRuntimeManyClients)->Arg(10000)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace asyncdp::sim
