// `asyncdp data info PATH [--format auto|libsvm|idx|cifar] [--features N] [--labels PATH]`
//
// Loads a data set exactly as a training run would (data/load.h) and prints one JSON object on stdout:
//   {"format": "libsvm", "rows": N, "features": d, "nnz": stored entries (LIBSVM, explicit zeros included)
//    or nonzero pixels (images), "labels": {"<label token>": rows, ...} in class order,
//    "density": nnz / (rows · features)}
// Bad input throws asyncdp::InputError (ParseError / BinaryFormatError / ConfigError); main() prints
// `error: FILE:LINE:COL: message` (or FILE:byte OFFSET) and exits with code 2.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/commands.h"
#include "core/error.h"
#include "data/dataset.h"
#include "data/load.h"

namespace asyncdp::apps {
namespace {

struct DataInfoArgs {
  std::string path;
  std::string format = "auto";
  int64_t features = 0;
  std::string labels;
};

nlohmann::ordered_json DataInfoJson(const data::Dataset& dataset) {
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  const std::vector<int64_t> counts = data::ClassCounts(dataset);
  for (size_t c = 0; c < counts.size(); ++c) labels[dataset.class_names[c]] = counts[c];
  const double cells = static_cast<double>(dataset.rows()) * static_cast<double>(dataset.features());
  nlohmann::ordered_json info;
  info["format"] = std::string(data::ToString(dataset.format));
  info["rows"] = dataset.rows();
  info["features"] = dataset.features();
  info["nnz"] = dataset.nnz();
  info["labels"] = std::move(labels);
  info["density"] = cells > 0 ? static_cast<double>(dataset.nnz()) / cells : 0.0;
  return info;
}

// LIBSVM column indices are int32 (data/libsvm.h).
constexpr int64_t kMaxFeatures = 2147483647;

void RunDataInfo(const DataInfoArgs& args) {
  if (args.features < 0 || args.features > kMaxFeatures) {
    throw ConfigError("--features", "must be an integer in [0, 2147483647], got " + std::to_string(args.features));
  }
  data::DataLoadOptions options;
  options.format = data::ParseDataFormat(args.format, "--format");
  options.num_features = args.features;
  options.labels_path = args.labels;
  const data::Dataset dataset = data::LoadDataset(args.path, options);
  std::cout << DataInfoJson(dataset).dump() << '\n';
}

}  // namespace

void RegisterDataCommand(CLI::App& app) {
  CLI::App* data = app.add_subcommand("data", "Inspect data sets");
  data->require_subcommand(1);
  CLI::App* info = data->add_subcommand(
      "info", "Print a data set's format, size, nnz and label counts as one JSON object");
  // Owned by the callback, which CLI11 keeps alive as long as the app; the options bind into it.
  auto args = std::make_shared<DataInfoArgs>();
  info->add_option("path", args->path,
                   "Data file: LIBSVM text, IDX images, or CIFAR-10 .bin (may be gzipped)")
      ->required()
      ->check(NonEmptyPath());
  info->add_option("--format", args->format, "File format; auto detects IDX by magic, CIFAR by .bin size")
      ->check(CLI::IsMember({"auto", "libsvm", "idx", "cifar"}))
      ->capture_default_str();
  info->add_option("--features", args->features,
                   "LIBSVM feature count d (0 = infer the largest index); a larger index is an error")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  info->add_option("--labels", args->labels,
                   "IDX labels file (default: the sibling *-labels-idx1-ubyte[.gz] of the images file)")
      ->check(NonEmptyPath());
  info->callback([args] { RunDataInfo(*args); });
}

}  // namespace asyncdp::apps
