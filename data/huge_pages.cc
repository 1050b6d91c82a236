#include "data/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace asyncdp::data {

void AdviseHugePages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (data == nullptr || bytes < 2 * kHuge) return;  // at most one whole huge page inside: not worth a call
  const auto begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advisory
#else
  (void)data;
  (void)bytes;
#endif
}

void ResizeWithHugePages(std::string& s, size_t size) {
  if (size > s.capacity()) {
    s.reserve(size);
    AdviseHugePages(s.data(), s.capacity());
  }
  s.resize(size);
}

}  // namespace asyncdp::data
