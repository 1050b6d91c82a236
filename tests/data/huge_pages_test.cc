#include "data/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace asyncdp::data {
namespace {

// The transparent-huge-page mode in effect ("always", "madvise" or "never"); empty when unknown.
std::string ThpMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('['), close = line.find(']');
  return open == std::string::npos || close == std::string::npos ? "" : line.substr(open + 1, close - open - 1);
}

// kB of AnonHugePages in the mapping of /proc/self/smaps that contains `address`.
int64_t AnonHugeKbAt(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto target = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= target && target < end;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stoll(line.substr(14));
  }
  return -1;
}

TEST(HugePages, ResizeKeepsTheContentAndZeroFillsTheRest) {
  std::string s = "header";
  ResizeWithHugePages(s, size_t{9} << 20);  // grows: the storage is reallocated and advised
  ASSERT_EQ(s.size(), size_t{9} << 20);
  EXPECT_EQ(s.substr(0, 6), "header");
  EXPECT_EQ(s.find_first_not_of('\0', 6), std::string::npos);
  s[s.size() - 1] = 'x';
  ResizeWithHugePages(s, 3);  // shrinks like resize
  EXPECT_EQ(s, "hea");
  ResizeWithHugePages(s, size_t{20} << 20);
  EXPECT_EQ(s.substr(0, 3), "hea");
  EXPECT_EQ(s[(size_t{9} << 20) - 1], '\0');  // the byte written before the shrink is gone, as with resize
}

TEST(HugePages, AdviceOnSmallOrEmptyBuffersIsANoOp) {
  AdviseHugePages(nullptr, size_t{64} << 20);
  char small[4096] = {1};
  AdviseHugePages(small, sizeof(small));
  EXPECT_EQ(small[0], 1);
  std::string odd(size_t{5} << 20, 'a');  // unaligned start: only the aligned interior is advised
  AdviseHugePages(odd.data() + 1, odd.size() - 1);
  EXPECT_EQ(odd.find_first_not_of('a'), std::string::npos);
}

// Where the kernel offers huge pages on request, an advised buffer touched afterwards is backed by them:
// the page-fault saving the loaders rely on (docs in data/huge_pages.h) actually happens.
TEST(HugePages, AdvisedBufferIsBackedByHugePagesWhereTheKernelOffersThem) {
  const std::string mode = ThpMode();
  if (mode != "madvise" && mode != "always") GTEST_SKIP() << "transparent huge pages: '" << mode << "'";
  constexpr size_t kBytes = size_t{64} << 20;  // above glibc's largest mmap threshold (32 MiB)
  std::unique_ptr<char[]> buffer(new char[kBytes]);  // untouched: malloc maps it fresh (mmap)
  AdviseHugePages(buffer.get(), kBytes);
  for (size_t i = 0; i < kBytes; i += 4096) buffer[i] = 1;  // first touch
  EXPECT_GE(AnonHugeKbAt(buffer.get() + kBytes / 2), 2048);
}

}  // namespace
}  // namespace asyncdp::data
