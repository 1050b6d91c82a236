// The load-time CPU check (apps/cpu_support.h): which extensions the build is recorded to use, keyed by
// name against this test file's own predefined macros (it is compiled with the build's flags), so a table
// out of order fails; what is reported missing for a CPU that lacks everything, nothing, or one extension;
// and the message a user sees.
#include "apps/cpu_support.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace asyncdp::apps {
namespace {

struct Expected {
  const char* name;
  bool defined;
};

// What the compiler that compiles the build says it targets, feature by feature.
const Expected kMacros[] = {
#ifdef __SSE4_2__
    {"sse4.2", true},
#else
    {"sse4.2", false},
#endif
#ifdef __POPCNT__
    {"popcnt", true},
#else
    {"popcnt", false},
#endif
#ifdef __AVX__
    {"avx", true},
#else
    {"avx", false},
#endif
#ifdef __AVX2__
    {"avx2", true},
#else
    {"avx2", false},
#endif
#ifdef __FMA__
    {"fma", true},
#else
    {"fma", false},
#endif
#ifdef __BMI__
    {"bmi", true},
#else
    {"bmi", false},
#endif
#ifdef __BMI2__
    {"bmi2", true},
#else
    {"bmi2", false},
#endif
#ifdef __AVX512F__
    {"avx512f", true},
#else
    {"avx512f", false},
#endif
#ifdef __AVX512DQ__
    {"avx512dq", true},
#else
    {"avx512dq", false},
#endif
#ifdef __AVX512CD__
    {"avx512cd", true},
#else
    {"avx512cd", false},
#endif
#ifdef __AVX512BW__
    {"avx512bw", true},
#else
    {"avx512bw", false},
#endif
#ifdef __AVX512VL__
    {"avx512vl", true},
#else
    {"avx512vl", false},
#endif
#ifdef __AVX512IFMA__
    {"avx512ifma", true},
#else
    {"avx512ifma", false},
#endif
#ifdef __AVX512VBMI__
    {"avx512vbmi", true},
#else
    {"avx512vbmi", false},
#endif
#ifdef __AVX512VNNI__
    {"avx512vnni", true},
#else
    {"avx512vnni", false},
#endif
};

std::vector<std::string> Missing(CpuHasFeature has) {
  const char* missing[kCpuFeatureCount];
  const int n = MissingCpuFeatures(has, missing, kCpuFeatureCount);
  return {missing, missing + n};
}

TEST(CpuSupport, TheRecordedExtensionsAreTheOnesTheCompilerTargets) {
  ASSERT_EQ(std::size(kMacros), static_cast<size_t>(kCpuFeatureCount));
  for (const Expected& e : kMacros) {
    int found = -1;
    for (int f = 0; f < kCpuFeatureCount; ++f) {
      if (std::string(CpuFeatureName(f)) == e.name) found = f;
    }
    ASSERT_GE(found, 0) << e.name;
    EXPECT_EQ(CpuFeatureBuiltFor(found), e.defined) << e.name;
  }
}

TEST(CpuSupport, ACpuLackingEverythingMissesExactlyWhatTheBuildUses) {
  std::vector<std::string> expected;
  for (const Expected& e : kMacros) {
    if (e.defined) expected.emplace_back(e.name);
  }
  EXPECT_EQ(Missing([](int) { return false; }), expected);
  EXPECT_TRUE(Missing([](int) { return true; }).empty());
  // One extension absent: only it is named (when the build uses it).
  const std::vector<std::string> no_avx2 = Missing([](int f) { return f != kAvx2; });
  EXPECT_EQ(no_avx2,
            CpuFeatureBuiltFor(kAvx2) ? std::vector<std::string>{"avx2"} : std::vector<std::string>{});
  // Never more than the room given.
  const char* one[1];
  EXPECT_LE(MissingCpuFeatures([](int) { return false; }, one, 1), 1);
}

TEST(CpuSupport, TheMessageNamesWhatIsMissingAndTheCure) {
  const char* missing[] = {"avx512f", "avx512bw"};
  char buffer[1024];
  const std::string message = UnsupportedCpuMessage(missing, 2, buffer, static_cast<int>(sizeof buffer));
  EXPECT_EQ(message.rfind("error: ", 0), 0u) << message;
  EXPECT_NE(message.find("(avx512f, avx512bw)"), std::string::npos) << message;
  EXPECT_NE(message.find("-DASYNCDP_NATIVE=OFF"), std::string::npos) << message;
  EXPECT_EQ(message.back(), '\n');
  // A small buffer truncates and stays NUL-terminated.
  char small[16];
  EXPECT_EQ(std::string(UnsupportedCpuMessage(missing, 2, small, static_cast<int>(sizeof small))).size(),
            15u);
}

TEST(CpuSupport, TheCpuThatBuiltTheTestsRunsThem) {
  // The test binary is built where it runs (./run_tests.sh): its load-time check found nothing missing.
  EXPECT_EQ(UnsupportedCpu(), nullptr);
}

}  // namespace
}  // namespace asyncdp::apps
