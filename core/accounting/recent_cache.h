// The last few results of an expensive pure function, shared by every caller in the process: a PLD
// composition (pld/composed_pld_cache.h), a random-allocation window (random_allocation/allocation_pld.h).
// Values are immutable and shared; `serves(stored key, wanted key)` says whether a stored value answers a
// request (equality, or more when one result contains another). A hit becomes the most recent entry; a
// miss is made outside the lock (two threads asking at once may both make it, with the same result) and
// evicts the least recent. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace asyncdp::accounting {

template <typename Key, typename Value>
class RecentCache {
 public:
  explicit RecentCache(size_t capacity) : capacity_(capacity) {}

  template <typename Serves, typename Make>
  std::shared_ptr<const Value> Get(const Key& key, Serves&& serves, Make&& make) {
    {
      const std::lock_guard lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (serves(it->first, key)) {
          auto hit = std::move(*it);
          entries_.erase(it);
          entries_.push_back(std::move(hit));
          return entries_.back().second;
        }
      }
    }
    std::shared_ptr<const Value> made = make();
    const std::lock_guard lock(mutex_);
    if (entries_.size() >= capacity_) entries_.erase(entries_.begin());
    entries_.emplace_back(key, made);
    return made;
  }

  // Forgets every entry (values still held by callers stay alive): what a fresh process sees, for
  // benchmarks that time a cold computation in a loop.
  void Clear() {
    const std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::vector<std::pair<Key, std::shared_ptr<const Value>>> entries_;  // most recent last
};

}  // namespace asyncdp::accounting
