// A CNN architecture (convolution blocks, then dense layers) and the shapes and parameter offsets derived
// from it. LeNet-5 and AlexNet-CIFAR are two instances (lenet.h, alexnet.h); tests use tiny ones.
//
// Every convolution block is: conv (stride 1, square kernel, zero padding) + bias → 2 × 2 stride-2
// pooling → activation. Every hidden dense layer is: affine → activation. The last dense layer produces
// the logits of a softmax cross-entropy loss.
//
// Internal tensor layout ("lanes", lanes.h): a group of L examples (L = SIMD width) with C channels of
// H × W is stored [C][H][W][L], example r in lane r of every vector, so per-example gradients are
// lane-wise sums.
//
// Flat parameter vector, layer after layer:
//   conv block:  Wt (K × C_out, column-major, K = C_in·k·k indexed (c, ki, kj)), then bias (C_out);
//   dense layer: W (out × in, column-major), then bias (out). The first dense layer's input index is
//                (c, p) = c·P_pooled + p with p the row-major position in the pooled map.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/cnn/cnn_options.h"

namespace asyncdp::models {

struct ConvSpec {
  int out_channels = 0;
  int kernel = 0;   // kernel height = width
  int padding = 0;  // zero rows/columns added on each side of the input
};

struct CnnArchitecture {
  std::string name;        // Model::Name()
  data::ImageShape input;  // channels × height × width of one example
  std::vector<ConvSpec> convs;
  std::vector<int> hidden;      // widths of the hidden dense layers
  int classes = 0;              // width of the logit layer
  int default_chunk_size = 32;  // CnnOptions::chunk_size = 0 selects this
};

// Shapes of one convolution block for one example.
struct ConvGeometry {
  int in_channels = 0;
  int in_height = 0;
  int in_width = 0;
  int kernel = 0;
  int padding = 0;
  int out_channels = 0;
  int out_height = 0;  // convolution output, before pooling
  int out_width = 0;
  int64_t weight_offset = 0;  // of Wt in the flat parameter vector
  int64_t bias_offset = 0;

  int64_t patch_size() const { return int64_t{in_channels} * kernel * kernel; }  // K
  int64_t positions() const { return int64_t{out_height} * out_width; }          // P
  int pooled_height() const { return out_height / 2; }
  int pooled_width() const { return out_width / 2; }
  int64_t pooled_positions() const { return int64_t{pooled_height()} * pooled_width(); }
  int64_t input_size() const { return int64_t{in_channels} * in_height * in_width; }
  int64_t output_size() const { return out_channels * pooled_positions(); }  // after pooling
  int64_t num_params() const { return patch_size() * out_channels + out_channels; }
};

struct DenseGeometry {
  int in_features = 0;
  int out_features = 0;
  int64_t weight_offset = 0;
  int64_t bias_offset = 0;

  int64_t num_params() const { return int64_t{in_features} * out_features + out_features; }
};

struct CnnGeometry {
  data::ImageShape input;
  std::vector<ConvGeometry> convs;
  std::vector<DenseGeometry> dense;  // hidden layers, then the logit layer
  int64_t num_params = 0;

  int64_t input_size() const { return int64_t{input.channels} * input.height * input.width; }
  int classes() const { return dense.back().out_features; }
};

// Throws ConfigError (key "model") when the architecture is inconsistent: a non-positive size, a kernel
// larger than its padded input, or an odd convolution output (2 × 2 pooling needs even sizes).
CnnGeometry ComputeGeometry(const CnnArchitecture& architecture);

// The architectures behind MakeLeNet5 (lenet.h) and MakeAlexNetCifar (alexnet.h).
CnnArchitecture LeNet5Architecture();
CnnArchitecture AlexNetCifarArchitecture();

// He-normal weights (std sqrt(2 / fan_in)) for ReLU, LeCun-normal (std sqrt(1 / fan_in)) for tanh; zero
// biases. Deterministic in `seed` (stream {seed, client 0, round 0, StreamPurpose::kModelInit}, drawn
// layer by layer in parameter order).
Eigen::VectorXf InitialCnnParams(const CnnGeometry& geometry, Activation activation, uint64_t seed);

}  // namespace asyncdp::models
