// Where the CNN time goes: every stage of CnnNetwork::ClippedGradient timed on its own, on one group of
// L examples (L = SIMD width in floats), in µs per example and GFLOP/s of useful work (items = examples).
// The buffers are first filled by one full ClippedGradient call, so every stage sees realistic data.
// BENCHMARKS.md's per-stage table comes from these rows:
//   asyncdp_bench --benchmark_filter='BM_CnnStage' --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/dataset.h"
#include "models/cnn/activation.h"
#include "models/cnn/architecture.h"
#include "models/cnn/conv_lanes.h"
#include "models/cnn/dense.h"
#include "models/cnn/network.h"
#include "models/cnn/pool.h"

namespace {

using asyncdp::models::Activation;
using asyncdp::models::CnnArchitecture;
using asyncdp::models::CnnGeometry;
using asyncdp::models::Pooling;
namespace cnn = asyncdp::models::cnn;

constexpr int L = cnn::Lanes<float>::kCount;

struct Fixture {
  explicit Fixture(const CnnArchitecture& architecture)
      : geometry(asyncdp::models::ComputeGeometry(architecture)),
        network(geometry, Activation::kRelu, Pooling::kMax),
        scratch(geometry, L),
        params(asyncdp::models::InitialCnnParams(geometry, Activation::kRelu, 1)),
        partial(geometry.num_params) {
    data.is_sparse = false;
    data.image = architecture.input;
    data.dense.resize(4 * L, geometry.input_size());
    asyncdp::RandomStream stream({.seed = 3, .purpose = asyncdp::StreamPurpose::kTest});
    for (int64_t i = 0; i < data.dense.size(); ++i) data.dense.data()[i] = static_cast<float>(stream.NextUniform());
    data.labels.resize(4 * L);
    for (auto& label : data.labels) label = static_cast<int32_t>(stream.NextBelow(10));
    for (int c = 0; c < 10; ++c) data.class_names.push_back(std::to_string(c));
    for (int r = 0; r < L; ++r) rows.push_back(3 * r % (4 * L));
    network.Load(data, rows, scratch);
    network.ClippedGradient(params.data(), 1.0, partial.data(), nullptr, scratch);
  }
  cnn::GroupScratch<float>& group() { return scratch.groups.front(); }

