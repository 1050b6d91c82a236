#include "sim/train_data.h"

#include <filesystem>
#include <numeric>
#include <string>
#include <system_error>

#include "core/error.h"
#include "data/libsvm.h"
#include "data/load.h"
#include "data/partition.h"

namespace asyncdp::sim {
namespace {

// A data file that cannot be opened or read is named by its key, and a relative path that does not exist
// says where it was looked for: a configuration's paths are taken from the working directory, not from the
// configuration file's folder, so `--config experiments/x.toml` run from elsewhere misses `datasets/...`.
// Errors inside the file (FILE:LINE:COL, a byte offset) and errors naming another file (an IDX labels
// file) keep their own location.
template <class Load>
data::Dataset LoadNamed(const char* key, const std::string& path, Load load) {
  try {
    return load();
  } catch (const InputError& e) {
    if (e.where() != path) throw;
    std::string message = path + ": " + e.message();
    std::error_code error;
    const std::filesystem::path file(path);
    if (file.is_relative() && !std::filesystem::exists(file, error)) {
      const std::filesystem::path here = std::filesystem::current_path(error);
      message += " (a relative path is taken from the working directory, " + (error ? "." : here.string()) +
                 ", not from the configuration file's folder)";
    }
    throw ConfigError(key, message);
  }
}

}  // namespace

LoadedData LoadTrainData(const DataConfig& config, uint64_t seed, const RowHolding& holding) {
  data::DataLoadOptions options;
  options.format = data::ParseDataFormat(config.format, "data.format");
  options.num_features = config.features;
  if (holding.train_rows) {
    // The mask is over the file's rows: the training rows asked for, and the held-out test rows if wanted.
    options.rows_to_hold = [&](const data::Dataset& labels) {
      if (!config.test.empty()) return holding.train_rows(labels);
      const auto split = data::SplitTrainTest(labels.rows(), config.test_fraction, seed);
      const std::vector<bool> train = holding.train_rows(data::Subset(labels, split.train));
      std::vector<bool> rows(static_cast<size_t>(labels.rows()), false);
      for (size_t i = 0; i < split.train.size(); ++i) rows[static_cast<size_t>(split.train[i])] = train[i];
      if (holding.test) {
        for (int64_t r : split.test) rows[static_cast<size_t>(r)] = true;
      }
      return rows;
    };
  }
  LoadedData loaded;
  data::Dataset all = LoadNamed("data.train", config.train, [&] { return data::LoadDataset(config.train, options); });
  if (config.test.empty()) {
    const auto split = data::SplitTrainTest(all.rows(), config.test_fraction, seed);
    loaded.train = data::Subset(all, split.train);
    loaded.test = data::Subset(all, split.test);
  } else if (!holding.test) {
    loaded.train = std::move(all);
    loaded.test.format = loaded.train.format;
    loaded.test.class_names = loaded.train.class_names;
  } else {
    loaded.train = std::move(all);
    // A LIBSVM test file is read with the training file's feature count and label mapping, so a test
    // file that never uses the last feature (a9a.t) or lists labels in another order still lines up.
    loaded.test = LoadNamed("data.test", config.test, [&] {
      return loaded.train.format == data::DataFormat::kLibsvm ? data::ReadLibsvmLike(config.test, loaded.train)
                                                               : data::LoadDataset(config.test, options);
    });
    if (loaded.test.features() != loaded.train.features()) {
      throw ConfigError("data.test", "test data has " + std::to_string(loaded.test.features()) +
                                         " features, training data " + std::to_string(loaded.train.features()));
    }
    if (loaded.test.class_names != loaded.train.class_names) {
      throw ConfigError("data.test", "test labels do not use the training data's classes");
    }
  }
  if (config.eval_rows > 0 && loaded.test.rows() > config.eval_rows) {
    std::vector<int64_t> first(static_cast<size_t>(config.eval_rows));
    std::iota(first.begin(), first.end(), 0);
    loaded.test = data::Subset(loaded.test, first);
  }
  return loaded;
}

std::vector<std::vector<int64_t>> ClientShards(const DataConfig& config, const data::Dataset& train, int64_t clients,
                                               uint64_t seed) {
  if (train.rows() < clients) {
    throw ConfigError("clients.count", "more clients (" + std::to_string(clients) + ") than training rows (" +
                                           std::to_string(train.rows()) + ")");
  }
  data::PartitionOptions partition;
  partition.scheme = config.partition;
  partition.num_clients = static_cast<int>(clients);
  partition.dirichlet_alpha = config.dirichlet_alpha;
  partition.seed = seed;
  auto shards = data::PartitionRows(train.labels, train.num_classes(), partition);
  for (auto& shard : shards) {
    if (config.rows_per_client > 0 && static_cast<int64_t>(shard.size()) > config.rows_per_client) {
      shard.resize(static_cast<size_t>(config.rows_per_client));
    }
  }
  return shards;
}

}  // namespace asyncdp::sim
