#include "core/accounting/pld/composed_pld_cache.h"

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
  return entries_.Get(
      Key{schedule, sampling, options},
      [](const Key& made, const Key& wanted) {
        return made.sampling == wanted.sampling && made.schedule == wanted.schedule &&
               Serves(made.options, wanted.options);
      },
      [&] { return std::make_shared<const ComposedPld>(schedule, sampling, options); });
}

ComposedPldCache& SharedComposedPldCache() {
  static ComposedPldCache cache;
  return cache;
}

}  // namespace asyncdp::accounting
