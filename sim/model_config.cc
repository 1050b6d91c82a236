#include "sim/model_config.h"

#include "models/factory.h"

namespace asyncdp::sim {

void ResolveL2Lambda(ModelConfig& config, int64_t records) {
  if (config.l2_lambda == 0.0 && models::ReadsOf(config.kind).l2 == models::ModelReads::L2::kRequired) {
    config.l2_lambda = 1.0 / static_cast<double>(records);
  }
}

std::unique_ptr<models::Model> MakeModelFromConfig(const ModelConfig& config, const data::Dataset& train,
                                                   int64_t records_per_client) {
  models::ModelOptions options;
  options.kind = config.kind;
  // λ reaches only the kinds that read it (the configuration refuses it for the others, sim/config_usage.h;
  // the utility graph and reference-optimum commands do not refuse, so it is dropped here for them).
  const models::ModelReads reads = models::ReadsOf(config.kind);
  options.l2_lambda = reads.l2 != models::ModelReads::L2::kNone ? config.l2_lambda : 0.0;
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
