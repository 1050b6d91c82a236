// Benchmarks of the DP-SGD hot path: per-example clipped gradient sums (models/), batch sampling and the
// round's noise draw (core/). items_per_second = examples per second (coordinates for the noise).
// Results: bench/results/models.md.
//
// Reference point (issue #3): Opacus computes per-example clipped gradients at about 46k examples/s for
// logistic regression on a9a-like data at batch 26 (0.4M/s at batch 256), one thread. Target, one core:
// >= 20M examples/s for BM_ClippedGradSum/logistic_a9a/26.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/noise.h"
#include "core/sampling.h"
#include "data/load.h"
#include "huber_regression.h"  // examples/custom_model: a model of your own (docs/models.md)
#include "models/factory.h"

namespace asyncdp {
namespace {

// Data sets are loaded once per process, on first use.
const data::Dataset* LoadOnce(const std::string& path, std::unique_ptr<data::Dataset>& slot) {
  if (!slot && std::filesystem::exists(path)) slot = std::make_unique<data::Dataset>(data::LoadDataset(path));
  return slot.get();
}

const data::Dataset* A9a() {
  static std::unique_ptr<data::Dataset> data;
  return LoadOnce(std::string(ASYNCDP_SHARED_DIR) + "/datasets/libsvm/a9a.gz", data);
}

const data::Dataset* FashionMnistTest() {
  static std::unique_ptr<data::Dataset> data;
  return LoadOnce("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz", data);
}

// Times ClippedGradientSum on `data` for batches of state.range(0) records drawn uniformly without
// replacement; the batches are drawn before timing (sampling is benchmarked separately below).
void RunClippedGradSum(benchmark::State& state, const data::Dataset* data, const models::ModelOptions& options,
                       double clip) {
  if (data == nullptr) {
    state.SkipWithError("data set missing (expected ../shared and the Fashion-MNIST package)");
    return;
  }
  const int64_t batch_size = state.range(0);
  const auto model = models::MakeModel(options, data->features(), data->num_classes(), data->image);
  auto workspace = model->NewWorkspace(batch_size);
  const Eigen::VectorXf params = model->InitialParams(1);
  const std::span<const float> param_span(params.data(), params.size());
  std::vector<float> grad(model->NumParams());
  constexpr int kBatches = 256;
  std::vector<std::vector<int64_t>> batches(kBatches);
  FixedSizeSampler sampler(data->rows(), 7, 0);
  for (uint32_t i = 0; i < kBatches; ++i) sampler.Sample(i, batch_size, batches[i]);
  size_t next = 0;
  int64_t clipped = 0;
  for (auto _ : state) {
    const models::ClipStats stats =
        model->ClippedGradientSum(param_span, *data, batches[next], clip, grad, *workspace);
    clipped += stats.clipped;
    benchmark::DoNotOptimize(grad.data());
    benchmark::ClobberMemory();
    next = (next + 1) % kBatches;
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.counters["clipped_fraction"] =
      static_cast<double>(clipped) / static_cast<double>(std::max<int64_t>(1, state.iterations() * batch_size));
}

models::ModelOptions Options(const std::string& kind) {
  models::ModelOptions o;
  o.kind = kind;
  if (kind == "logistic_l2") o.l2_lambda = 1.0 / 32561;  // the paper's lambda = 1/N on a9a
  if (kind == "mlp") o.hidden = {128};
  return o;
}

// C = 0.1 (Tables 1-2, convex problems): most a9a examples are clipped, the realistic DP-SGD case.
void BM_LogisticA9a(benchmark::State& state) { RunClippedGradSum(state, A9a(), Options("logistic"), 0.1); }
void BM_LogisticL2A9a(benchmark::State& state) { RunClippedGradSum(state, A9a(), Options("logistic_l2"), 0.1); }
void BM_SvmA9a(benchmark::State& state) { RunClippedGradSum(state, A9a(), Options("svm"), 0.1); }
// The example model of docs/models.md, registered as a user program would, beside the built-in logistic
// regression on the same data, batch and C: what a straightforward model of your own costs.
void BM_HuberExampleA9a(benchmark::State& state) {
  static const bool registered = (example::RegisterHuberRegression(), true);
  (void)registered;
  RunClippedGradSum(state, A9a(), Options("huber"), 0.1);
}
void BM_SoftmaxFashion(benchmark::State& state) {
  RunClippedGradSum(state, FashionMnistTest(), Options("softmax"), 0.1);
}
void BM_MlpFashion(benchmark::State& state) { RunClippedGradSum(state, FashionMnistTest(), Options("mlp"), 0.1); }

void BM_Sample(benchmark::State& state, SamplingModel model) {
  const int64_t n = 32561, s = state.range(0);  // a9a's N
  const auto sampler = MakeSampler(model, n, 3, 0);
  std::vector<int64_t> batch;
  batch.reserve(4 * s + 64);
  uint32_t round = 0;
  for (auto _ : state) {
    sampler->Sample(round++, s, batch);
    benchmark::DoNotOptimize(batch.data());
  }
  state.SetItemsProcessed(state.iterations() * s);
}

void BM_AddRoundNoise(benchmark::State& state) {
  std::vector<float> sum(state.range(0), 0.0f);
  uint32_t round = 0;
  for (auto _ : state) {
    AddRoundNoise(GradientNoiseKey(1, 0, round++), 0.1, 1.0, std::span<float>(sum));
    benchmark::DoNotOptimize(sum.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_LogisticA9a)->Name("BM_ClippedGradSum/logistic_a9a")->Arg(26)->Arg(256);
BENCHMARK(BM_LogisticL2A9a)->Name("BM_ClippedGradSum/logistic_l2_a9a")->Arg(26)->Arg(256);
BENCHMARK(BM_SvmA9a)->Name("BM_ClippedGradSum/svm_a9a")->Arg(26);
BENCHMARK(BM_HuberExampleA9a)->Name("BM_ClippedGradSum/huber_example_a9a")->Arg(26)->Arg(256);
BENCHMARK(BM_SoftmaxFashion)->Name("BM_ClippedGradSum/softmax_fashion")->Arg(64)->Arg(256);
BENCHMARK(BM_MlpFashion)->Name("BM_ClippedGradSum/mlp128_fashion")->Arg(64)->Arg(256);
BENCHMARK_CAPTURE(BM_Sample, poisson, SamplingModel::kPoisson)->Arg(26)->Arg(256);
BENCHMARK_CAPTURE(BM_Sample, fixed_size, SamplingModel::kFixedSizeWithoutReplacement)->Arg(26)->Arg(256);
BENCHMARK_CAPTURE(BM_Sample, shuffle, SamplingModel::kShuffle)->Arg(26)->Arg(256);
BENCHMARK(BM_AddRoundNoise)->Arg(124)->Arg(101770);

}  // namespace
}  // namespace asyncdp
