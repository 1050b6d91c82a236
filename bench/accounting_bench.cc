// Privacy accounting speed (issue #4 targets, one core):
//   BM_PldEpsilon/100000 (10^5 identical rounds, upper bound)   <= 50 ms   (dp_accounting PLD: 0.02-15 s,
//                                                                          PRV accountant: 0.3-40 s)
//   BM_RdpEpsilon (default 202 orders, one schedule group)       <= 1 ms
//   BM_LedgerRound (RDP ledger, per round)                       <= 10 us
// Settings are a typical DP-SGD client: q = 0.01 (BM_PldEpsilonSmallRate: q = 0.001), sigma = 1, delta =
// 1e-5. BM_Calibrate* and BM_RoundsWithinBudget use the paper's Table 3 setting on a9a (q = 26/6512,
// T = 1253 rounds, delta = 1/6513, target epsilon 0.0497): what a run pays before training.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "core/accounting/account.h"
#include "core/accounting/dp_event.h"
#include "core/accounting/pld/composed_pld_cache.h"
#include "core/accounting/pld/pld.h"
#include "core/accounting/rdp/rdp.h"
#include "core/accounting/running_epsilon.h"

namespace {

using asyncdp::SamplingModel;
namespace acc = asyncdp::accounting;

// PLD epsilon upper bound for `steps` identical rounds (discretise, window, FFT, power, query).
void BM_PldEpsilon(benchmark::State& state) {
  const int64_t steps = state.range(0);
  acc::PldOptions options;
  options.compute_lower_bound = false;
  double eps = 0.0;
  for (auto _ : state) {
    eps = acc::PldEpsilon({{0.01, 1.0, steps}}, SamplingModel::kPoisson, 1e-5, options).epsilon_upper;
    benchmark::DoNotOptimize(eps);
  }
  state.counters["epsilon"] = eps;
}
BENCHMARK(BM_PldEpsilon)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// q = 0.001: the loss bulk is 10x narrower, so the automatic grid is 10x finer (FFT 2^18 instead of 2^17).
void BM_PldEpsilonSmallRate(benchmark::State& state) {
  acc::PldOptions options;
  options.compute_lower_bound = false;
  double eps = 0.0;
  for (auto _ : state) {
    eps = acc::PldEpsilon({{0.001, 1.0, 100000}}, SamplingModel::kPoisson, 1e-5, options).epsilon_upper;
    benchmark::DoNotOptimize(eps);
  }
  state.counters["epsilon"] = eps;
}
BENCHMARK(BM_PldEpsilonSmallRate)->Unit(benchmark::kMillisecond);

// The same with the lower bound (the bracket [epsilon_lower, epsilon] that `asyncdp account` prints).
void BM_PldEpsilonBracket(benchmark::State& state) {
  const int64_t steps = state.range(0);
  acc::PldEpsilonResult r;
  for (auto _ : state) {
    r = acc::PldEpsilon({{0.01, 1.0, steps}}, SamplingModel::kPoisson, 1e-5);
    benchmark::DoNotOptimize(r);
  }
  state.counters["epsilon"] = r.epsilon_upper;
  state.counters["epsilon_lower"] = r.epsilon_lower;
  state.counters["fft_size"] = static_cast<double>(r.fft_size);
}
BENCHMARK(BM_PldEpsilonBracket)->Arg(100000)->Unit(benchmark::kMillisecond);

// A heterogeneous schedule: 10 groups of 10^4 rounds with different q and sigma.
void BM_PldEpsilonHeterogeneous(benchmark::State& state) {
  acc::Schedule schedule;
  for (int g = 0; g < 10; ++g) schedule.push_back({0.005 + 0.001 * g, 0.9 + 0.05 * g, 10000});
  acc::PldOptions options;
  options.compute_lower_bound = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(acc::PldEpsilon(schedule, SamplingModel::kPoisson, 1e-5, options));
  }
}
BENCHMARK(BM_PldEpsilonHeterogeneous)->Unit(benchmark::kMillisecond);

