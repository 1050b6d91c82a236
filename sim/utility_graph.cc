#include "sim/utility_graph.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/check.h"
#include "core/error.h"
#include "core/random.h"
#include "sim/config_fields.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/json_number.h"
#include "sim/train.h"

namespace asyncdp::sim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The standard-normal stream of draw d (shared by every (C, σ) point, see the header).
StreamKey UtilityNoiseKey(uint64_t seed, int64_t draw) {
  return StreamKey{seed, 0, static_cast<uint32_t>(draw), StreamPurpose::kUtilityNoise};
}

void RequireIncreasing(const std::vector<double>& grid, const std::string& option) {
  for (size_t j = 1; j < grid.size(); ++j) {
    if (!(grid[j] > grid[j - 1])) {
      throw ConfigError(
          option, fmt::format("values must be strictly increasing ({} follows {})", grid[j], grid[j - 1]));
    }
  }
}

double ParseGridNumber(std::string_view token, const std::string& option) {
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  double value = 0.0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || error != std::errc() || end != token.data() + token.size() || !std::isfinite(value)) {
    throw ConfigError(option, fmt::format("expected a number, got '{}'", token));
  }
  return value;
}

// Appends first, first + step, ... while <= last (with a relative slack of 1e-9 steps for decimal steps).
void AppendRange(double first, double last, double step, const std::string& option,
                 std::vector<double>& out) {
  if (!(step > 0.0) || last < first) {
    throw ConfigError(
        option, fmt::format("a range needs first <= last and a positive step (got {} to {} by {})", first,
                            last, step));
  }
  const double count = std::floor((last - first) / step + 1e-9);
  if (count > 1e6) throw ConfigError(option, "the range has more than a million values");
  for (int64_t j = 0; j <= static_cast<int64_t>(count); ++j)
    out.push_back(first + static_cast<double>(j) * step);
}

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    parts.push_back(
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

bool IsEllipsis(std::string_view token) {
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token == "..." || token == "\u2026";
}

// max over the σ grid (ascending) of the prefix where every mean fraction >= threshold.
double MaxSigmaAtThreshold(const std::vector<UtilityPoint>& points, double threshold) {
  double best = kNaN;
  for (const auto& point : points) {
    if (!(point.mean_fraction >= threshold)) break;
    best = point.sigma;
  }
  return best;
}

}  // namespace

void ValidateUtilityGraphOptions(const UtilityGraphOptions& options) {
  if (options.clips.empty()) throw ConfigError("--clips", "at least one clipping constant is needed");
  if (options.sigmas.empty()) throw ConfigError("--sigmas", "at least one sigma is needed");
  // The same ranges as dp.clip and dp.sigma (sim/config_fields.cc): beyond them the noise sigma * C
  // overflows 32-bit floats and the curve would say that noise costs nothing.
  constexpr double kMaxClip = 1e6, kMaxSigma = 1e6;
  for (double clip : options.clips) {
    if (!(clip > 0.0) || !(clip <= kMaxClip)) {
      throw ConfigError("--clips", fmt::format("each C must be finite and in (0, {}] (dp.clip's range), got {}",
                                               NumberText(kMaxClip), NumberText(clip)));
    }
  }
  for (double sigma : options.sigmas) {
    if (!(sigma >= 0.0) || !(sigma <= kMaxSigma)) {
      throw ConfigError("--sigmas", fmt::format("each sigma must be finite and in [0, {}] (dp.sigma's range: "
                                                "beyond it the noise sigma * C overflows 32-bit floats), got {}",
                                                NumberText(kMaxSigma), NumberText(sigma)));
    }
  }
  std::vector<double> clips = options.clips;
  std::sort(clips.begin(), clips.end());
  if (std::adjacent_find(clips.begin(), clips.end()) != clips.end()) {
    throw ConfigError("--clips", "a clipping constant is listed twice");
  }
  RequireIncreasing(options.sigmas, "--sigmas");
  if (options.draws < 1)
    throw ConfigError("--draws", fmt::format("need at least 1 draw, got {}", options.draws));
  if (!(options.threshold > 0.0 && options.threshold <= 1.0)) {
    throw ConfigError("--threshold", fmt::format("must be in (0, 1], got {}", options.threshold));
  }
}

