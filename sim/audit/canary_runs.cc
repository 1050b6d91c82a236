#include "sim/audit/canary_runs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/audit/canary_statistics.h"
#include "core/check.h"
#include "core/error.h"
#include "core/sampling.h"
#include "core/secure_noise.h"
#include "sim/protocol/client.h"
#include "sim/protocol/server.h"
#include "sim/runtime/run_observer.h"
#include "sim/runtime/virtual_runtime.h"

namespace asyncdp::sim::audit {
namespace {

// Poisson sampling at the plan's public rate q_i = s_i / N_c over a data set that may hold more rows than
// N_c (the canaries added to the audited client): every row, canary or not, is in the batch independently
// with probability q_i — the add/remove neighbour of the N_c-record data set that the accountants compose.
class PlanRatePoissonSampler final : public BatchSampler {
 public:
  PlanRatePoissonSampler(int64_t num_records, int64_t plan_records, uint64_t seed, uint32_t client)
      : BatchSampler(num_records, seed, client), plan_records_(plan_records) {}
  SamplingModel model() const override { return SamplingModel::kPoisson; }
  void Sample(uint32_t round, int64_t sample_size, std::vector<int64_t>& batch) override {
    ASYNCDP_CHECK(sample_size >= 0 && sample_size <= plan_records_);
    SamplePoisson(RoundKey(round), num_records(),
                  static_cast<double>(sample_size) / static_cast<double>(plan_records_), batch);
  }

 private:
  int64_t plan_records_;
};

// The audited client's updates as the server receives them, projected on the canary coordinates.
class UpdateRecorder final : public RunObserver {
 public:
  UpdateRecorder(int64_t client, int64_t first_coordinate, double clip, RunTrace& trace)
      : client_(client), first_(first_coordinate), clip_(clip), trace_(trace) {}
  void OnUpdate(const UpdateMessage& message, const RunClock& /*clock*/) override {
    if (message.client != client_) return;
    const int64_t t = message.local_round;
    ASYNCDP_CHECK(t >= 0 && t < static_cast<int64_t>(trace_.received.size()));
    const int64_t m = trace_.canaries;
    for (int64_t j = 0; j < m; ++j) {
      trace_.projections[static_cast<size_t>(t * m + j)] =
          static_cast<double>(message.update[first_ + j]) / clip_;
    }
    trace_.received[static_cast<size_t>(t)] = 1;
  }