// RDP epsilon of a schedule from scratch: the RDP curve over all default orders plus the conversion.
void BM_RdpEpsilon(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(acc::RdpEpsilon({{0.01, 1.0, 100000}}, SamplingModel::kPoisson, 1e-5));
  }
}
BENCHMARK(BM_RdpEpsilon)->Unit(benchmark::kMicrosecond);

// The process's composition cache emptied outside the timed region: each iteration pays what a fresh
// process pays (the same request in a loop would otherwise be served from it).
void ColdCaches(benchmark::State& state) {
  state.PauseTiming();
  acc::SharedComposedPldCache().Clear();
  state.ResumeTiming();
}

// sigma for a target epsilon over two clients (the two shard sizes of a9a over 5 clients), Table 3.
void BM_Calibrate(benchmark::State& state) {
  const auto kind = static_cast<acc::AccountantKind>(state.range(0));
  const acc::EventFamily clients = acc::ScaledFamily(
      {acc::ScheduleEvent({{26.0 / 6512, 1.0, 1253}}, SamplingModel::kPoisson),
       acc::ScheduleEvent({{26.0 / 6513, 1.0, 1253}}, SamplingModel::kPoisson)});
  for (auto _ : state) {
    ColdCaches(state);
    benchmark::DoNotOptimize(acc::Calibrate(clients, 0.0497, 1.0 / 6513, kind).sigma);
  }
}
BENCHMARK(BM_Calibrate)
    ->Arg(static_cast<int>(acc::AccountantKind::kPld))
    ->Arg(static_cast<int>(acc::AccountantKind::kRdp))
    ->Unit(benchmark::kMillisecond);

// The halt round of one client whose plan overshoots its budget (Table 3 rounds, sigma 4, budget 0.0497).
void BM_RoundsWithinBudget(benchmark::State& state) {
  const auto kind = static_cast<acc::AccountantKind>(state.range(0));
  for (auto _ : state) {
    ColdCaches(state);
    benchmark::DoNotOptimize(acc::RoundsWithinBudget(
        [](int64_t t) { return acc::ScheduleEvent({{26.0 / 6512, 4.0, t}}, SamplingModel::kPoisson); }, 1253, 0.0497,
        1.0 / 6513, kind));
  }
}
BENCHMARK(BM_RoundsWithinBudget)
    ->Arg(static_cast<int>(acc::AccountantKind::kPld))
    ->Arg(static_cast<int>(acc::AccountantKind::kRdp))
    ->Unit(benchmark::kMillisecond);

// The running-epsilon column of Table 3 calibrated to epsilon = 1 (sigma 0.8016, T = 1253, 20 evaluation
// points, the two distinct clients 26/6512 and 26/6513): arg 0 composes each point afresh (what a run did
// before core/accounting/running_epsilon.h), arg 1 composes every point on the whole plan's transformed grid.
void BM_RunningEpsilonColumn(benchmark::State& state) {
  const bool incremental = state.range(0) == 1;
  const double delta = 1.0 / 6513, sigma = 0.8016;
  double last = 0.0;
  for (auto _ : state) {
    for (double n : {6512.0, 6513.0}) {
      const acc::DpEventPtr whole = acc::ScheduleEvent({{26.0 / n, sigma, 1253}}, SamplingModel::kPoisson);
      std::optional<acc::RunningEpsilon> running;
      if (incremental) running.emplace(*whole, acc::AccountantKind::kPld, delta, acc::AccountingPrecision{});
      for (int64_t point = 1; point <= 20; ++point) {
        const acc::DpEventPtr part =
            acc::ScheduleEvent({{26.0 / n, sigma, point * 1253 / 20}}, SamplingModel::kPoisson);
        if (incremental) {
          last = running->Of(*part);
        } else {
          acc::AccountQuery query;
          query.delta = delta;
          query.pld_lower_bound = false;
          last = acc::Account(*part, acc::AccountantKind::kPld, query).result.epsilon;
        }
      }
    }
    benchmark::DoNotOptimize(last);
  }
  state.counters["epsilon"] = last;
}
BENCHMARK(BM_RunningEpsilonColumn)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
