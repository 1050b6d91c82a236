// A clear refusal of a CPU this binary was not compiled for, instead of a crash.
//
// With ASYNCDP_NATIVE (the default) the build targets the CPU that compiles it (-march=native: AVX-512 on
// an Intel Xeon or an AMD Zen 4/5, AVX2 on a Zen 3). Started on a CPU without one of those extensions — a
// cluster's login node and its compute nodes are often different CPUs — the binary would die at the first
// such instruction with SIGILL and no word of why. So apps/cpu_support.cc, compiled for the baseline x86-64
// (it runs on any of them), compares the extensions the rest of the build was compiled for
// (apps/cpu_built_for.cc, compiled with the build's own flags) with the CPU's, at load time, before the
// other static initialisers, and ends the process with "error: ..." on stderr and exit code 2 — the CLI's,
// or the Python interpreter that imports the module: the module's own static initialisers (CLI11's
// validators, for one) run before Python could be handed an ImportError, and an AVX-512 instruction among
// them would end the process anyway, with SIGILL. The cure it names: build on the machine that runs (or a
// machine of the same kind), or configure with -DASYNCDP_NATIVE=OFF for a portable binary.
//
// cpu_support.cc deliberately uses no C++ library code: an inline function it instantiated could be merged
// by the linker with the same function compiled for the native CPU elsewhere, and run that copy.
#pragma once

namespace asyncdp::apps {

// The instruction-set extensions checked, in the order of kCpuFeatureNames (cpu_support.cc) and of the
// table in cpu_built_for.cc. The baseline x86-64 (SSE2) is assumed.
enum CpuFeature : int {
  kSse42,
  kPopcnt,
  kAvx,
  kAvx2,
  kFma,
  kBmi,
  kBmi2,
  kAvx512f,
  kAvx512dq,
  kAvx512cd,
  kAvx512bw,
  kAvx512vl,
  kAvx512ifma,
  kAvx512vbmi,
  kAvx512vnni,
  kCpuFeatureCount
};

// The extension's name as /proc/cpuinfo and the compilers' __builtin_cpu_supports spell it.
const char* CpuFeatureName(int feature);

// True when the build (every file but cpu_support.cc) was compiled to use the extension.
bool CpuFeatureBuiltFor(int feature);
namespace cpu_internal {
extern const bool kBuiltFor[kCpuFeatureCount];  // cpu_built_for.cc: data only
}

// The extensions the build uses that `has` says the CPU lacks, written to missing[0 .. n) (n ≤ capacity);
// returns n. `has` is the CPU query in a run, a stand-in in the tests.
using CpuHasFeature = bool (*)(int feature);
int MissingCpuFeatures(CpuHasFeature has, const char** missing, int capacity);

// The error for those features, NUL-terminated in buffer (truncated to size); returns buffer.
const char* UnsupportedCpuMessage(const char* const* missing, int count, char* buffer, int size);

// Null when this CPU has every extension the build uses; otherwise the error (in a static buffer). The
// load-time check asks it; so do the CLI's main and the Python module's init, which links that check into
// them (where a CPU lacks an extension, the process has ended before they run).
const char* UnsupportedCpu();

}  // namespace asyncdp::apps
