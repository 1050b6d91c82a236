#include "data/partition.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/check.h"
#include "core/error.h"
#include "core/random.h"
#include "data/dirichlet.h"

namespace asyncdp::data {
namespace {

// A number for an error message: at most 6 significant digits, never hundreds of digits.
std::string ShortNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// In-place Fisher–Yates shuffle: every permutation equally likely given uniform NextBelow.
void Shuffle(std::vector<int64_t>& items, RandomStream& stream) {
  for (size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(stream.NextBelow(i));
    std::swap(items[i - 1], items[j]);
  }
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

void CheckClients(int num_clients) {
  if (num_clients < 1) {
    throw ConfigError("partition.num_clients",
                      "expected at least 1 client, got " + std::to_string(num_clients));
  }
}

// One Dirichlet draw of the shards (stream round = attempt).
Shards DrawDirichletShards(const std::vector<std::vector<int64_t>>& rows_of_class, int num_clients,
                           double alpha, RandomStream& stream) {
  Shards shards(num_clients);
  std::vector<double> proportions(num_clients);
  for (const std::vector<int64_t>& class_rows : rows_of_class) {
    std::vector<int64_t> rows = class_rows;
    Shuffle(rows, stream);
    SampleSymmetricDirichlet(stream, alpha, proportions);
    const auto n = static_cast<int64_t>(rows.size());
    double cumulative = 0.0;
    int64_t start = 0;
    for (int k = 0; k < num_clients; ++k) {
      cumulative += proportions[k];
      // The last cut is exactly n so rounding never loses or duplicates a row.
      const int64_t end =
          k + 1 == num_clients ? n : std::clamp<int64_t>(std::llround(cumulative * n), start, n);
      shards[k].insert(shards[k].end(), rows.begin() + start, rows.begin() + end);
      start = end;
    }
  }
  for (auto& shard : shards) std::sort(shard.begin(), shard.end());
  return shards;
}

}  // namespace

std::string_view ToString(PartitionScheme scheme) {
  switch (scheme) {
    case PartitionScheme::kIid:
      return "iid";
    case PartitionScheme::kDirichlet:
      return "dirichlet";
  }
  return "?";
}

PartitionScheme ParsePartitionScheme(std::string_view name) {
  if (name == "iid") return PartitionScheme::kIid;
  if (name == "dirichlet") return PartitionScheme::kDirichlet;
  throw ConfigError("partition.scheme", "expected 'iid' or 'dirichlet', got '" + std::string(name) + "'");
}

Shards IidPartition(int64_t num_rows, int num_clients, uint64_t seed) {
  CheckClients(num_clients);
  if (num_rows < num_clients) {
    throw ConfigError("partition.num_clients", "cannot give each of " + std::to_string(num_clients) +
                                                   " clients at least one of " + std::to_string(num_rows) +
                                                   " rows");
  }
  std::vector<int64_t> order = Iota(num_rows);
  RandomStream stream(StreamKey{seed, kIidStream, 0, StreamPurpose::kPartition});
  Shuffle(order, stream);
  Shards shards(num_clients);
  const int64_t base = num_rows / num_clients;
  const int64_t extra = num_rows % num_clients;
  int64_t start = 0;
  for (int k = 0; k < num_clients; ++k) {
    const int64_t size = base + (k < extra ? 1 : 0);
    shards[k].assign(order.begin() + start, order.begin() + start + size);
    std::sort(shards[k].begin(), shards[k].end());
    start += size;
  }
  ASYNCDP_CHECK(start == num_rows);
  return shards;
}

Shards DirichletPartition(std::span<const int32_t> labels, int num_classes, const PartitionOptions& options) {
  CheckClients(options.num_clients);
  if (!(options.dirichlet_alpha > 0.0) || !std::isfinite(options.dirichlet_alpha)) {
    throw ConfigError("partition.dirichlet_alpha",
                      "expected a finite alpha > 0, got " + ShortNumber(options.dirichlet_alpha));
  }
  if (options.min_shard_size < 0) {
    throw ConfigError("partition.min_shard_size",
                      "expected >= 0, got " + std::to_string(options.min_shard_size));
  }
  if (options.dirichlet_max_attempts < 1) {
    throw ConfigError("partition.dirichlet_max_attempts",
                      "expected >= 1, got " + std::to_string(options.dirichlet_max_attempts));
  }
  const auto num_rows = static_cast<int64_t>(labels.size());
  if (options.min_shard_size > num_rows / options.num_clients) {  // min · K > N, without overflow
    throw ConfigError("partition.min_shard_size", std::to_string(num_rows) + " rows cannot give each of " +
                                                      std::to_string(options.num_clients) + " clients " +
                                                      std::to_string(options.min_shard_size) + " rows");
  }
  ASYNCDP_CHECK(num_classes >= 1);
  std::vector<std::vector<int64_t>> rows_of_class(num_classes);
  for (int64_t r = 0; r < num_rows; ++r) {
    ASYNCDP_CHECK(labels[r] >= 0 && labels[r] < num_classes);
    rows_of_class[labels[r]].push_back(r);
  }
  for (int attempt = 0; attempt < options.dirichlet_max_attempts; ++attempt) {
    RandomStream stream(
        StreamKey{options.seed, kDirichletStream, static_cast<uint32_t>(attempt), StreamPurpose::kPartition});
    Shards shards = DrawDirichletShards(rows_of_class, options.num_clients, options.dirichlet_alpha, stream);
    const bool large_enough = std::all_of(shards.begin(), shards.end(), [&](const auto& s) {
      return static_cast<int64_t>(s.size()) >= options.min_shard_size;
    });
    if (large_enough) return shards;
  }
  throw ConfigError("partition.dirichlet_alpha",
                    "no Dirichlet(" + std::to_string(options.dirichlet_alpha) + ") draw in " +
                        std::to_string(options.dirichlet_max_attempts) +
                        " attempts gave every client at least " + std::to_string(options.min_shard_size) +
                        " rows; raise alpha, lower partition.min_shard_size or use fewer clients");
}

Shards PartitionRows(std::span<const int32_t> labels, int num_classes, const PartitionOptions& options) {
  switch (options.scheme) {
    case PartitionScheme::kIid:
      return IidPartition(static_cast<int64_t>(labels.size()), options.num_clients, options.seed);
    case PartitionScheme::kDirichlet:
      return DirichletPartition(labels, num_classes, options);
  }
  ASYNCDP_CHECK_MSG(false, "unknown partition scheme");
  return {};
}

TrainTestSplit SplitTrainTest(int64_t num_rows, double test_fraction, uint64_t seed) {
  if (!(test_fraction > 0.0 && test_fraction < 1.0)) {
    throw ConfigError("data.test_fraction",
                      "expected a fraction in (0, 1), got " + std::to_string(test_fraction));
  }
  const int64_t test_rows = std::llround(test_fraction * static_cast<double>(num_rows));
  if (test_rows < 1 || test_rows >= num_rows) {
    throw ConfigError("data.test_fraction", "a fraction " + std::to_string(test_fraction) + " of " +
                                                std::to_string(num_rows) +
                                                " rows leaves the train or the test part empty");
  }
  std::vector<int64_t> order = Iota(num_rows);
  RandomStream stream(StreamKey{seed, kHoldoutStream, 0, StreamPurpose::kPartition});
  Shuffle(order, stream);
  TrainTestSplit split;
  split.test.assign(order.begin(), order.begin() + test_rows);
  split.train.assign(order.begin() + test_rows, order.end());
  std::sort(split.test.begin(), split.test.end());
  std::sort(split.train.begin(), split.train.end());
  return split;
}

}  // namespace asyncdp::data
