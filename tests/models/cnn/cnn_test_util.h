// Shared helpers for the CNN tests: synthetic image data sets and double-precision reference evaluation
// (single-example loss and gradient through CnnNetwork<double>).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/random.h"
#include "data/dataset.h"
#include "models/cnn/architecture.h"
#include "models/cnn/network.h"
#include "models/model.h"

namespace asyncdp::models::cnn_testing {

// rows images of channels × side × side with Philox-drawn pixels in [0, 1) and labels in 0..classes−1.
inline data::Dataset SyntheticImages(const data::ImageShape& shape, int classes, int64_t rows,
                                     uint64_t seed) {
  data::Dataset data;
  data.source = "synthetic";
  data.format = data::DataFormat::kSynthetic;
  data.is_sparse = false;
  data.image = shape;
  data.dense.resize(rows, int64_t{shape.channels} * shape.height * shape.width);
  RandomStream stream({.seed = seed, .purpose = StreamPurpose::kTest});
  for (int64_t i = 0; i < data.dense.size(); ++i)
    data.dense.data()[i] = static_cast<float>(stream.NextUniform());
  data.labels.resize(rows);
  for (auto& label : data.labels) label = static_cast<int32_t>(stream.NextBelow(classes));
  for (int c = 0; c < classes; ++c) data.class_names.push_back(std::to_string(c));
  return data;
}

inline std::span<const float> AsSpan(const Eigen::VectorXf& v) {
  return {v.data(), static_cast<size_t>(v.size())};
}
inline std::span<float> AsSpan(Eigen::VectorXf& v) { return {v.data(), static_cast<size_t>(v.size())}; }

// Loss and unclipped gradient of one example in double precision.
class DoubleReference {
 public:
  DoubleReference(const CnnArchitecture& architecture, Activation activation, Pooling pooling)
      : network_(ComputeGeometry(architecture), activation, pooling), scratch_(network_.geometry(), 1) {}

  double Loss(const Eigen::VectorXd& params, const data::Dataset& data, int64_t row) {
    const int64_t rows[1] = {row};
    network_.Load(data, rows, scratch_);
    network_.Forward(params.data(), scratch_);
    return network_.Loss(scratch_, nullptr).loss_sum;
  }

  Eigen::VectorXd Gradient(const Eigen::VectorXd& params, const data::Dataset& data, int64_t row) {
    const int64_t rows[1] = {row};
    network_.Load(data, rows, scratch_);
    Eigen::VectorXd grad(params.size());
    network_.ClippedGradient(params.data(), kNoClip, grad.data(), nullptr, scratch_);
    return grad;
  }

  const CnnGeometry& geometry() const { return network_.geometry(); }

 private:
  cnn::CnnNetwork<double> network_;
  cnn::ChunkScratch<double> scratch_;
};

// A parameter group: one layer's weights or biases, as [offset, offset + size) of the flat vector.
struct ParamGroup {
  std::string name;
  int64_t offset = 0;
  int64_t size = 0;
};

inline std::vector<ParamGroup> ParamGroups(const CnnGeometry& geometry) {
  std::vector<ParamGroup> groups;
  for (size_t l = 0; l < geometry.convs.size(); ++l) {
    const ConvGeometry& g = geometry.convs[l];
    groups.push_back(
        {"conv" + std::to_string(l) + ".weight", g.weight_offset, g.patch_size() * g.out_channels});
    groups.push_back({"conv" + std::to_string(l) + ".bias", g.bias_offset, g.out_channels});
  }
  for (size_t l = 0; l < geometry.dense.size(); ++l) {
    const DenseGeometry& g = geometry.dense[l];
    groups.push_back(
        {"dense" + std::to_string(l) + ".weight", g.weight_offset, int64_t{g.in_features} * g.out_features});
    groups.push_back({"dense" + std::to_string(l) + ".bias", g.bias_offset, g.out_features});
  }
  return groups;
}

// Initial parameters in double with small random biases (zero biases would leave bias gradients of
// ReLU units untested at exactly-zero pre-activations).
inline Eigen::VectorXd TestParams(const CnnGeometry& geometry, Activation activation, uint64_t seed) {
  Eigen::VectorXd params = InitialCnnParams(geometry, activation, seed).cast<double>();
  RandomStream stream({.seed = seed, .purpose = StreamPurpose::kTest});
  for (const ParamGroup& group : ParamGroups(geometry)) {
    if (group.name.ends_with(".bias")) {
      for (int64_t i = 0; i < group.size; ++i) params[group.offset + i] = 0.1 * stream.NextNormal();
    }
  }
  return params;
}

}  // namespace asyncdp::models::cnn_testing
