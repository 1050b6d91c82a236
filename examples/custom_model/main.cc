// huber_train CONFIG.toml [key=value ...]: trains the example model of docs/models.md through the whole
// simulator (clients, server, runtime, accountants) and prints what asyncdp train prints in its summary: the
// test accuracy and the ε of each accountant. A program of your own registers its model the same way.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "huber_regression.h"
#include "sim/config_io.h"
#include "sim/train.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CONFIG.toml [key=value ...]\n", argv[0]);
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);  // stdout is the summary JSON only
  try {
    example::RegisterHuberRegression();  // before the configuration is read: model.kind = "huber" is now valid
    asyncdp::sim::TrainConfig config = asyncdp::sim::LoadConfigFile(argv[1]);
    asyncdp::sim::ApplyOverrides(config, std::vector<std::string>(argv + 2, argv + argc));
    const asyncdp::sim::TrainResult result = asyncdp::sim::RunTraining(config, {.progress = false});
    std::printf("%s\n", result.summary.dump(2).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "huber_train: error: %s\n", e.what());
    return 2;
  }
}
