#include "core/accounting/pld/composed_pld_cache.h"

#include <utility>

namespace asyncdp::accounting {
namespace {

// Whether a composition made with `made` answers a request with `wanted`: the same options, except that
// one holding the lower bound also serves a request without it (the upper bound is composed the same way).
bool Serves(const PldOptions& made, const PldOptions& wanted) {
  if (made == wanted) return true;
  PldOptions without_lower = made;
  without_lower.compute_lower_bound = false;
  return made.compute_lower_bound && !wanted.compute_lower_bound && without_lower == wanted;
}

}  // namespace

std::shared_ptr<const ComposedPld> ComposedPldCache::Get(const Schedule& schedule, SamplingModel sampling,
                                                         const PldOptions& options) {
  {
    const std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->sampling == sampling && it->schedule == schedule && Serves(it->options, options)) {
        Entry hit = std::move(*it);
        entries_.erase(it);
        entries_.push_back(std::move(hit));
        return entries_.back().pld;
      }
    }
  }
  // Composed outside the lock (slow); two threads asking at once may both compose, with the same result.
  auto composed = std::make_shared<const ComposedPld>(schedule, sampling, options);
  const std::lock_guard lock(mutex_);
  if (entries_.size() == kEntries) entries_.erase(entries_.begin());
  entries_.push_back({schedule, sampling, options, composed});
  return composed;
}

ComposedPldCache& SharedComposedPldCache() {
  static ComposedPldCache cache;
  return cache;
}

}  // namespace asyncdp::accounting
