#include "models/factory.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/error.h"
#include "models/cnn/alexnet.h"
#include "models/cnn/lenet.h"
#include "models/geometric_median.h"
#include "models/linear_model.h"
#include "models/mlp.h"

namespace asyncdp::models {
namespace {

std::string ShapeText(const data::ImageShape& image) {
  if (image.empty()) return "non-image data";
  return std::to_string(image.channels) + " x " + std::to_string(image.height) + " x " +
         std::to_string(image.width) + " images";
}

L2Options MakeL2(const ModelOptions& options) {
  L2Options l2;
  l2.lambda = options.l2_lambda;
  l2.convention = options.regularizer_convention;
  l2.num_records = options.regularizer_num_records;
  l2.regularize_bias = options.regularize_bias;
  ValidateL2Options(l2);
  return l2;
}

void RequireFinite(double value, const char* key) {
  if (!std::isfinite(value) || value < 0.0) {
    throw ConfigError(key, "must be a finite number >= 0, got " + std::to_string(value));
  }
}

void RequireBinary(const std::string& kind, int num_classes) {
  if (num_classes > 2) {
    throw ConfigError("model.kind", "'" + kind + "' is a binary model but the data has " +
                                        std::to_string(num_classes) + " classes (use softmax or mlp)");
  }
}

void RequireMulticlass(const std::string& kind, int num_classes) {
  if (num_classes < 2) {
    throw ConfigError("model.kind", "'" + kind + "' needs at least 2 classes, the data has " +
                                        std::to_string(num_classes));
  }
}

std::unique_ptr<Model> MakeCnn(const ModelOptions& options, int num_classes, const data::ImageShape& image) {
  const bool lenet = options.kind == "lenet";
  const data::ImageShape expected = lenet ? data::ImageShape{1, 28, 28} : data::ImageShape{3, 32, 32};
  if (image.channels != expected.channels || image.height != expected.height || image.width != expected.width) {
    throw ConfigError("model.kind", "'" + options.kind + "' needs " + ShapeText(expected) + ", the data has " +
                                        ShapeText(image));
  }
  if (num_classes > 10) {
    throw ConfigError("model.kind", "'" + options.kind + "' has 10 outputs, the data has " +
                                        std::to_string(num_classes) + " classes");
  }
  if (options.l2_lambda != 0.0) {
    throw ConfigError("model.l2_lambda", "'" + options.kind + "' has no L2 regulariser; set it to 0");
  }
  return lenet ? MakeLeNet5(options.cnn) : MakeAlexNetCifar(options.cnn);
}

}  // namespace

namespace {

std::vector<std::string>& Kinds() {
  static std::vector<std::string> kinds = {"logistic", "logistic_l2", "linear", "svm",    "softmax",
                                           "mlp",      "lenet",       "alexnet", "geometric_median"};
  return kinds;
}

struct Registration {
  ModelFactory factory;
  ModelReads reads;
};

std::map<std::string, Registration>& Registered() {
  static std::map<std::string, Registration> registered;
  return registered;
}

}  // namespace

const std::vector<std::string>& ModelKinds() { return Kinds(); }

ModelReads ReadsOf(const std::string& kind) {
  using L2 = ModelReads::L2;
  if (kind == "logistic_l2") return {.l2 = L2::kRequired};
  if (kind == "linear" || kind == "svm" || kind == "softmax") return {.l2 = L2::kOptional};
  if (kind == "mlp") return {.l2 = L2::kOptional, .hidden = true, .activation = true};
  if (kind == "lenet" || kind == "alexnet") return {.activation = true, .threads = true};
  if (kind == "logistic" || kind == "geometric_median") return {};
  if (const auto it = Registered().find(kind); it != Registered().end()) return it->second.reads;
  return kReadsEverything;
}

void RegisterModel(const std::string& kind, ModelFactory factory, ModelReads reads) {
  const bool name_ok = !kind.empty() && std::all_of(kind.begin(), kind.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  if (!name_ok) throw std::invalid_argument("RegisterModel: kind '" + kind + "' is not [a-z0-9_]+");
  if (std::find(Kinds().begin(), Kinds().end(), kind) != Kinds().end()) {
    throw std::invalid_argument("RegisterModel: model.kind '" + kind + "' exists already");
  }
  if (!factory) throw std::invalid_argument("RegisterModel: empty factory for '" + kind + "'");
  Registered().emplace(kind, Registration{std::move(factory), reads});
  Kinds().push_back(kind);
}

std::unique_ptr<Model> MakeModel(const ModelOptions& options, int64_t num_features, int num_classes,
                                 const data::ImageShape& image) {
  const std::string& kind = options.kind;
  const auto& kinds = ModelKinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    std::string known;
    for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError("model.kind", "unknown model '" + kind + "' (expected one of " + known + ")");
  }
  if (const auto it = Registered().find(kind); it != Registered().end()) {
    std::unique_ptr<Model> model = it->second.factory(options, num_features, num_classes, image);
    if (!model) throw ConfigError("model.kind", "the factory of '" + kind + "' returned no model");
    return model;
  }
  if (kind == "lenet" || kind == "alexnet") return MakeCnn(options, num_classes, image);
  if (num_features < 1) {
    throw ConfigError("model.kind", "'" + kind + "' needs data with at least one feature");
  }
  const L2Options l2 = MakeL2(options);
  RequireFinite(options.init_stddev, "model.init_stddev");
  RequireFinite(options.init_gain, "model.init_gain");

  if (kind == "geometric_median") {
    if (l2.lambda != 0.0) {
      throw ConfigError("model.l2_lambda", "'geometric_median' has no L2 regulariser; set it to 0");
    }
    GeometricMedianOptions median;
    median.num_features = num_features;
    median.init_stddev = options.init_stddev;
    return std::make_unique<GeometricMedianModel>(median);
  }
  if (kind == "softmax" || kind == "mlp") {
    RequireMulticlass(kind, num_classes);
    MlpOptions mlp;
    mlp.num_features = num_features;
    mlp.num_classes = num_classes;
    mlp.activation = options.activation;
    mlp.l2 = l2;
    mlp.init_stddev = options.init_stddev;
    mlp.init_gain = options.init_gain;
    if (kind == "mlp") {
      if (options.hidden.empty()) throw ConfigError("model.hidden", "'mlp' needs at least one hidden layer");
      for (const int64_t width : options.hidden) {
        if (width < 1) throw ConfigError("model.hidden", "hidden widths must be >= 1, got " + std::to_string(width));
      }
      mlp.hidden = options.hidden;
    }
    return std::make_unique<Mlp>(mlp);
  }

  LinearModelOptions linear;
  linear.num_features = num_features;
  linear.num_classes = std::max(num_classes, 1);
  linear.l2 = l2;
  linear.init_stddev = options.init_stddev;
  if (kind == "logistic" || kind == "logistic_l2") {
    RequireBinary(kind, num_classes);
    if (kind == "logistic" && l2.lambda != 0.0) {
      throw ConfigError("model.l2_lambda", "'logistic' is the unregularised objective; use 'logistic_l2' for "
                                           "lambda > 0");
    }
    if (kind == "logistic_l2" && l2.lambda == 0.0) {
      throw ConfigError("model.l2_lambda", "'logistic_l2' needs lambda > 0 (the paper uses 1/N)");
    }
    linear.loss = LinearLoss::kLogistic;
  } else if (kind == "svm") {
    RequireBinary(kind, num_classes);
    linear.loss = LinearLoss::kHinge;
  } else {
    linear.loss = LinearLoss::kSquared;
  }
  return std::make_unique<LinearModel>(linear);
}

}  // namespace asyncdp::models
