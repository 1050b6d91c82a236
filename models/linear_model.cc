#include "models/linear_model.h"

#include "core/check.h"
#include "models/linear_kernel.h"
#include "models/linear_losses.h"
#include "models/param_init.h"

namespace asyncdp::models {
namespace {

using linear_internal::DenseRows;
using linear_internal::SparseRows;
using linear_internal::WithRows;

class EmptyWorkspace final : public Workspace {};

// Chooses the loss policy once per call; the kernels are fully inlined per (loss, scalar, layout).
template <typename Fn>
decltype(auto) WithLoss(LinearLoss loss, Fn&& fn) {
  switch (loss) {
    case LinearLoss::kLogistic: return fn(LogisticLoss{});
    case LinearLoss::kSquared: return fn(SquaredLoss{});
    case LinearLoss::kHinge: return fn(HingeLoss{});
  }
  ASYNCDP_CHECK_MSG(false, "unknown LinearLoss");
  return fn(LogisticLoss{});
}

bool IsBinary(LinearLoss loss) {
  return WithLoss(loss, [](auto l) { return decltype(l)::kBinary; });
}

}  // namespace

LinearModel::LinearModel(const LinearModelOptions& options)
    : options_(options), num_features_(options.num_features), mu_(PerExampleL2Coefficient(options.l2)) {
  ASYNCDP_CHECK(num_features_ >= 1);
  ASYNCDP_CHECK(options.num_classes >= 1);
  ASYNCDP_CHECK(!IsBinary(options.loss) || options.num_classes <= 2);
  ASYNCDP_CHECK(options.init_stddev >= 0.0);
}

std::string LinearModel::Name() const {
  switch (options_.loss) {
    case LinearLoss::kLogistic: return options_.l2.lambda > 0.0 ? "logistic_l2" : "logistic";
    case LinearLoss::kSquared: return "linear";
    case LinearLoss::kHinge: return "svm";
  }
  return "?";
}

Eigen::VectorXf LinearModel::InitialParams(uint64_t seed) const {
  Eigen::VectorXf params = Eigen::VectorXf::Zero(NumParams());
  FillInitNormal(seed, 0, options_.init_stddev, std::span<float>(params.data(), num_features_));
  return params;
}

std::unique_ptr<Workspace> LinearModel::NewWorkspace(int64_t /*max_batch*/) const {
  return std::make_unique<EmptyWorkspace>();
}

void LinearModel::CheckData(const data::Dataset& data) const {
  if (data.is_sparse) {
    ASYNCDP_CHECK_MSG(data.features() <= num_features_, "sparse data has more features than the model");
  } else {
    ASYNCDP_CHECK_MSG(data.features() == num_features_, "dense data's width differs from the model's");
  }
  ASYNCDP_CHECK_MSG(!IsBinary(options_.loss) || data.num_classes() <= 2, "binary model on multiclass data");
}

ClipStats LinearModel::ClippedGradientSum(std::span<const float> params, const data::Dataset& data,
                                          std::span<const int64_t> batch, double clip,
                                          std::span<float> grad_sum, Workspace& /*workspace*/,
                                          std::span<float> norms) const {
  CheckData(data);
  const linear_internal::Regularization reg{mu_, options_.l2.regularize_bias};
  return WithLoss(options_.loss, [&](auto loss) {
    using Loss = decltype(loss);
    return WithRows(data, [&](const auto& rows) {
      return linear_internal::ClippedSum<Loss, float>(rows, data, num_features_, reg, params, batch, clip,
                                                      grad_sum, norms);
    });
  });
}

Evaluation LinearModel::Evaluate(std::span<const float> params, const data::Dataset& data) const {
  CheckData(data);
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == NumParams());
  const linear_internal::Regularization reg{mu_, options_.l2.regularize_bias};
  return WithLoss(options_.loss, [&](auto loss) {
    using Loss = decltype(loss);
    return WithRows(data, [&](const auto& rows) {
      return linear_internal::Evaluate<Loss>(rows, data, num_features_, reg, params);
    });
  });
}

double LinearModel::ExampleLossDouble(std::span<const double> params, const data::Dataset& data,
                                      int64_t row) const {
  CheckData(data);
  ASYNCDP_CHECK(static_cast<int64_t>(params.size()) == NumParams());
  const linear_internal::Regularization reg{mu_, options_.l2.regularize_bias};
  return WithLoss(options_.loss, [&](auto loss) {
    using Loss = decltype(loss);
    return WithRows(data, [&](const auto& rows) {
      return linear_internal::ExampleLoss<Loss, double>(rows, data, num_features_, reg, params, row);
    });
  });
}

ClipStats LinearModel::ClippedGradientSumDouble(std::span<const double> params, const data::Dataset& data,
                                                std::span<const int64_t> batch, double clip,
                                                std::span<double> grad_sum, std::span<double> norms) const {
  CheckData(data);
  const linear_internal::Regularization reg{mu_, options_.l2.regularize_bias};
  return WithLoss(options_.loss, [&](auto loss) {
    using Loss = decltype(loss);
    return WithRows(data, [&](const auto& rows) {
      return linear_internal::ClippedSum<Loss, double>(rows, data, num_features_, reg, params, batch, clip,
                                                       grad_sum, norms);
    });
  });
}

}  // namespace asyncdp::models