  CnnGeometry geometry;
  cnn::CnnNetwork<float> network;
  cnn::ChunkScratch<float> scratch;
  Eigen::VectorXf params;
  Eigen::VectorXf partial;
  asyncdp::data::Dataset data;
  std::vector<int64_t> rows;
};

// A CIFAR-10 network of 3 × 3 convolutions (32, 64, 128 channels, each followed by 2 × 2 pooling; one
// hidden layer of 128), the shape of the small CNNs DP-SGD papers train on CIFAR-10: LeNet and AlexNet
// have 5 × 5 kernels only, so this is the row of the K = 3 kernels.
CnnArchitecture Cnn3x3Architecture() {
  CnnArchitecture architecture;
  architecture.name = "cnn3x3";
  architecture.input = {.channels = 3, .height = 32, .width = 32};
  architecture.convs = {{.out_channels = 32, .kernel = 3, .padding = 1},
                        {.out_channels = 64, .kernel = 3, .padding = 1},
                        {.out_channels = 128, .kernel = 3, .padding = 1}};
  architecture.hidden = {128};
  architecture.classes = 10;
  return architecture;
}

CnnArchitecture ArchitectureOf(const std::string& net) {
  if (net == "lenet") return asyncdp::models::LeNet5Architecture();
  if (net == "alexnet") return asyncdp::models::AlexNetCifarArchitecture();
  return Cnn3x3Architecture();
}

// Built on a network's first timed stage, not at registration: a run filtered to other benchmarks (or to
// one network) builds no CNN it does not time.
Fixture& FixtureFor(const std::string& net) {
  if (net == "lenet") {
    static Fixture lenet(ArchitectureOf("lenet"));
    return lenet;
  }
  if (net == "alexnet") {
    static Fixture alexnet(ArchitectureOf("alexnet"));
    return alexnet;
  }
  static Fixture cnn3x3(ArchitectureOf("cnn3x3"));
  return cnn3x3;
}

void RunStage(benchmark::State& state, const std::function<void()>& stage, double flops_per_example) {
  for (auto _ : state) {
    stage();
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * L);
  // rate = L·1e-6 · iterations / seconds, inverted: µs per example.
  state.counters["us_per_example"] = benchmark::Counter(
      L * 1e-6, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  if (flops_per_example > 0) {
    state.counters["GFLOPs"] = benchmark::Counter(flops_per_example * L * 1e-9,
                                                  benchmark::Counter::kIsIterationInvariantRate);
  }
}

// Registers one benchmark per stage of `net`.
void RegisterStages(const std::string& net) {
  auto add = [&](const std::string& name, std::function<void(Fixture&)> body, std::function<double(Fixture&)> flops) {
    benchmark::RegisterBenchmark(("BM_CnnStage/" + net + "/" + name).c_str(),
                                 [net, body, flops](benchmark::State& state) {
                                   Fixture& f = FixtureFor(net);
                                   RunStage(state, [&] { body(f); }, flops(f));
                                 });
  };
  auto none = [](Fixture&) { return 0.0; };
  add("0_load", [](Fixture& f) { f.network.Load(f.data, f.rows, f.scratch); }, none);
  const size_t convs = ArchitectureOf(net).convs.size();
  for (size_t l = 0; l < convs; ++l) {
    const std::string conv = "conv" + std::to_string(l + 1);
    auto macs = [l](Fixture& f) {
      const auto& g = f.geometry.convs[l];
      return 2.0 * g.positions() * g.patch_size() * g.out_channels;
    };
    add("1_" + conv + "_forward", [l](Fixture& f) {
      auto& s = f.group();
      cnn::ConvForward(f.geometry.convs[l], f.params.data(), s.conv_in[l].data(), s.conv_pre[l].data());
    }, macs);
    add("2_" + conv + "_weight_grads", [l](Fixture& f) {
      auto& s = f.group();
      cnn::ConvWeightGradients(f.geometry.convs[l], s.conv_in[l].data(), s.conv_pre[l].data(),
                               s.conv_grads[l].data());
    }, macs);
    if (l > 0) {
      add("3_" + conv + "_input_grad", [l](Fixture& f) {
        auto& s = f.group();
        cnn::ConvInputGradient(f.geometry.convs[l], f.params.data(), s.conv_pre[l].data(), s.conv_in_grad[l].data());
      }, macs);
    }
    add("4_" + conv + "_pool_act_forward", [l](Fixture& f) {
      auto& s = f.group();
      const auto& g = f.geometry.convs[l];
      static thread_local std::vector<float> sink;
      sink.resize(g.output_size() * L);
      cnn::PoolForward<float>(Pooling::kMax, Activation::kRelu, g.out_channels, g.out_height, g.out_width,
                              s.conv_pre[l].data(), s.pool_codes[l].data(),
                              {sink.data(), g.pooled_positions() * L, int64_t{g.pooled_width()} * L});
    }, none);
  }
  auto dense_macs = [](Fixture& f) {
    double macs = 0;
    for (const auto& g : f.geometry.dense) macs += 2.0 * g.in_features * g.out_features;
    return macs;
  };
  add("5_dense_forward", [](Fixture& f) {
    auto& s = f.group();
    const float* in = s.flat.data();
    for (size_t l = 0; l < f.geometry.dense.size(); ++l) {
      cnn::DenseForward(f.geometry.dense[l], f.params.data(), in, s.dense_out[l].data());
      in = s.dense_out[l].data();
    }
  }, dense_macs);
  add("6_dense_input_grads", [](Fixture& f) {
    auto& s = f.group();
    static thread_local std::vector<float> sink;  // the real targets hold δ the later stages need
    for (size_t l = f.geometry.dense.size(); l-- > 0;) {
      sink.resize(f.geometry.dense[l].in_features * L);
      cnn::DenseInputGradient(f.geometry.dense[l], f.params.data(), s.dense_grad[l].data(), sink.data());
    }
  }, dense_macs);
  add("7_dense_clipped_sums", [](Fixture& f) {
    auto& s = f.group();
    for (size_t l = 0; l < f.geometry.dense.size(); ++l) {
      const float* in = l == 0 ? s.flat.data() : s.dense_out[l - 1].data();
      cnn::DenseClippedSum(f.geometry.dense[l], in, s.factors.data(), s.dense_grad[l].data(), s.transposed.data(),
                           false, f.partial.data());
    }
  }, dense_macs);
  add("9_whole_group", [](Fixture& f) {
    f.network.Load(f.data, f.rows, f.scratch);
    f.network.ClippedGradient(f.params.data(), 1.0, f.partial.data(), nullptr, f.scratch);
  }, [](Fixture& f) {
    double flops = 0;
    for (size_t l = 0; l < f.geometry.convs.size(); ++l) {
      const auto& g = f.geometry.convs[l];
      flops += (l == 0 ? 2 : 3) * 2.0 * g.positions() * g.patch_size() * g.out_channels;
    }
    for (const auto& g : f.geometry.dense) flops += 3 * 2.0 * g.in_features * g.out_features;
    return flops;
  });
}

const bool registered = [] {
  RegisterStages("lenet");
  RegisterStages("alexnet");
  RegisterStages("cnn3x3");
  return true;
}();

}  // namespace
