// Building blocks of the virtual runtime's event queue: the commit-order key and slot pools for payloads.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/check.h"

namespace asyncdp::sim {

// The commit order (time, client, sequence) packed into one unsigned 128-bit key so the heap compares
// without branches: a non-negative finite double orders like its bit pattern; the client takes the high
// kClientBits of the low word and the sequence the rest.
inline constexpr int kClientBits = 24;
inline constexpr uint64_t kMaxClients = uint64_t{1} << kClientBits;
inline constexpr uint64_t kMaxSequence = uint64_t{1} << (64 - kClientBits);

using EventKey = unsigned __int128;

inline EventKey MakeKey(double time, int64_t client, uint64_t sequence) {
  ASYNCDP_CHECK(time >= 0.0 && std::isfinite(time));
  ASYNCDP_CHECK(static_cast<uint64_t>(client) < kMaxClients && sequence < kMaxSequence);
  const uint64_t low = (static_cast<uint64_t>(client) << (64 - kClientBits)) | sequence;
  return (static_cast<EventKey>(std::bit_cast<uint64_t>(time + 0.0)) << 64) | low;
}

inline double TimeOf(EventKey key) { return std::bit_cast<double>(static_cast<uint64_t>(key >> 64)); }
inline int64_t ClientOf(EventKey key) { return static_cast<int64_t>(static_cast<uint64_t>(key) >> (64 - kClientBits)); }

// Values parked while their events are in the heap; slots are reused, so steady state allocates nothing.
template <typename T>
class SlotPool {
 public:
  int64_t Put(T value) {
    const int64_t slot = Acquire();
    items_[slot] = std::move(value);
    return slot;
  }
  // A slot holding whatever its last user left there (to reuse its buffers).
  int64_t Acquire() {
    if (free_.empty()) {
      items_.emplace_back();
      return static_cast<int64_t>(items_.size()) - 1;
    }
    const int64_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  T& operator[](int64_t slot) { return items_[slot]; }
  void Free(int64_t slot) { free_.push_back(slot); }

 private:
  std::vector<T> items_;
  std::vector<int64_t> free_;
};

}  // namespace asyncdp::sim
