// Random-allocation accounting speed (issue #13 target: m = 1,000 steps, E = 100 windows in <= 1 s, one
// core). Rows: every bound (RDP remove, AM-GM add, recursive Poisson-PLD bound, the allocation PLD;
// the decomposition does not apply to E > 1), the RDP-only fast path, one window with all four bounds,
// and the FMT21 shuffling bound for n = 1,000 and 10^5. sigma = 1, delta = 1e-6.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/pld/composed_pld_cache.h"
#include "core/accounting/random_allocation/allocation_pld.h"
#include "core/accounting/random_allocation/allocation_pld_lower.h"
#include "core/accounting/random_allocation/random_allocation.h"
#include "core/accounting/random_allocation/remove_rdp.h"
#include "core/accounting/shuffle/clones.h"

namespace {

namespace acc = asyncdp::accounting;

void BM_RandomAllocationEpsilon(benchmark::State& state) {
  const acc::RandomAllocationParams params{1000, 1, state.range(0), 1.0, 1.0};
  double eps = 0.0;
  for (auto _ : state) {
    eps = acc::RandomAllocationEpsilon(params, 1e-6).value;
    benchmark::DoNotOptimize(eps);
  }
  state.counters["epsilon"] = eps;
}
BENCHMARK(BM_RandomAllocationEpsilon)->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond);

void BM_RandomAllocationRenyiOnly(benchmark::State& state) {
  acc::RandomAllocationOptions options;
  options.use_decomposition = false;
  options.use_recursive = false;
  const acc::RandomAllocationParams params{1000, 1, 100, 1.0, 1.0};
  double eps = 0.0;
  for (auto _ : state) {
    eps = acc::RandomAllocationEpsilon(params, 1e-6, options).value;
    benchmark::DoNotOptimize(eps);
  }
  state.counters["epsilon"] = eps;
}
BENCHMARK(BM_RandomAllocationRenyiOnly)->Unit(benchmark::kMillisecond);

// The random-allocation PLD alone (allocation_pld.h): one window's likelihood-ratio law (the FFT
// convolutions over m steps) and its composition over E windows; args m, E, sigma = 1 (0.8 at m = 1000).
void BM_AllocationPld(benchmark::State& state) {
  const int64_t m = state.range(0);
  const int64_t windows = state.range(1);
  const double sigma = m == 1000 ? 0.8 : 1.0;
  double eps = 0.0;
  for (auto _ : state) {
    const acc::AllocationPld pld(m, windows, sigma, 1.0);
    eps = pld.EpsilonUpper(1e-6);
    benchmark::DoNotOptimize(eps);
  }
  state.counters["epsilon"] = eps;
}
BENCHMARK(BM_AllocationPld)
    ->Args({10, 10})
    ->Args({100, 10})
    ->Args({1000, 100})
    ->Unit(benchmark::kMillisecond);

// The certified lower bound beside it (allocation_pld_lower.h): the dominated law by pooling, same grids.
void BM_AllocationPldLower(benchmark::State& state) {
  const int64_t m = state.range(0);
  const int64_t windows = state.range(1);
  const double sigma = m == 1000 ? 0.8 : 1.0;
  double eps = 0.0;
  for (auto _ : state) {
    const acc::AllocationPldLower pld(m, windows, sigma, 1.0);
    eps = pld.EpsilonLower(1e-6);
    benchmark::DoNotOptimize(eps);
  }
  state.counters["epsilon"] = eps;
}
BENCHMARK(BM_AllocationPldLower)
    ->Args({10, 10})
    ->Args({100, 10})
    ->Args({1000, 100})
    ->Unit(benchmark::kMillisecond);

// The generating-function evaluation of the exact remove RDP for orders 2..max_order.
void BM_AllocationRemoveRdpCurve(benchmark::State& state) {
  const std::vector<double> log_moments =
      acc::GaussianLogMoments(1.0, 1.0, static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(acc::AllocationRemoveRdp(1000, log_moments));
}
BENCHMARK(BM_AllocationRemoveRdpCurve)->Arg(64)->Arg(512)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_ShuffledGaussianEpsilon(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(acc::ShuffledGaussianEpsilon(state.range(0), 4.0, 2.0, 1e-6));
  state.counters["epsilon"] = acc::ShuffledGaussianEpsilon(state.range(0), 4.0, 2.0, 1e-6).numerical;
}
BENCHMARK(BM_ShuffledGaussianEpsilon)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// sigma for a target epsilon (state.range(0) / 10) at m = 1,000, E = 100, delta = 1e-6, through the one
// calibrator (account.h): what `asyncdp account --sampling random_allocation --epsilon` and check-in runs
// pay. Each iteration starts cold: the process's caches (random-allocation windows, PLD compositions) are
// emptied outside the timed region, as a fresh process has them. (Targets 1e-6 relative apart were not
// enough: at epsilon = 1 the search's few probes repeated across iterations and were served from the
// cache, 25 ms against 0.4 s cold.)
void BM_CalibrateRandomAllocation(benchmark::State& state) {
  const acc::EventFamily family = acc::ScaledFamily(
      {acc::ScheduleEvent({{1.0 / 1000, 1.0, 100 * 1000}}, asyncdp::SamplingModel::kRandomAllocation,
                          acc::NoiseModel::kGaussian, acc::AllocationWindow{1000, 1, 1.0})});
  const double target = static_cast<double>(state.range(0)) / 10.0;
  int64_t i = 0;
  double sigma = 0.0;
  for (auto _ : state) {
    state.PauseTiming();
    acc::SharedAllocationInstanceCache()->Clear();
    acc::SharedComposedPldCache().Clear();
    state.ResumeTiming();
    sigma = acc::Calibrate(family, target * (1.0 + 1e-6 * static_cast<double>(++i)), 1e-6,
                           acc::AccountantKind::kRandomAllocation)
                .sigma;
    benchmark::DoNotOptimize(sigma);
  }
  state.counters["sigma"] = sigma;
}
BENCHMARK(BM_CalibrateRandomAllocation)->Arg(10)->Arg(30)->Arg(80)->Unit(benchmark::kMillisecond);

}  // namespace