 private:
  int64_t client_;
  int64_t first_;
  double clip_;
  RunTrace& trace_;
};

// `asyncdp audit` plants its own canaries: a config's audit.canaries (the one-run audit of a training run)
// does not apply to its trainings.
TrainConfig WithoutTrainAudit(TrainConfig config) {
  config.audit.canaries = 0;
  return config;
}

}  // namespace

CanaryExperiment::CanaryExperiment(const TrainConfig& config, const AuditOptions& options)
    : options_(options), experiment_(BuildExperiment(WithoutTrainAudit(config))) {
  options_.Validate();
  const Experiment& e = experiment_;
  if (!e.privacy.enabled) throw ConfigError("dp.enabled", "an audit needs a private run (dp.enabled = true)");
  if (options_.client >= e.config.clients.count) {
    throw ConfigError("--client",
                      "client " + std::to_string(options_.client) +
                          " does not exist (clients.count = " + std::to_string(e.config.clients.count) + ")");
  }
  const bool replace_one = NaturalNeighbours(e.privacy.sampling()) == NeighbourRelation::kReplaceOne;
  const bool whole_client = options_.canary == CanaryKind::kWholeClient;
  if (whole_client && !e.privacy.user_level) {
    throw ConfigError("--canary", "a whole-client canary audits user-level DP: set dp.unit = \"client\" and "
                                  "dp.client_clip (record-level runs are audited with dirac, opposite or "
                                  "mislabelled canaries)");
  }
  // What a projection is measured in: C_u for a whole client (its update is clipped to C_u), C for a record.
  projection_scale_ = whole_client ? e.privacy.client_clip : e.config.dp.clip;
  if (options_.canary == CanaryKind::kOpposite && !replace_one) {
    throw ConfigError("--canary",
                      "opposite canaries are the replace-one worst case: they need dp.sampling = "
                      "fixed_size_without_replacement or shuffle");
  }
  const int64_t records = client_records();
  if (options_.mode == AuditMode::kOneRun) {
    canaries_ = options_.canaries;
    if (replace_one && canaries_ > records) {
      throw ConfigError("--canaries",
                        "a replace-one one-run audit puts each canary in place of one of the client's " +
                            std::to_string(records) + " records: use at most that many");
    }
  } else if (replace_one && records < 2) {
    throw ConfigError("data.rows_per_client", "a replace-one audit needs >= 2 records in the audited client");
  }

  // The base model behind the canary wrappers, owned by the experiment (which outlives them).
  base_model_ = std::shared_ptr<const models::Model>(e.model.get(), [](const models::Model*) {});
  models::DiracCanaryOptions plain;
  plain.num_canaries = canaries_;
  plain.first_canary_row = models::kNoCanaryRow;
  plain_model_ = std::make_unique<models::DiracCanaryModel>(base_model_, plain);

  run_plans_ = e.plans;
  run_plans_.ForEachDistinct([scale = options_.noise_scale](RoundPlan& plan) {
    for (double& sigma : plan.noise_multipliers) sigma *= scale;
  });

  // The score rule of the audited client's plan (the public q_i and the accounted sigma_i).
  const RoundPlan& plan = e.plans[static_cast<size_t>(options_.client)];
  const bool shuffle = e.privacy.sampling() == SamplingModel::kShuffle;
  rule_.view = options_.view;
  bool subsampled = false;
  // User level: the noise of a round is sigma C_u, i.e. multiplier sigma C_u / C for a record canary; a
  // whole-client canary is in every round (rate 1) at multiplier sigma.
  const double record_sigma_scale = e.privacy.user_level && !whole_client ? e.privacy.client_clip / e.config.dp.clip
                                                                          : 1.0;
  for (int64_t t = 0; t < plan.rounds(); ++t) {
    const bool opposite_batch = options_.canary == CanaryKind::kOpposite && !shuffle;
    // Fixed-size batch of s_t records, all -C e but the canary: x_t = -s_t + 2 b_t.
    rule_.offset.push_back(opposite_batch ? -static_cast<double>(plan.sample_sizes[static_cast<size_t>(t)])
                                          : 0.0);
    rule_.scale.push_back(opposite_batch ? 2.0 : 1.0);
    const double rate = whole_client ? 1.0 : plan.rate(t);
    rule_.rate.push_back(rate);
    rule_.sigma.push_back(plan.noise_multipliers[static_cast<size_t>(t)] * record_sigma_scale);
    subsampled = subsampled || rate < 1.0;
  }
  AuditStatistic statistic = options_.statistic;
  if (options_.canary == CanaryKind::kMislabelled) {
    statistic = AuditStatistic::kNegativeLoss;
    const data::Dataset shard = e.data.shards[static_cast<size_t>(options_.client)].Copy();
    mislabelled_ = models::ChooseMislabelledCanary(shard, e.config.seed);
    const int64_t source[] = {mislabelled_.source_row};
    mislabelled_row_ = data::Subset(shard, source);
    mislabelled_row_.labels[0] = mislabelled_.label;
  } else if (statistic == AuditStatistic::kAuto) {
    statistic = subsampled && !shuffle && options_.view == AuditView::kWhiteBox
                    ? AuditStatistic::kLikelihoodRatio
                    : AuditStatistic::kSum;
  }
  if (statistic == AuditStatistic::kLikelihoodRatio && shuffle) {
    throw ConfigError("--statistic",
                      "the likelihood ratio assumes the canary is in each batch independently "
                      "(Poisson or fixed-size sampling); shuffled batches need --statistic sum");
  }
  if (statistic == AuditStatistic::kLikelihoodRatio && options_.view == AuditView::kFinalModel) {
    throw ConfigError("--statistic",
                      "the final model shows only the sum of the updates: use --statistic sum");
  }
  rule_.statistic = statistic;

  if (options_.mode == AuditMode::kMultiRun) {
    in_ = MakeAuditedClient({1});
    out_ = MakeAuditedClient({0});
  }
}

CanaryExperiment::AuditedClient CanaryExperiment::MakeAuditedClient(
    const std::vector<uint8_t>& included) const {
  ASYNCDP_CHECK(static_cast<int64_t>(included.size()) == canaries_);
  const data::RowView& shard = experiment_.data.shards[static_cast<size_t>(options_.client)];
  std::vector<int64_t> canary_of_row;
  for (int64_t j = 0; j < canaries_; ++j) {
    if (included[static_cast<size_t>(j)] != 0) canary_of_row.push_back(j);
  }
  const auto planted = static_cast<int64_t>(canary_of_row.size());
  if (options_.canary == CanaryKind::kWholeClient) {
    // The client's records, every one a canary (in) or every one without a gradient (out: the data set
    // removed). The row count, and so the public sampling rate, is the client's own.
    AuditedClient client;
    std::vector<int64_t> rows(shard.indices.begin(), shard.indices.end());
    client.shard = data::Subset(*shard.data, rows);
    models::DiracCanaryOptions canary;
    canary.num_canaries = 1;
    canary.first_canary_row = models::kNoCanaryRow;
    canary.other_records = planted > 0 ? models::OtherRecords::kCanary : models::OtherRecords::kZero;
    client.model = std::make_unique<models::DiracCanaryModel>(base_model_, canary);
    return client;
  }
  // Replace-one: each planted canary takes the place of one of the last records; add/remove: appended.
  const int64_t kept = NaturalNeighbours(experiment_.privacy.sampling()) == NeighbourRelation::kReplaceOne
                           ? shard.rows() - planted
                           : shard.rows();
  ASYNCDP_CHECK(kept >= 0);
  std::vector<int64_t> rows(static_cast<size_t>(kept));
  std::iota(rows.begin(), rows.end(), int64_t{0});
  const bool mislabelled = options_.canary == CanaryKind::kMislabelled;
  // Dirac canary rows are placeholders (the Dirac model never reads their features): copies of row 0. A
  // mislabelled canary is its source record, relabelled below.
  rows.insert(rows.end(), static_cast<size_t>(planted), mislabelled ? mislabelled_.source_row : int64_t{0});
  AuditedClient client;
  for (int64_t& row : rows) row = shard.indices[static_cast<size_t>(row)];  // shard position → loaded row
  client.shard = data::Subset(*shard.data, rows);
  if (mislabelled && planted > 0) client.shard.labels.back() = mislabelled_.label;
  models::DiracCanaryOptions canary;
  canary.num_canaries = canaries_;
  canary.first_canary_row = planted > 0 && !mislabelled ? kept : models::kNoCanaryRow;
  if (planted > 0 && canaries_ > 1) canary.canary_of_row = std::move(canary_of_row);
  canary.other_records = options_.canary == CanaryKind::kOpposite ? models::OtherRecords::kOpposite
                                                                  : models::OtherRecords::kBaseModel;
  client.model = std::make_unique<models::DiracCanaryModel>(base_model_, canary);
  return client;
}

RunTrace CanaryExperiment::RunMultiRun(uint64_t seed, bool include) const {
  ASYNCDP_CHECK(options_.mode == AuditMode::kMultiRun);
  return RunOnce(include ? in_ : out_, seed);
}

RunTrace CanaryExperiment::RunOneRun(uint64_t seed, const std::vector<uint8_t>& included) const {
  ASYNCDP_CHECK(options_.mode == AuditMode::kOneRun);
  return RunOnce(MakeAuditedClient(included), seed);
}

RunTrace CanaryExperiment::RunOnce(const AuditedClient& audited, uint64_t seed) const {
  const Experiment& e = experiment_;
  const auto n = static_cast<size_t>(e.config.clients.count);
  const Eigen::VectorXf initial = audited.model->InitialParams(seed);
  const bool secure = e.privacy.secure_noise;
  std::vector<std::unique_ptr<ClientProtocol>> clients;
  clients.reserve(n);
  for (size_t c = 0; c < n; ++c) {
    const bool is_audited = static_cast<int64_t>(c) == options_.client;
    ClientOptions client_options;
    client_options.id = static_cast<int64_t>(c);
    client_options.seed = seed;
    client_options.clip = e.config.dp.clip;
    if (e.privacy.user_level) client_options.client_clip = e.privacy.client_clip;  // as in training
    client_options.noise = secure ? NoiseMode::kSecure : NoiseMode::kReproducible;
    client_options.stop_at_round = e.protocol.faults.clients[c].dropout_round;
    if (std::isfinite(e.privacy.epsilon_budget)) client_options.budget_rounds = e.privacy.budget_rounds[c];
    const int64_t records = is_audited ? audited.shard.rows() : e.data.shards[c].rows();
    const models::Model& model =
        is_audited ? static_cast<const models::Model&>(*audited.model) : *plain_model_;
    // As in training (sim/experiment.cc): secure noise draws the batches from OS entropy too.
    const uint64_t batch_seed = secure ? OsRandomSeed() : seed;
    std::unique_ptr<BatchSampler> sampler =
        is_audited && e.privacy.sampling() == SamplingModel::kPoisson
            ? std::make_unique<PlanRatePoissonSampler>(records, e.data.shards[c].rows(), batch_seed,
                                                       static_cast<uint32_t>(c))
            : MakeSampler(e.privacy.sampling(), records, batch_seed, static_cast<uint32_t>(c),
                          AllocationSlotsOf(e));
    clients.push_back(
        is_audited ? std::make_unique<ClientProtocol>(client_options, audited.shard, model, run_plans_[c],
                                                      *e.protocol.delay_rule, std::move(sampler), initial)
                   : std::make_unique<ClientProtocol>(client_options, e.data.shards[c], model, run_plans_[c],
                                                      *e.protocol.delay_rule, std::move(sampler), initial));
  }
  ServerProtocol server(static_cast<int64_t>(n), initial, e.protocol.server);

  RunTrace trace;
  trace.canaries = canaries_;
  const int64_t rounds = e.plans[static_cast<size_t>(options_.client)].rounds();
  trace.projections.assign(static_cast<size_t>(rounds * canaries_), 0.0);
  trace.received.assign(static_cast<size_t>(rounds), 0);
  const int64_t first = plain_model_->CanaryCoordinate(0);
  UpdateRecorder recorder(options_.client, first, projection_scale_, trace);

  RuntimeOptions runtime = e.protocol.runtime;
  runtime.kind = RuntimeKind::kVirtual;
  runtime.seed = seed;
  runtime.worker_threads = 1;  // runs are parallel across the audit; each run is one thread
  RunVirtual(runtime, e.protocol.faults, clients, server, recorder);

  trace.rounds_done = clients[static_cast<size_t>(options_.client)]->local_round();
  trace.final_coordinates.resize(static_cast<size_t>(canaries_));
  for (int64_t j = 0; j < canaries_; ++j) {
    trace.final_coordinates[static_cast<size_t>(j)] = static_cast<double>(server.model()[first + j]);
  }
  if (options_.canary == CanaryKind::kMislabelled) {
    const std::span<const float> base_params(server.model().data(),
                                             static_cast<size_t>(base_model_->NumParams()));
    trace.canary_loss = base_model_->Evaluate(base_params, mislabelled_row_).loss;
  }
  return trace;
}

double CanaryExperiment::Score(const RunTrace& trace, int64_t canary) const {
  ASYNCDP_CHECK(canary >= 0 && canary < trace.canaries);
  // A lower loss on the mislabelled record: the model has learnt it.
  if (rule_.statistic == AuditStatistic::kNegativeLoss) return -trace.canary_loss;
  if (rule_.view == AuditView::kFinalModel) {
    // v̂ moves by -eta_t U_t: a present canary pushes its coordinate down.
    return -trace.final_coordinates[static_cast<size_t>(canary)] / projection_scale_;
  }
  double score = 0.0;
  for (size_t t = 0; t < trace.received.size(); ++t) {
    if (trace.received[t] == 0) continue;
    const double x =
        (trace.projections[t * static_cast<size_t>(trace.canaries) + static_cast<size_t>(canary)] -
         rule_.offset[t]) /
        rule_.scale[t];
    score += rule_.statistic == AuditStatistic::kSum ? x
                                                     : asyncdp::audit::CanaryStepLogLikelihoodRatio(
                                                           x, rule_.rate[t], rule_.sigma[t] / rule_.scale[t]);
  }
  return score;
}

}  // namespace asyncdp::sim::audit
