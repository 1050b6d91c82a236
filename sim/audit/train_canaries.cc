#include "sim/audit/train_canaries.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/audit/one_run.h"
#include "core/check.h"
#include "core/error.h"
#include "core/random.h"

namespace asyncdp::sim::audit {
namespace {

// m distinct records of `data` (a partial Fisher–Yates shuffle from stream {seed, client, 2,
// kAuditCanaries}), each with a label drawn uniformly from the other classes.
struct MislabelledChoice {
  std::vector<int64_t> sources;  // canary j copies record sources[j]
  std::vector<int32_t> labels;   // with label labels[j] != that record's
};
MislabelledChoice ChooseMislabelled(const data::Dataset& data, uint64_t seed, uint32_t client, int64_t m) {
  ASYNCDP_CHECK(m <= data.rows() && data.num_classes() >= 2);
  RandomStream stream(StreamKey{seed, client, 2, StreamPurpose::kAuditCanaries});
  std::vector<int64_t> rows(static_cast<size_t>(data.rows()));
  std::iota(rows.begin(), rows.end(), int64_t{0});
  MislabelledChoice choice;
  const auto classes = static_cast<uint64_t>(data.num_classes());
  for (int64_t j = 0; j < m; ++j) {
    const auto pick = j + static_cast<int64_t>(stream.NextBelow(static_cast<uint64_t>(data.rows() - j)));
    std::swap(rows[static_cast<size_t>(j)], rows[static_cast<size_t>(pick)]);
    const int64_t source = rows[static_cast<size_t>(j)];
    const auto label = static_cast<uint64_t>(data.labels[static_cast<size_t>(source)]);
    choice.sources.push_back(source);
    choice.labels.push_back(static_cast<int32_t>((label + 1 + stream.NextBelow(classes - 1)) % classes));
  }
  return choice;
}

}  // namespace

void ValidateTrainAudit(const TrainConfig& c) {
  const AuditConfig& a = c.audit;
  if (a.canaries == 0) return;
  auto require = [](bool ok, const char* key, const std::string& what) {
    if (!ok) throw ConfigError(key, what);
  };
  require(a.canaries >= 10, "audit.canaries",
          fmt::format("{} canaries are too few for the one-run audit to say anything: use >= 10 (or 0 = off)",
                      a.canaries));
  require(a.client < c.clients.count, "audit.client",
          fmt::format("client {} does not exist (clients.count = {})", a.client, c.clients.count));
  require(c.dp.enabled, "dp.enabled", "audit.canaries audits a private run: dp.enabled must be true");
  require(c.protocol.participation == Participation::kAsyncRounds, "protocol.participation",
          "audit.canaries audits the asynchronous rounds protocol (async_rounds), not check_in");
  require(c.targets.accuracy == 0.0, "targets.accuracy",
          "audit.canaries cannot be combined with the proactive phases (targets.accuracy > 0)");
  require(a.canary != TrainCanary::kDirac || c.eval.reference_optimum.empty(), "eval.reference_optimum",
          "Dirac canaries add model parameters: the reference optimum no longer fits the model");
}

std::shared_ptr<TrainCanaries> PlantTrainCanaries(const TrainConfig& config, SamplingModel sampling,
                                                  std::vector<data::RowView>& shards,
                                                  std::unique_ptr<models::Model>& model) {
  const AuditConfig& a = config.audit;
  if (a.canaries == 0) return nullptr;
  auto t = std::make_shared<TrainCanaries>();
  t->client = a.client;
  t->canaries = a.canaries;
  t->kind = a.canary == TrainCanary::kDirac ? CanaryKind::kDirac : CanaryKind::kMislabelled;
  t->noise_scale = a.test_noise_scale;
  const auto client = static_cast<uint32_t>(a.client);
  data::RowView& view = shards[static_cast<size_t>(a.client)];
  data::Dataset shard = view.Copy();  // the audited client's rows, copied once: planting changes them
  t->records_before = shard.rows();
  const bool replace_one = NaturalNeighbours(sampling) == NeighbourRelation::kReplaceOne;
  const int64_t m = a.canaries;
  if (replace_one && m > shard.rows()) {
    throw ConfigError("audit.canaries",
                      fmt::format("with {} sampling each canary replaces one of client {}'s {} records: use at "
                                  "most that many",
                                  ToString(sampling), a.client, shard.rows()));
  }
  if (t->kind == CanaryKind::kMislabelled && (m > shard.rows() || shard.num_classes() < 2)) {
    throw ConfigError("audit.canaries",
                      fmt::format("mislabelled canaries are {} distinct records of client {} relabelled: it has "
                                  "{} records and the data {} classes",
                                  m, a.client, shard.rows(), shard.num_classes()));
  }
  t->included = asyncdp::audit::DrawCanaryInclusion(config.seed, client, m);
  std::vector<int64_t> canary_of_row;
  for (int64_t j = 0; j < m; ++j) {
    if (t->included[static_cast<size_t>(j)] != 0) canary_of_row.push_back(j);
  }
  t->planted = static_cast<int64_t>(canary_of_row.size());
  const int64_t kept = replace_one ? shard.rows() - t->planted : shard.rows();
  t->replaced = shard.rows() - kept;

  if (t->kind == CanaryKind::kMislabelled) {
    const MislabelledChoice choice = ChooseMislabelled(shard, config.seed, client, m);
    t->canary_rows = data::Subset(shard, choice.sources);
    t->canary_rows.labels = choice.labels;
    // The kept records, then a relabelled copy of each planted canary's record.
    std::vector<int64_t> rows(static_cast<size_t>(kept));
    std::iota(rows.begin(), rows.end(), int64_t{0});
    for (const int64_t j : canary_of_row) rows.push_back(choice.sources[static_cast<size_t>(j)]);
    data::Dataset planted = data::Subset(shard, rows);
    for (size_t i = 0; i < canary_of_row.size(); ++i) {
      planted.labels[static_cast<size_t>(kept) + i] = choice.labels[static_cast<size_t>(canary_of_row[i])];
    }
    shard = std::move(planted);
  } else {
    // Dirac rows are placeholders (the wrapper never reads their features): copies of row 0.
    std::vector<int64_t> rows(static_cast<size_t>(kept));
    std::iota(rows.begin(), rows.end(), int64_t{0});
    rows.insert(rows.end(), static_cast<size_t>(t->planted), int64_t{0});
    shard = data::Subset(shard, rows);
    std::shared_ptr<const models::Model> base(std::move(model));
    models::DiracCanaryOptions plain;
    plain.num_canaries = m;
    plain.first_canary_row = models::kNoCanaryRow;
    models::DiracCanaryOptions audited = plain;
    audited.first_canary_row = t->planted > 0 ? kept : models::kNoCanaryRow;
    if (t->planted > 0) audited.canary_of_row = canary_of_row;
    t->audited_model = std::make_unique<models::DiracCanaryModel>(base, audited);
    auto plain_model = std::make_unique<models::DiracCanaryModel>(base, plain);
    t->first_coordinate = plain_model->CanaryCoordinate(0);
    model = std::move(plain_model);
  }
  t->planted_shard = std::make_shared<const data::Dataset>(std::move(shard));
  view.data = t->planted_shard.get();
  view.indices.resize(static_cast<size_t>(t->planted_shard->rows()));
  std::iota(view.indices.begin(), view.indices.end(), int64_t{0});
  ASYNCDP_CHECK(view.rows() == RecordsWithCanaries(config, sampling, a.client, t->records_before));
  spdlog::info("audit: {} {} canaries for client {}, {} planted ({}); N_c {} -> {}", m, ToString(a.canary),
               a.client, t->planted,
               replace_one ? fmt::format("each in place of one of its records, {} left out", t->replaced)
                           : std::string("added to its records"),
               t->records_before, view.rows());
  return t;
}

int64_t RecordsWithCanaries(const TrainConfig& config, SamplingModel sampling, int64_t client,
                            int64_t records) {
  const AuditConfig& a = config.audit;
  if (a.canaries == 0 || client != a.client ||
      NaturalNeighbours(sampling) == NeighbourRelation::kReplaceOne) {
    return records;
  }
  int64_t planted = 0;
  for (const uint8_t coin :
       asyncdp::audit::DrawCanaryInclusion(config.seed, static_cast<uint32_t>(client), a.canaries)) {
    planted += coin != 0;
  }
  return records + planted;
}

const models::Model& ClientModel(const TrainCanaries* t, const models::Model& model, size_t client) {
  if (t != nullptr && t->audited_model && static_cast<int64_t>(client) == t->client) return *t->audited_model;
  return model;
}

RoundPlan ClientRunPlan(const TrainCanaries* t, const RoundPlan& client_plan, size_t client) {
  RoundPlan plan = client_plan;
  if (t != nullptr && static_cast<int64_t>(client) == t->client && t->noise_scale != 1.0) {
    for (double& sigma : plan.noise_multipliers) sigma *= t->noise_scale;
  }
  return plan;
}

}  // namespace asyncdp::sim::audit
