// Building a Model from user options: one Options struct for every kind, validated once here
// (conventions.md §5). Invalid options or a model that does not fit the data throw ConfigError with the
// offending key ("model.kind", "model.l2_lambda", ...).
//
//   kind          model                                         data
//   "logistic"    binary logistic regression (plain convex)     sparse or dense, <= 2 classes
//   "logistic_l2" + (lambda/2)||w_bar||^2 (strongly convex)     sparse or dense, <= 2 classes
//   "linear"      linear regression, squared loss               sparse or dense
//   "svm"         linear SVM, hinge loss                        sparse or dense, <= 2 classes
//   "softmax"     softmax regression (multiclass convex)        sparse or dense, >= 2 classes
//   "mlp"         multilayer perceptron                         sparse or dense, >= 2 classes
//   "lenet"       LeNet-5 (models/cnn/lenet.h)                  28 x 28 x 1 images, <= 10 classes
//   "alexnet"     AlexNet-style CNN (models/cnn/alexnet.h)      32 x 32 x 3 images, <= 10 classes
//   "geometric_median"  ||θ − x|| (models/geometric_median.h)  sparse or dense; labels ignored
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"
#include "models/cnn/cnn_options.h"
#include "models/model.h"
#include "models/regularizer.h"

namespace asyncdp::models {

struct ModelOptions {
  // One of the kinds in the table above. Default "logistic".
  std::string kind = "logistic";

  // L2 coefficient lambda >= 0 (Section 4 and Appendix D, objectives; docs/theory.md §2, (9)); an explicit number — resolving the paper's
  // lambda = 1/N is the caller's job. "logistic_l2" requires lambda > 0, "logistic" lambda = 0 (use
  // logistic_l2 for the regularised objective); "linear", "svm", "softmax" and "mlp" accept any lambda >= 0
  // (ridge); geometric_median and the CNNs require 0. Default 0.
  double l2_lambda = 0.0;
  // How the regulariser is split over examples (models/regularizer.h). Default kPerExample: each
  // per-example loss carries (lambda/2)||w_bar||^2, strong-convexity modulus lambda.
  RegularizerConvention regularizer_convention = RegularizerConvention::kPerExample;
  // N of the literal convention lambda/(2N): the client's record count. Required (> 0) only with
  // kLiteral and lambda > 0.
  int64_t regularizer_num_records = 0;
  // Include the biases in ||w_bar||^2 (Section 4). false = Appendix D's ||w||^2. Default true.
  bool regularize_bias = true;

  // MLP hidden layer widths, each >= 1; at least one layer for "mlp". Default {128}. Ignored otherwise.
  std::vector<int64_t> hidden = {128};
  // MLP nonlinearity. Default ReLU. (The CNNs take theirs from cnn.activation.)
  Activation activation = Activation::kRelu;

  // Convex models (logistic*, linear, svm, softmax, geometric_median): initial weights ~ N(0, init_stddev^2),
  // biases 0. Default 0.01; 0 = start at w = 0. Must be finite and >= 0.
  double init_stddev = 0.01;
  // MLP: He/LeCun initialisation scaled by this gain (models/mlp.h). Default 1; finite and >= 0.
  double init_gain = 1.0;

  // LeNet-5 / AlexNet options (activation, pooling, threads, chunk size).
  CnnOptions cnn;
};

// The kinds above, in that order, then the registered ones (RegisterModel) in registration order.
const std::vector<std::string>& ModelKinds();

// Which of the ModelOptions a kind reads beyond `kind` and the initialisation: a configuration that sets an
// option its model does not read is refused, naming the key (sim/config_usage.h), so this is the one place
// that says which model reads what.
struct ModelReads {
  enum class L2 {
    kNone,      // no regulariser: l2_lambda must be 0 (logistic, geometric_median, the CNNs)
    kOptional,  // ridge, λ ≥ 0, 0 = none (linear, svm, softmax, mlp)
    kRequired,  // the regularised objective, λ > 0 (logistic_l2; the configuration's 0 means 1/N_c, Table 1)
  };
  L2 l2 = L2::kNone;        // l2_lambda, regularizer_convention, regularize_bias
  bool hidden = false;      // hidden (mlp)
  bool activation = false;  // activation (mlp, and cnn.activation for the CNNs)
  bool threads = false;     // cnn.threads (the CNNs)
};
// What a model registered without a declaration is taken to read: everything (nothing is refused for it).
inline constexpr ModelReads kReadsEverything{ModelReads::L2::kOptional, true, true, true};

// The options `kind` reads; kReadsEverything for a kind that is not known (MakeModel refuses it).
ModelReads ReadsOf(const std::string& kind);

// Builds a registered model for data with `num_features` columns, `num_classes` classes and image layout
// `image`; throws ConfigError (key "model.kind" or the option's key) when the data does not fit it.
using ModelFactory = std::function<std::unique_ptr<Model>(const ModelOptions& options, int64_t num_features,
                                                          int num_classes, const data::ImageShape& image)>;

// Makes `kind` a model.kind every configuration can name: call it before the configuration is read (at the
// start of main). Your own model, as docs/models.md describes, with examples/custom_model/ as a complete
// example. `reads` declares the options the factory reads, so a configuration setting any other is refused
// (default: all of them). Throws std::invalid_argument for a kind that exists already or is not [a-z0-9_]+.
void RegisterModel(const std::string& kind, ModelFactory factory, ModelReads reads = kReadsEverything);

// Builds the model of options.kind for data with `num_features` columns, `num_classes` classes and
// image layout `image` (empty for non-image data). Throws ConfigError on invalid options or a mismatch.
std::unique_ptr<Model> MakeModel(const ModelOptions& options, int64_t num_features, int num_classes,
                                 const data::ImageShape& image = {});

}  // namespace asyncdp::models
