// Cost of `asyncdp audit` (sim/audit/): one canary training of experiments/audit_logistic.toml (5 clients,
// N_c = 1,000, 10 full-batch rounds: 50,000 per-example gradients and 50 noise draws over 124 coordinates
// through the real protocol on the virtual runtime), and the speed target, a whole 2 x 2,000-run
// audit of that configuration on all cores (wall time, data loading included).
#include <benchmark/benchmark.h>

#include <string>

#include "sim/audit/audit.h"
#include "sim/audit/canary_runs.h"
#include "sim/config_io.h"

namespace {

using namespace asyncdp;

sim::TrainConfig AuditLogisticConfig() {
  sim::TrainConfig c =
      sim::LoadConfigFile(std::string(ASYNCDP_SOURCE_DIR) + "/experiments/audit_logistic.toml");
  c.data.train = std::string(ASYNCDP_SHARED_DIR) + "/datasets/libsvm/a9a.gz";
  c.data.test = std::string(ASYNCDP_SHARED_DIR) + "/datasets/libsvm/a9a.t.gz";
  return c;
}

// One training of the audit (alternately with and without the canary), one thread.
void BM_AuditCanaryTraining(benchmark::State& state) {
  sim::audit::AuditOptions options;
  options.runs = 8;
  const sim::audit::CanaryExperiment experiment(AuditLogisticConfig(), options);
  uint64_t seed = 1;
  for (auto _ : state) {
    const auto trace = experiment.RunMultiRun(seed, seed % 2 == 0);
    benchmark::DoNotOptimize(experiment.Score(trace, 0));
    ++seed;
  }
  state.SetItemsProcessed(state.iterations() * 5 * 10 * 1000);  // per-example gradients
}
BENCHMARK(BM_AuditCanaryTraining)->Unit(benchmark::kMillisecond);

// The whole audit: 2 x runs trainings on all cores, the statistics, the accountants.
void BM_AuditMultiRun(benchmark::State& state) {
  sim::audit::AuditOptions options;
  options.runs = state.range(0);
  const sim::TrainConfig config = AuditLogisticConfig();
  for (auto _ : state) {
    const auto report = sim::audit::RunAudit(config, options);
    benchmark::DoNotOptimize(report.eps_lower);
  }
}
BENCHMARK(BM_AuditMultiRun)->Arg(2000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
