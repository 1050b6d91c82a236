// Options shared by the convolutional models (LeNet-5, AlexNet-CIFAR). Validated once by
// ValidateCnnOptions (conventions.md §5); the model constructors call it.
#pragma once

#include <string>
#include <string_view>

namespace asyncdp::models {

// Nonlinearity after every pooling layer and every hidden dense layer.
enum class Activation {
  kRelu,  // max(0, z): the modern default, fastest to train
  kTanh,  // tanh(z): smooth everywhere (classic LeNet; no kinks in finite-difference checks)
};

// 2 × 2, stride-2 pooling after every convolution.
enum class Pooling {
  kMax,      // max of the 4 inputs (gradient routed to one maximal input: top row, then left column)
  kAverage,  // mean of the 4 inputs (LeNet's original subsampling, without its trainable scale)
};

struct CnnOptions {
  // Default ReLU. "tanh" trades a little accuracy for a smooth loss.
  Activation activation = Activation::kRelu;
  // Default max pooling.
  Pooling pooling = Pooling::kMax;
  // oneTBB worker threads used inside one ClippedGradientSum / Evaluate call. Default 1 (serial): in the
  // simulator every client is already a thread. Results do not depend on this value (chunks are reduced
  // in a fixed order). Range 1..256.
  int threads = 1;
  // Examples per chunk (the unit of parallel work). A chunk is processed in groups of L examples, L the
  // SIMD width in floats (16 with AVX-512, 8 with AVX2), so multiples of L waste no lanes. 0 (default) =
  // the model's own choice: 16 for LeNet-5 and AlexNet-CIFAR. Workspace memory grows with
  // ceil(chunk / L) (per group of 16: LeNet ≈ 0.72 MiB, AlexNet-CIFAR ≈ 16 MiB). Results differ only by float
  // rounding. Range 0..4096.
  int chunk_size = 0;
};

// Throws ConfigError (key "model.cnn.<field>") when a field is out of range.
void ValidateCnnOptions(const CnnOptions& options);

// "relu" / "tanh"; throws ConfigError(key_path, ...) for anything else.
Activation ParseActivation(std::string_view name, const std::string& key_path = "model.cnn.activation");
// "max" / "avg" (or "average"); throws ConfigError(key_path, ...) for anything else.
Pooling ParsePooling(std::string_view name, const std::string& key_path = "model.cnn.pooling");

std::string_view ActivationName(Activation activation);
std::string_view PoolingName(Pooling pooling);

}  // namespace asyncdp::models
