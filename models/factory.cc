#include "models/factory.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

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

// The checks every built-in model on feature vectors shares: data with features, finite initialisation.
void RequireFeatures(const std::string& kind, int64_t num_features, const ModelOptions& options) {
  if (num_features < 1)
    throw ConfigError("model.kind", "'" + kind + "' needs data with at least one feature");
  RequireFinite(options.init_stddev, "model.init_stddev");
  RequireFinite(options.init_gain, "model.init_gain");
}

void RequireNoL2(const std::string& kind, double lambda) {
  if (lambda != 0.0)
    throw ConfigError("model.l2_lambda", "'" + kind + "' has no L2 regulariser; set it to 0");
}

// LeNet-5 on 28 x 28 x 1 images or the AlexNet-style CNN on 32 x 32 x 3, at most 10 classes.
ModelFactory CnnFactory(bool lenet) {
  return [lenet](const ModelOptions& options, int64_t, int num_classes, const data::ImageShape& image) {
    const data::ImageShape expected = lenet ? data::ImageShape{1, 28, 28} : data::ImageShape{3, 32, 32};
    if (image.channels != expected.channels || image.height != expected.height ||
        image.width != expected.width) {
      throw ConfigError("model.kind", "'" + options.kind + "' needs " + ShapeText(expected) +
                                          ", the data has " + ShapeText(image));
    }
    if (num_classes > 10) {
      throw ConfigError("model.kind", "'" + options.kind + "' has 10 outputs, the data has " +
                                          std::to_string(num_classes) + " classes");
    }
    RequireNoL2(options.kind, options.l2_lambda);
    return lenet ? MakeLeNet5(options.cnn) : MakeAlexNetCifar(options.cnn);
  };
}

std::unique_ptr<Model> MakeGeometricMedian(const ModelOptions& options, int64_t num_features, int,
                                           const data::ImageShape&) {
  RequireFeatures(options.kind, num_features, options);
  RequireNoL2(options.kind, MakeL2(options).lambda);
  GeometricMedianOptions median;
  median.num_features = num_features;
  median.init_stddev = options.init_stddev;
  return std::make_unique<GeometricMedianModel>(median);
}

// Softmax regression (no hidden layer) or the MLP (at least one).
ModelFactory MlpFactory(bool hidden) {
  return
      [hidden](const ModelOptions& options, int64_t num_features, int num_classes, const data::ImageShape&) {
        RequireFeatures(options.kind, num_features, options);
        const L2Options l2 = MakeL2(options);
        RequireMulticlass(options.kind, num_classes);
        MlpOptions mlp;
        mlp.num_features = num_features;
        mlp.num_classes = num_classes;
        mlp.activation = options.activation;
        mlp.l2 = l2;
        mlp.init_stddev = options.init_stddev;
        mlp.init_gain = options.init_gain;
        if (hidden) {
          if (options.hidden.empty())
            throw ConfigError("model.hidden", "'mlp' needs at least one hidden layer");
          for (const int64_t width : options.hidden) {
            if (width < 1)
              throw ConfigError("model.hidden", "hidden widths must be >= 1, got " + std::to_string(width));
          }
          mlp.hidden = options.hidden;
        }
        return std::unique_ptr<Model>(std::make_unique<Mlp>(mlp));
      };
}

// A linear model with `loss`; `binary` refuses more than 2 classes. `l2` says what the objective allows:
// logistic is the unregularised objective (λ = 0), logistic_l2 the regularised one (λ > 0), the others
// take a ridge penalty λ >= 0.
ModelFactory LinearFactory(LinearLoss loss, bool binary, ModelReads::L2 l2_rule) {
  return [=](const ModelOptions& options, int64_t num_features, int num_classes, const data::ImageShape&) {
    RequireFeatures(options.kind, num_features, options);
    const L2Options l2 = MakeL2(options);
    if (binary) RequireBinary(options.kind, num_classes);
    if (l2_rule == ModelReads::L2::kNone && l2.lambda != 0.0) {
      throw ConfigError("model.l2_lambda", "'" + options.kind +
                                               "' is the unregularised objective; use "
                                               "'logistic_l2' for lambda > 0");
    }
    if (l2_rule == ModelReads::L2::kRequired && l2.lambda == 0.0) {
      throw ConfigError("model.l2_lambda", "'" + options.kind + "' needs lambda > 0 (the paper uses 1/N)");
    }
    LinearModelOptions linear;
    linear.num_features = num_features;
    linear.num_classes = std::max(num_classes, 1);
    linear.l2 = l2;
    linear.init_stddev = options.init_stddev;
    linear.loss = loss;
    return std::unique_ptr<Model>(std::make_unique<LinearModel>(linear));
  };
}

