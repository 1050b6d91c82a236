// The _asyncdp extension module: the compiled half of the `asyncdp` Python package (docs/python.md).
#include <pybind11/pybind11.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "apps/allocator_tuning.h"
#include "apps/cpu_support.h"
#include "python/src/bindings.h"

PYBIND11_MODULE(_asyncdp, m) {
  // A CPU without an extension the module was compiled for ended the process as the module loaded, with the
  // reason on stderr (apps/cpu_support.h), not SIGILL; the call links that check into the module.
  if (const char* why = asyncdp::apps::UnsupportedCpu()) throw pybind11::import_error(why);
  m.doc() = "asyncdp's compiled core; use the `asyncdp` package instead of this module.";
  m.attr("__version__") = ASYNCDP_VERSION;
  // The CLI's allocator settings (apps/allocator_tuning.h): without them the in-process accounting of a
  // training run took 0.48 s instead of the CLI's 0.28 s (Table 3 calibrated to epsilon = 1). They apply
  // to the whole Python process (glibc keeps freed blocks below 4 MiB and up to 64 MiB of free heap);
  // docs/python.md says so.
  asyncdp::apps::TuneAllocator();
  // As in the CLI: logs go to stderr, never into a notebook's stdout. Warnings only by default; the
  // package's set_log_level("info") shows the CLI's progress lines.
  if (spdlog::get("asyncdp") == nullptr) spdlog::set_default_logger(spdlog::stderr_color_mt("asyncdp"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_level(spdlog::level::warn);
  m.def("set_log_level", [](const std::string& level) {
    const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
    if (parsed == spdlog::level::off && level != "off") {
      throw pybind11::value_error("log level: expected trace, debug, info, warn, err, critical or off");
    }
    spdlog::set_level(parsed);
  });
  asyncdp::python::RegisterErrors(m);
  asyncdp::python::RegisterAccounting(m);
  asyncdp::python::RegisterTraining(m);
  asyncdp::python::RegisterData(m);
}
