// Happens-before annotations for ThreadSanitizer, for hand-offs made through libraries TSan cannot see
// into (Debian's libtbb is built without -fsanitize=thread, so the ordering its task_group::run/wait
// provide is invisible and TSan would report the hand-off as a race). Without TSan they compile to nothing.
//
// Use in pairs on the same address: AnnotateHappensBefore(p) on the releasing side before the hand-off,
// AnnotateHappensAfter(p) on the acquiring side after it.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define ASYNCDP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ASYNCDP_TSAN 1
#endif
#endif

#ifdef ASYNCDP_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace asyncdp::sim {

inline void AnnotateHappensBefore([[maybe_unused]] const void* address) {
#ifdef ASYNCDP_TSAN
  __tsan_release(const_cast<void*>(address));
#endif
}

inline void AnnotateHappensAfter([[maybe_unused]] const void* address) {
#ifdef ASYNCDP_TSAN
  __tsan_acquire(const_cast<void*>(address));
#endif
}

}  // namespace asyncdp::sim
