// The machine's FP32 peaks, for the roofline figures of the CNN rows in BENCHMARKS.md (one thread):
//   BM_GemmPeak/N   Eigen's single-precision GEMM on N × N matrices — the "measured FP32 GEMM peak" that
//                   a roofline of examples/s = peak / FLOPs per example is computed from;
//   BM_FmaPeak      independent fused multiply-adds on registers only: the arithmetic ceiling itself.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>

#include "models/cnn/lanes.h"

namespace {

void BM_GemmPeak(benchmark::State& state) {
  const Eigen::Index n = state.range(0);
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmPeak)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_FmaPeak(benchmark::State& state) {
  namespace lanes = asyncdp::models::cnn::lanes;
  constexpr int kAccumulators = 12;  // > FMA latency × FMA ports
  constexpr int kSteps = 4096;
  lanes::Packet<float> acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = lanes::Broadcast(0.001f * i);
  const auto a = lanes::Broadcast(0.9999f), b = lanes::Broadcast(1e-5f);
  for (auto _ : state) {
    for (int s = 0; s < kSteps; ++s) {
      for (int i = 0; i < kAccumulators; ++i) acc[i] = lanes::Fma(acc[i], a, b);
    }
    benchmark::DoNotOptimize(acc);
  }
  constexpr int L = asyncdp::models::cnn::Lanes<float>::kCount;
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * L * kAccumulators * kSteps * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_FmaPeak);

}  // namespace