UtilityPoint MeasureNoisyCopies(const models::Model& model, const data::Dataset& test,
                                std::span<const float> w_star, double base_accuracy, double clip,
                                double sigma, int64_t draws, uint64_t seed) {
  ASYNCDP_CHECK(draws >= 1);
  ASYNCDP_CHECK(static_cast<int64_t>(w_star.size()) == model.NumParams());
  std::vector<double> accuracy(static_cast<size_t>(draws));
  // Draws are independent; each writes its own slot, so the result does not depend on the thread count.
  tbb::parallel_for(int64_t{0}, draws, [&](int64_t d) {
    std::vector<float> copy(w_star.begin(), w_star.end());
    AddGaussianNoise(UtilityNoiseKey(seed, d), clip * sigma, std::span<float>(copy));
    accuracy[static_cast<size_t>(d)] = model.Evaluate(copy, test).accuracy;
  });

  UtilityPoint point;
  point.clip = clip;
  point.sigma = sigma;
  point.draws = draws;
  point.base_accuracy = base_accuracy;
  double sum = 0.0;
  for (double a : accuracy) sum += a;
  point.mean_accuracy = sum / static_cast<double>(draws);
  if (!(base_accuracy > 0.0)) {
    point.mean_fraction = point.std_fraction = point.min_fraction = point.max_fraction = kNaN;
    return point;
  }
  double squares = 0.0;
  point.min_fraction = std::numeric_limits<double>::infinity();
  point.max_fraction = -std::numeric_limits<double>::infinity();
  point.mean_fraction = point.mean_accuracy / base_accuracy;
  for (double a : accuracy) {
    const double fraction = a / base_accuracy;
    squares += (fraction - point.mean_fraction) * (fraction - point.mean_fraction);
    point.min_fraction = std::min(point.min_fraction, fraction);
    point.max_fraction = std::max(point.max_fraction, fraction);
  }
  point.std_fraction = draws > 1 ? std::sqrt(squares / static_cast<double>(draws - 1)) : 0.0;
  return point;
}

TrainConfig WStarConfig(const TrainConfig& base, double clip) {
  TrainConfig config = base;
  config.dp.enabled = false;  // §7 step 2: clipping C, no noise
  config.dp.clip = clip;
  config.dp.sigma = 0.0;
  config.dp.epsilon = 0.0;
  return config;
}

void RequireWStarRun(const TrainConfig& base) {
  // w* is the model of one asynchronous training run (§6 step 2); random check-ins train no such model the
  // graph could read (they crashed the graph before this check).
  RequireAsyncRounds(base, "utility-graph",
                     "w* is the model of one such run; random check-ins are not supported");
}

std::optional<std::string> UtilityGraphUnreadReason(const std::string& key, const TrainConfig& base) {
  if (key == "dp.enabled" || key == "dp.clip" || key == "dp.sigma" || key == "dp.epsilon") {
    return "the utility graph sets it: w* trains with clipping at each C of --clips and no noise, "
           "and --sigmas gives the noise of the copies (docs/theory.md §6)";
  }
  if (key == "output.trace") return "the graph writes each w* run's metrics.csv, not its event trace";
  return UnusedKeyReason(key, WStarConfig(base, base.dp.clip));
}

UtilityGraph RunUtilityGraph(const TrainConfig& base, const UtilityGraphOptions& options, bool progress) {
  ValidateUtilityGraphOptions(options);
  ValidateConfig(base, /*refuse_unused_keys=*/false);  // its outputs are the graph's, not a run's
  RequireWStarRun(base);
  const auto start = std::chrono::steady_clock::now();
  UtilityGraph graph;
  graph.base_config = base;
  graph.options = options;
  for (double clip : options.clips) {
    const TrainResult trained =
        RunTraining(WStarConfig(base, clip), TrainOptions{.progress = progress, .refuse_unused_keys = false});
    const Experiment& experiment = *trained.experiment;
    const std::span<const float> w_star(trained.final_model.data(),
                                        static_cast<size_t>(trained.final_model.size()));
    const models::Evaluation base_eval = experiment.model->Evaluate(w_star, experiment.data.test);
    UtilityCurve curve;
    curve.clip = clip;
    curve.base_accuracy = base_eval.accuracy;
    curve.base_loss = base_eval.loss;
    curve.wstar_metrics_csv = trained.metrics_csv;
    curve.wstar_summary = trained.summary;
    if (!(base_eval.accuracy > 0.0)) {
      spdlog::warn(
          "utility-graph: w* for C = {} has test accuracy 0; the accuracy fraction is undefined "
          "(Section 3.3, utility graph; docs/theory.md §6: train w* further)",
          clip);
    }
    for (double sigma : options.sigmas) {
      curve.points.push_back(MeasureNoisyCopies(*experiment.model, experiment.data.test, w_star,
                                                base_eval.accuracy, clip, sigma, options.draws, base.seed));
    }
    curve.max_sigma_at_threshold = MaxSigmaAtThreshold(curve.points, options.threshold);
    spdlog::info("utility-graph: C = {}: F(w*) = {:.4f}, fraction >= {} up to sigma = {}", clip,
                 curve.base_accuracy, options.threshold, curve.max_sigma_at_threshold);
    graph.curves.push_back(std::move(curve));
  }
  graph.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return graph;
}

