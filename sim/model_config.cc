#include "sim/model_config.h"

#include "models/factory.h"

namespace asyncdp::sim {

std::unique_ptr<models::Model> MakeModelFromConfig(const ModelConfig& config, const data::Dataset& train,
                                                   int64_t records_per_client) {
  models::ModelOptions options;
  options.kind = config.kind;
  // λ only enters the regularised objective; the other kinds are fit unregularised, as in the paper.
  options.l2_lambda = config.kind == "logistic_l2" ? config.l2_lambda : 0.0;
  options.regularizer_convention = config.regularizer_convention;
  options.regularizer_num_records = records_per_client;
  options.regularize_bias = config.regularize_bias;
  options.hidden = config.hidden;
  options.activation = config.activation;
  options.cnn.activation = options.activation;
  options.cnn.threads = static_cast<int>(config.threads);
  return models::MakeModel(options, train.features(), train.num_classes(), train.image);
}

}  // namespace asyncdp::sim
