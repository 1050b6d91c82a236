// asyncdp.train from Python: the CLI's `asyncdp train` (sim/train.h) on a worker thread, the GIL released
// while it runs. The calling thread wakes every `poll_seconds` to run Python's signal handlers (Ctrl-C is
// delivered to the main thread only, so the check must happen there) and the optional progress callback;
// either raising asks the run to stop (TrainOptions::cancel) and the exception is re-raised once every
// thread of the run has finished — never a half-stopped run in the background.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/json_to_python.h"
#include "sim/config_fields.h"
#include "sim/config_io.h"
#include "sim/config_usage.h"
#include "sim/output_dir.h"
#include "sim/train.h"

namespace asyncdp::python {
namespace py = pybind11;

namespace {

// Latest global round (a check-in run's steps taken), published by the run for the polling thread. Thread
// safety: the run's server thread writes under mutex_, the calling thread reads under it; finished_ wakes the
// caller at the end.
class ProgressMailbox final : public sim::RunObserver {
 public:
  struct Snapshot {
    int64_t global_round = 0;
    double time = 0.0;
    int64_t gradients = 0;
  };

  void OnGlobalRound(const sim::ServerProtocol& server, const sim::RunClock& clock) override {
    std::lock_guard lock(mutex_);
    latest_ = {server.global_round(), clock.time, clock.gradients};
  }
  // Random check-ins: the steps taken stand for the global round, as in their metrics.csv.
  void OnCheckInStep(int64_t taken, int64_t /*total*/, const sim::RunClock& clock) override {
    std::lock_guard lock(mutex_);
    latest_ = {taken, clock.time, clock.gradients};
  }

  void MarkFinished() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    changed_.notify_all();
  }

  // Waits up to `timeout` for the end of the run; returns whether it ended.
  bool WaitFinished(std::chrono::duration<double> timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return finished_; });
  }

  Snapshot latest() {
    std::lock_guard lock(mutex_);
    return latest_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  Snapshot latest_;      // guarded by mutex_
  bool finished_ = false;  // guarded by mutex_
};

py::dict ProgressDict(const ProgressMailbox::Snapshot& s) {
  py::dict info;
  info["global_round"] = s.global_round;
  info["time"] = s.time;
  info["gradients"] = s.gradients;
  return info;
}

// The configuration as train(), resolve_config() and unread_keys() read it, before its checks: the TOML file
// (or the defaults), then the layers of assignments in order (a dict configuration's, then the keyword
// overrides), each a layer as a command's --set list is.
sim::TrainConfig UncheckedConfigOf(const std::optional<std::string>& config_path,
                                   const std::vector<std::vector<std::string>>& layers) {
  sim::TrainConfig config = config_path ? sim::LoadConfigFile(*config_path) : sim::TrainConfig{};
  for (const std::vector<std::string>& layer : layers) sim::ApplyOverrides(config, layer);
  return config;
}

// ... checked as the CLI checks it.
sim::TrainConfig ConfigOf(const std::optional<std::string>& config_path,
                          const std::vector<std::vector<std::string>>& layers) {
  sim::TrainConfig config = UncheckedConfigOf(config_path, layers);
  sim::ValidateConfig(config);
  return config;
}

py::object Train(std::optional<std::string> config_path, const std::vector<std::vector<std::string>>& layers,
                 const py::object& progress, double poll_seconds, std::optional<std::string> out_dir) {
  const sim::TrainConfig config = ConfigOf(config_path, layers);
  if (out_dir) sim::CheckOutputTarget(*out_dir);  // before the run: a bad out= was refused only after it

  ProgressMailbox mailbox;
  std::atomic<bool> cancel{false};
  sim::TrainResult result;
  std::exception_ptr failure;
  std::optional<py::error_already_set> python_error;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        result = sim::RunTraining(config, sim::TrainOptions{.progress = false, .observer = &mailbox, .cancel = &cancel});
      } catch (...) {
        failure = std::current_exception();
      }
      mailbox.MarkFinished();
    });
    const auto poll = std::chrono::duration<double>(poll_seconds);
    bool finished = false;
    while (!finished) {
      finished = mailbox.WaitFinished(poll);
      if (python_error) continue;  // already stopping: just wait for the threads
      py::gil_scoped_acquire acquire;
      try {
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        if (!progress.is_none()) progress(ProgressDict(mailbox.latest()));
      } catch (py::error_already_set& e) {
        python_error = std::move(e);
        cancel.store(true, std::memory_order_relaxed);
      }
    }
    worker.join();
  }
  if (python_error) throw std::move(*python_error);  // KeyboardInterrupt, or the callback's exception
  if (failure) std::rethrow_exception(failure);
  if (out_dir) sim::WriteTrainOutputs(result, *out_dir);

  py::dict out;
  out["summary"] = ToPython(result.summary);
  out["metrics_csv"] = result.metrics_csv;
  out["clients_csv"] = result.clients_csv;
  out["events_csv"] = result.events_csv;  // "" without output.trace
  out["phases_csv"] = result.phases_csv;  // "" unless proactive
  out["config_toml"] = sim::ToToml(result.resolved_config);
  out["truncation_refused"] = sim::TruncationRefused(result);
  auto* model = new Eigen::VectorXf(std::move(result.final_model));
  py::capsule owner(model, [](void* p) { delete static_cast<Eigen::VectorXf*>(p); });
  out["final_model"] = py::array_t<float>({model->size()}, {sizeof(float)}, model->data(), owner);
  return out;
}

}  // namespace

void RegisterTraining(py::module_& m) {
  m.def(
      "resolve_config",
      [](std::optional<std::string> config_path, const std::vector<std::vector<std::string>>& layers) {
        const sim::TrainConfig config = ConfigOf(config_path, layers);
        std::string toml;
        {
          py::gil_scoped_release release;
          toml = sim::ResolvedConfigToml(sim::ResolveTrainConfig(config));
        }
        return toml;
      },
      py::arg("config_path"), py::arg("layers"),
      "config.resolved.toml's text for a run of this configuration (data-derived defaults, "
      "sigma calibrated), without training");
  m.def(
      "unread_keys",
      [](std::optional<std::string> config_path, const std::vector<std::vector<std::string>>& layers) {
        // As the run would parse it, without the checks (a key the run does not read is what is asked for).
        const sim::TrainConfig config = UncheckedConfigOf(config_path, layers);
        std::vector<std::pair<std::string, std::string>> unread;
        sim::TrainConfig fields_of = config;
        for (const sim::ConfigField& field : sim::ConfigFields(fields_of)) {
          if (auto why = sim::UnusedKeyReason(field.key, config))
            unread.emplace_back(field.key, std::move(*why));
        }
        return unread;
      },
      py::arg("config_path"), py::arg("layers"),
      "(key, reason) for every configuration key this configuration's run does not read");
  m.def("train", &Train, py::arg("config_path"), py::arg("layers"), py::arg("progress"),
        py::arg("poll_seconds"), py::arg("out_dir"),
        "Runs `asyncdp train`; returns summary, metrics_csv, clients_csv, config_toml, final_model.");
}

}  // namespace asyncdp::python