std::string UtilityGraphCsv(const UtilityGraph& graph) {
  std::string out =
      "clip,sigma,draws,base_accuracy,mean_accuracy,mean_fraction,std_fraction,min_fraction,max_fraction\n";
  for (const auto& curve : graph.curves) {
    for (const auto& p : curve.points) {
      out += fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", p.clip, p.sigma, p.draws,
                         p.base_accuracy, p.mean_accuracy, p.mean_fraction, p.std_fraction, p.min_fraction,
                         p.max_fraction);
    }
  }
  return out;
}

nlohmann::json UtilityGraphSummary(const UtilityGraph& graph) {
  nlohmann::json s;
  s["kind"] = "utility_graph";
  s["privacy"] = kUtilityGraphPrivacy;
  s["seed"] = graph.base_config.seed;
  s["clips"] = graph.options.clips;
  s["sigmas"] = graph.options.sigmas;
  s["draws"] = graph.options.draws;
  s["threshold"] = graph.options.threshold;
  s["noise"] =
      "copy_d = w* + C*sigma*z_d, z_d = standard normals of StreamKey{seed, 0, d, kUtilityNoise}, "
      "the same z_d for every (C, sigma)";
  s["wstar"] = "trained with dp.enabled = false and dp.clip = C (clipping, no noise), Section 3.3, utility graph; docs/theory.md §6";
  nlohmann::json curves = nlohmann::json::array();
  for (const auto& curve : graph.curves) {
    nlohmann::json c;
    c["clip"] = curve.clip;
    c["base_accuracy"] = curve.base_accuracy;
    c["base_loss"] = curve.base_loss;
    c["max_sigma_at_threshold"] = FiniteOrNull(curve.max_sigma_at_threshold);
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : curve.points) {
      points.push_back({{"sigma", p.sigma},
                        {"mean_accuracy", p.mean_accuracy},
                        {"mean_fraction", FiniteOrNull(p.mean_fraction)},
                        {"std_fraction", FiniteOrNull(p.std_fraction)},
                        {"min_fraction", FiniteOrNull(p.min_fraction)},
                        {"max_fraction", FiniteOrNull(p.max_fraction)}});
    }
    c["points"] = std::move(points);
    nlohmann::json train = curve.wstar_summary;
    train.erase("config");  // the per-C configuration differs from the base only in dp.*; see below
    c["wstar_run"] = std::move(train);
    curves.push_back(std::move(c));
  }
  s["curves"] = std::move(curves);
  s["wall_seconds"] = graph.wall_seconds;
  s["config"] = ToToml(graph.base_config);
  return s;
}

std::vector<double> ParseNumberGrid(std::string_view text, const std::string& option) {
  std::vector<double> grid;
  const std::vector<std::string_view> parts = SplitCommas(text);
  for (size_t j = 0; j < parts.size(); ++j) {
    const std::string_view part = parts[j];
    if (IsEllipsis(part)) {
      if (grid.size() < 2 || j + 1 >= parts.size() || IsEllipsis(parts[j + 1])) {
        throw ConfigError(option, "'...' needs two values before it and one after it, e.g. 0,2,...,24");
      }
      const double step = grid[grid.size() - 1] - grid[grid.size() - 2];
      const double last = ParseGridNumber(parts[j + 1], option);
      const double from = grid.back();
      grid.pop_back();  // AppendRange restarts from the last listed value
      AppendRange(from, last, step, option, grid);
      if (std::fabs(grid.back() - last) > 1e-9 * std::max(1.0, std::fabs(last))) {
        throw ConfigError(option, fmt::format("{} is not on the progression {}, {}, ... (step {})", last,
                                              from - step, from, step));
      }
      grid.back() = last;  // exact end value despite decimal steps
      ++j;                 // the value after "..." is consumed
      continue;
    }
    const size_t colon = part.find(':');
    if (colon != std::string_view::npos) {
      const std::string_view rest = part.substr(colon + 1);
      const size_t colon2 = rest.find(':');
      if (colon2 == std::string_view::npos) throw ConfigError(option, "a range is written first:last:step");
      AppendRange(ParseGridNumber(part.substr(0, colon), option),
                  ParseGridNumber(rest.substr(0, colon2), option),
                  ParseGridNumber(rest.substr(colon2 + 1), option), option, grid);
      continue;
    }
    grid.push_back(ParseGridNumber(part, option));
  }
  return grid;
}

}  // namespace asyncdp::sim
