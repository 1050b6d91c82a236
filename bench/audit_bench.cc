// Cost of the audit statistics (core/audit/), to set beside the training runs they grade: a 2 x 2,000-run
// multi-run audit of a 10-round logistic-regression configuration runs 4,000 trainings (~0.1 s each in
// the Table 3 setting), so the statistics must stay far below a second.
//   BM_MultiRunAudit/2000     all three bounds (threshold selection on 1,000 + 1,000 held-out runs, Clopper–
//                             Pearson on the other 2,000, the GDP conversions), 2 x 2,000 scores
//   BM_OneRunAudit            m = 1,000 canaries, 100 + 100 guesses, delta = 1e-5
//   BM_OneRunEpsilonLarge     the paper's white-box case: m = 10^5, 1,439 of 1,510 guesses correct
//   BM_ClopperPearsonUpper    one one-sided bound, 2,000 trials
//   BM_OneRunEstimates/mu     both one-run estimators (Steinke's and the f-DP one's two families) over the 12
//                             guess-count choices, on the synthetic fixture of 10,000 + 10,000 canaries
//                             (Gaussian quantiles of N(mu, 1) and N(0, 1);
//                             tests/sim/audit/one_run_fixture_test.cc)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/audit/clopper_pearson.h"
#include "core/audit/fdp_one_run.h"
#include "core/audit/multi_run.h"
#include "core/audit/normal.h"
#include "core/audit/one_run.h"
#include "core/random.h"

namespace {

namespace audit = asyncdp::audit;

std::vector<double> Scores(uint32_t side, int64_t n, double mean) {
  asyncdp::RandomStream stream(asyncdp::StreamKey{1, side, 0, asyncdp::StreamPurpose::kTest});
  std::vector<double> s(n);
  for (double& x : s) x = mean + stream.NextNormal();
  return s;
}

// Scores of the full-batch Dirac canary with true eps(1e-5) ~ 4 (mu = 0.925).
void BM_MultiRunAudit(benchmark::State& state) {
  const auto in = Scores(1, state.range(0), 0.925);
  const auto out = Scores(0, state.range(0), 0.0);
  audit::MultiRunAuditOptions options;
  audit::MultiRunAuditResult r;
  for (auto _ : state) {
    r = audit::MultiRunAudit(in, out, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["eps_definition"] = r.definition.epsilon;
  state.counters["eps_gdp_counts"] = r.gdp_counts.epsilon;
  state.counters["eps_gdp_fit"] = r.gdp_fit.epsilon;
}
BENCHMARK(BM_MultiRunAudit)->Arg(2000)->Unit(benchmark::kMillisecond);

void BM_OneRunAudit(benchmark::State& state) {
  const auto included = audit::DrawCanaryInclusion(5, 0, 1000);
  std::vector<double> scores = Scores(2, 1000, 0.0);
  for (size_t i = 0; i < scores.size(); ++i) scores[i] += included[i] ? 2.0 : 0.0;
  audit::OneRunAuditOptions options;
  options.k_plus = 100;
  options.k_minus = 100;
  audit::OneRunAuditResult r;
  for (auto _ : state) {
    r = audit::OneRunAudit(scores, included, options);
    benchmark::DoNotOptimize(r);
  }
  state.counters["eps"] = r.epsilon;
}
BENCHMARK(BM_OneRunAudit)->Unit(benchmark::kMillisecond);

void BM_OneRunEpsilonLarge(benchmark::State& state) {
  double eps = 0.0;
  for (auto _ : state) {
    eps = audit::OneRunEpsilonLowerBound(100000, 1510, 1439, 1e-5, 0.05);
    benchmark::DoNotOptimize(eps);
  }
  state.counters["eps"] = eps;
}
BENCHMARK(BM_OneRunEpsilonLarge)->Unit(benchmark::kMillisecond);

void BM_OneRunEstimates(benchmark::State& state) {
  constexpr int kPerSide = 10'000;
  const double mu = static_cast<double>(state.range(0));
  std::vector<double> scores;
  std::vector<uint8_t> included;
  for (int side = 1; side >= 0; --side) {
    for (int i = 0; i < kPerSide; ++i) {
      scores.push_back(audit::NormalQuantile((i + 0.5) / kPerSide) + (side ? mu : 0.0));
      included.push_back(static_cast<uint8_t>(side));
    }
  }
  // The choices of sim/audit/one_run_estimates.cc (OneRunGuessChoices) for m = 20,000.
  std::vector<audit::GuessCounts> choices;
  for (const int64_t divisor : {100, 50, 20, 10, 5, 2}) {
    const int64_t k = 2 * kPerSide / divisor;
    choices.push_back({k, 0});
    choices.push_back({k / 2, k / 2});
  }
  audit::OneRunAuditOptions options;
  options.delta = 1e-6;
  audit::OneRunAuditResult steinke;
  audit::FdpOneRunResult fdp;
  for (auto _ : state) {
    steinke = audit::OneRunAuditBestOf(scores, included, choices, options);
    fdp = audit::FdpOneRunAuditBestOf(scores, included, choices, options);
    benchmark::DoNotOptimize(fdp);
  }
  state.counters["eps_steinke"] = steinke.epsilon;
  state.counters["eps_fdp_gaussian"] = fdp.gaussian.epsilon;
  state.counters["eps_fdp_approximate"] = fdp.approximate.epsilon;
}
BENCHMARK(BM_OneRunEstimates)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);

void BM_ClopperPearsonUpper(benchmark::State& state) {
  int64_t k = 0;
  double sum = 0.0;
  for (auto _ : state) {
    sum += audit::ClopperPearsonUpper(k, 2000, 0.025);
    k = (k + 37) % 2000;
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_ClopperPearsonUpper)->Unit(benchmark::kMicrosecond);

}  // namespace
