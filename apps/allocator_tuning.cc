#include "apps/allocator_tuning.h"

#include <cstdlib>  // defines __GLIBC__ (via <features.h>) before it is tested

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace asyncdp::apps {

void TuneAllocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

}  // namespace asyncdp::apps
