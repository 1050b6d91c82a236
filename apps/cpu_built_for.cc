// Which extensions the build targets: this file is compiled with the build's own flags (-march=native by
// default), so the compiler's predefined macros say what every other file may use (apps/cpu_support.h).
// Constant data only: nothing here executes (the code that reads it is cpu_support.cc's, compiled for any
// x86-64).
#include "apps/cpu_support.h"

namespace asyncdp::apps::cpu_internal {

extern const bool kBuiltFor[kCpuFeatureCount] = {
#ifdef __SSE4_2__
    true,
#else
    false,
#endif
#ifdef __POPCNT__
    true,
#else
    false,
#endif
#ifdef __AVX__
    true,
#else
    false,
#endif
#ifdef __AVX2__
    true,
#else
    false,
#endif
#ifdef __FMA__
    true,
#else
    false,
#endif
#ifdef __BMI__
    true,
#else
    false,
#endif
#ifdef __BMI2__
    true,
#else
    false,
#endif
#ifdef __AVX512F__
    true,
#else
    false,
#endif
#ifdef __AVX512DQ__
    true,
#else
    false,
#endif
#ifdef __AVX512CD__
    true,
#else
    false,
#endif
#ifdef __AVX512BW__
    true,
#else
    false,
#endif
#ifdef __AVX512VL__
    true,
#else
    false,
#endif
#ifdef __AVX512IFMA__
    true,
#else
    false,
#endif
#ifdef __AVX512VBMI__
    true,
#else
    false,
#endif
#ifdef __AVX512VNNI__
    true,
#else
    false,
#endif
};

}  // namespace asyncdp::apps::cpu_internal