struct Registration {
  std::string kind;
  ModelFactory factory;
  ModelReads reads;
};

// Every model.kind: the built-ins (factory.h's table, in its order) and then the registered ones, each with
// its factory and what it reads — one table, so building a model and refusing an option it does not read
// cannot disagree.
std::vector<Registration>& Registry() {
  using L2 = ModelReads::L2;
  // A linear model's factory enforces the λ rule that its ModelReads declares: stated once here.
  const auto linear = [](const char* kind, LinearLoss loss, bool binary, L2 l2) {
    return Registration{kind, LinearFactory(loss, binary, l2), {.l2 = l2}};
  };
  static std::vector<Registration> registry = {
      linear("logistic", LinearLoss::kLogistic, true, L2::kNone),
      linear("logistic_l2", LinearLoss::kLogistic, true, L2::kRequired),
      linear("linear", LinearLoss::kSquared, false, L2::kOptional),
      linear("svm", LinearLoss::kHinge, true, L2::kOptional),
      {"softmax", MlpFactory(false), {.l2 = L2::kOptional}},
      {"mlp", MlpFactory(true), {.l2 = L2::kOptional, .hidden = true, .activation = true}},
      {"lenet", CnnFactory(true), {.activation = true, .threads = true}},
      {"alexnet", CnnFactory(false), {.activation = true, .threads = true}},
      {"geometric_median", MakeGeometricMedian, {}},
  };
  return registry;
}

const Registration* Find(const std::string& kind) {
  const auto& registry = Registry();
  const auto it =
      std::find_if(registry.begin(), registry.end(), [&](const Registration& r) { return r.kind == kind; });
  return it == registry.end() ? nullptr : &*it;
}

// The kinds of Registry(), in its order: appended to by RegisterModel only (before any configuration is
// read), so concurrent readers never see it change.
std::vector<std::string>& Kinds() {
  static std::vector<std::string> kinds = [] {
    std::vector<std::string> built_in;
    for (const Registration& r : Registry()) built_in.push_back(r.kind);
    return built_in;
  }();
  return kinds;
}

}  // namespace

const std::vector<std::string>& ModelKinds() { return Kinds(); }

ModelReads ReadsOf(const std::string& kind) {
  const Registration* r = Find(kind);
  return r != nullptr ? r->reads : kReadsEverything;
}

void RegisterModel(const std::string& kind, ModelFactory factory, ModelReads reads) {
  const bool name_ok = !kind.empty() && std::all_of(kind.begin(), kind.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  if (!name_ok) throw std::invalid_argument("RegisterModel: kind '" + kind + "' is not [a-z0-9_]+");
  if (Find(kind) != nullptr)
    throw std::invalid_argument("RegisterModel: model.kind '" + kind + "' exists already");
  if (!factory) throw std::invalid_argument("RegisterModel: empty factory for '" + kind + "'");
  Kinds();  // the built-ins' list first
  Registry().push_back({kind, std::move(factory), reads});
  Kinds().push_back(kind);
}

std::unique_ptr<Model> MakeModel(const ModelOptions& options, int64_t num_features, int num_classes,
                                 const data::ImageShape& image) {
  const Registration* r = Find(options.kind);
  if (r == nullptr) {
    std::string known;
    for (const auto& k : ModelKinds()) known += (known.empty() ? "" : ", ") + k;
    throw ConfigError("model.kind", "unknown model '" + options.kind + "' (expected one of " + known + ")");
  }
  std::unique_ptr<Model> model = r->factory(options, num_features, num_classes, image);
  if (!model) throw ConfigError("model.kind", "the factory of '" + options.kind + "' returned no model");
  return model;
}

}  // namespace asyncdp::models
