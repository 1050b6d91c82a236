// The utility graph of Section 3.3, utility graph; docs/theory.md §6: which (σ, C) pairs can never reach a target accuracy.
//
// For every clipping constant C of a grid, train w* with clipping C and no noise (dp.enabled = false,
// dp.clip = C: the run's own schedule, data and K). Then, for every σ of a grid, add
//
//   n_d = C · σ · z_d,     z_d ~ N(0, I)   (d = 0 .. draws-1)
//
// to w* and measure the accuracy fraction F(w* + n_d) / F(w*), F = test accuracy on the run's test rows
// (data.eval_rows caps them). z_d is the stream StreamKey{seed, 0, d, kUtilityNoise} (core/random.h), the
// same for every (C, σ): common random numbers, so a curve's points differ only through C · σ and the
// curves are smooth in σ. The spec leaves the number of draws open (§10.17); we report mean, sample
// standard deviation, min and max over the draws.
//
// The last round's noise lands directly in the final model; ignoring all earlier noise makes the graph a
// best case for DP-SGD (§7 "Rationale"): a pair below the threshold will not do better under real DP-SGD,
// a pair above it is only a candidate.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"
#include "models/model.h"
#include "sim/config.h"

namespace asyncdp::sim {

struct UtilityGraphOptions {
  std::vector<double> clips;   // the C grid; each finite and > 0
  std::vector<double> sigmas;  // the σ grid; each finite and >= 0 (σ = 0 reproduces F(w*) exactly)
  int64_t draws = 10;          // noisy copies per (C, σ); >= 1. More draws: tighter mean, linear cost.
  // Accuracy fraction read off as acceptable (§7 step 4: at most about a 10% drop). In (0, 1].
  double threshold = 0.9;
};

// Throws ConfigError naming the offending option (--clips, --sigmas, --draws, --threshold).
void ValidateUtilityGraphOptions(const UtilityGraphOptions& options);

// Statistics over the draws of one (C, σ) point. Fractions are NaN when F(w*) = 0 (undefined ratio).
struct UtilityPoint {
  double clip = 0.0;
  double sigma = 0.0;
  int64_t draws = 0;
  double base_accuracy = 0.0;  // F(w*)
  double mean_accuracy = 0.0;  // mean over draws of F(w* + n_d)
  double mean_fraction = 0.0;  // mean over draws of F(w* + n_d) / F(w*)
  double std_fraction = 0.0;   // sample standard deviation (n - 1); 0 for a single draw
  double min_fraction = 0.0;
  double max_fraction = 0.0;
};

// The noisy copies of one (C, σ) point: w* + C·σ·z_d for d < draws, evaluated on `test`. Pure apart from
// the model's own evaluation threads; the result depends only on its arguments.
UtilityPoint MeasureNoisyCopies(const models::Model& model, const data::Dataset& test,
                                std::span<const float> w_star, double base_accuracy, double clip,
                                double sigma, int64_t draws, uint64_t seed);

// One curve of the graph: w* for one C and its points over the σ grid.
struct UtilityCurve {
  double clip = 0.0;
  double base_accuracy = 0.0;  // F(w*)
  double base_loss = 0.0;      // mean test loss of w*
  // Largest σ of the grid up to which every point's mean fraction is >= threshold; NaN if the first
  // point already falls below it.
  double max_sigma_at_threshold = 0.0;
  std::string wstar_metrics_csv;  // metrics.csv of the w* training run
  nlohmann::json wstar_summary;   // summary.json of the w* training run
  std::vector<UtilityPoint> points;
};

struct UtilityGraph {
  TrainConfig base_config;  // the configuration w* was trained with, before C was set per curve
  UtilityGraphOptions options;
  std::vector<UtilityCurve> curves;  // in the order of options.clips
  double wall_seconds = 0.0;
};

// The non-private clipped run that produces w* for clipping constant `clip`: `base` with dp.enabled =
// false, dp.clip = clip and no ε target or σ (which only make sense with noise).
TrainConfig WStarConfig(const TrainConfig& base, double clip);

// Throws ConfigError on protocol.participation unless `base` trains with asynchronous rounds: w* is the
// model of one such run (random check-ins are not supported).
void RequireWStarRun(const TrainConfig& base);

// Why an override (--set) of `key` changes nothing in the utility graph of `base`, or nullopt when the graph
// reads it: the privacy keys the graph sets itself (dp.enabled, dp.clip, dp.sigma, dp.epsilon: --clips and
// --sigmas say them), the keys a w* run does not read (config_usage.h), and run outputs the graph does not
// write (output.trace).
std::optional<std::string> UtilityGraphUnreadReason(const std::string& key, const TrainConfig& base);

// Trains w* per C and measures every σ. Throws what RunTraining throws for a bad configuration.
UtilityGraph RunUtilityGraph(const TrainConfig& base, const UtilityGraphOptions& options, bool progress);

// utility_graph.csv: header
// clip,sigma,draws,base_accuracy,mean_accuracy,mean_fraction,std_fraction,min_fraction,max_fraction
std::string UtilityGraphCsv(const UtilityGraph& graph);

// What a utility graph is, in its summary.json's `privacy`: every w* is trained on the training rows with
// clipping and no noise (Section 3.3), so no epsilon covers its accuracies, the σ read off them, nor the
// w* runs' metrics (docs/design.md, "Released fields").
inline constexpr const char* kUtilityGraphPrivacy =
    "none: each w* is trained on the training rows without noise (Section 3.3; docs/theory.md §6); its "
    "accuracies, the sigma read off them and the w* runs' metrics are covered by no epsilon: a non-private "
    "diagnostic for choosing (C, sigma), not a result to release";

// summary.json: grids, draws, threshold, seed, the noise rule, per curve F(w*), the σ read-off and the
// w* run's summary, and the base configuration as TOML.
nlohmann::json UtilityGraphSummary(const UtilityGraph& graph);

// Parses a number grid for --clips / --sigmas: comma-separated values, where "..." (or "…") continues
// the arithmetic progression of the two values before it up to the value after it ("0,2,...,24"), and
// "a:b:step" is the closed range a, a+step, ..., b. Throws ConfigError(option, ...) for bad text.
std::vector<double> ParseNumberGrid(std::string_view text, const std::string& option);

}  // namespace asyncdp::sim
