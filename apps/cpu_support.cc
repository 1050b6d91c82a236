// Compiled for the baseline x86-64 (CMakeLists.txt: -march=x86-64 on this file alone), so it runs on any
// CPU; C library calls only (apps/cpu_support.h says why).
#include "apps/cpu_support.h"

#include <stdio.h>
#include <unistd.h>

namespace asyncdp::apps {
namespace {

const char* const kCpuFeatureNames[kCpuFeatureCount] = {
    "sse4.2",   "popcnt",   "avx",      "avx2",     "fma",        "bmi",        "bmi2",      "avx512f",
    "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi", "avx512vnni"};

// __builtin_cpu_supports takes a string literal, so one case per feature.
bool CpuHas(int feature) {
  switch (feature) {
    case kSse42:
      return __builtin_cpu_supports("sse4.2");
    case kPopcnt:
      return __builtin_cpu_supports("popcnt");
    case kAvx:
      return __builtin_cpu_supports("avx");
    case kAvx2:
      return __builtin_cpu_supports("avx2");
    case kFma:
      return __builtin_cpu_supports("fma");
    case kBmi:
      return __builtin_cpu_supports("bmi");
    case kBmi2:
      return __builtin_cpu_supports("bmi2");
    case kAvx512f:
      return __builtin_cpu_supports("avx512f");
    case kAvx512dq:
      return __builtin_cpu_supports("avx512dq");
    case kAvx512cd:
      return __builtin_cpu_supports("avx512cd");
    case kAvx512bw:
      return __builtin_cpu_supports("avx512bw");
    case kAvx512vl:
      return __builtin_cpu_supports("avx512vl");
    case kAvx512ifma:
      return __builtin_cpu_supports("avx512ifma");
    case kAvx512vbmi:
      return __builtin_cpu_supports("avx512vbmi");
    case kAvx512vnni:
      return __builtin_cpu_supports("avx512vnni");
    default:
      return true;
  }
}

// Priority 101, the first the compilers allow to programs: before every C++ static initialiser of the
// program (or module), which the native files compile and which could hold an instruction the CPU lacks.
__attribute__((constructor(101))) void CheckCpuAtLoad() {
  __builtin_cpu_init();  // the query's data may not be set up yet this early
  const char* message = UnsupportedCpu();
  if (message == nullptr) return;
  size_t length = 0;
  while (message[length] != '\0') ++length;
  if (write(STDERR_FILENO, message, length) < 0) {
    // Nothing more to say where stderr is closed; the exit code still tells.
  }
  _exit(2);
}

}  // namespace

bool CpuFeatureBuiltFor(int feature) {
  return feature >= 0 && feature < kCpuFeatureCount && cpu_internal::kBuiltFor[feature];
}

const char* CpuFeatureName(int feature) {
  return feature >= 0 && feature < kCpuFeatureCount ? kCpuFeatureNames[feature] : "?";
}

int MissingCpuFeatures(CpuHasFeature has, const char** missing, int capacity) {
  int count = 0;
  for (int f = 0; f < kCpuFeatureCount; ++f) {
    if (CpuFeatureBuiltFor(f) && !has(f) && count < capacity) missing[count++] = kCpuFeatureNames[f];
  }
  return count;
}

const char* UnsupportedCpuMessage(const char* const* missing, int count, char* buffer, int size) {
  if (size <= 0) return buffer;
  int at = snprintf(buffer, static_cast<size_t>(size),
                    "error: this asyncdp was compiled for a CPU with instructions this CPU lacks (");
  for (int i = 0; i < count && at >= 0 && at < size; ++i) {
    at += snprintf(buffer + at, static_cast<size_t>(size - at), "%s%s", i == 0 ? "" : ", ", missing[i]);
  }
  if (at >= 0 && at < size) {
    snprintf(buffer + at, static_cast<size_t>(size - at),
             "): it was built with -march=native (ASYNCDP_NATIVE, the default) on another kind of machine. "
             "Build it on this machine or one of the same CPU kind, or configure with -DASYNCDP_NATIVE=OFF "
             "for a binary that runs on any x86-64 CPU (slower kernels; docs/design.md, \"CPU support\").\n");
  }
  return buffer;
}

const char* UnsupportedCpu() {
  static char message[1024];
  const char* missing[kCpuFeatureCount];
  const int count = MissingCpuFeatures(CpuHas, missing, kCpuFeatureCount);
  if (count == 0) return nullptr;
  return UnsupportedCpuMessage(missing, count, message, static_cast<int>(sizeof message));
}

}  // namespace asyncdp::apps
