#include "sim/plan_table.h"

#include <bit>
#include <limits>

#include "core/check.h"

namespace asyncdp::sim {
namespace {

// FNV-1a over 64-bit words.
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void Add(uint64_t word) {
    h ^= word;
    h *= 1099511628211ull;
  }
};

}  // namespace

PlanTable::PlanTable(const std::vector<RoundPlan>& plans) {
  index_.reserve(plans.size());
  for (const RoundPlan& plan : plans) push_back(plan);
}

uint64_t PlanTable::Hash(const RoundPlan& plan) {
  Fnv fnv;
  fnv.Add(static_cast<uint64_t>(plan.n_records));
  fnv.Add(std::bit_cast<uint64_t>(plan.allocation_rate));
  for (int64_t s : plan.sample_sizes) fnv.Add(static_cast<uint64_t>(s));
  for (double eta : plan.step_sizes) fnv.Add(std::bit_cast<uint64_t>(eta));
  for (double sigma : plan.noise_multipliers) fnv.Add(std::bit_cast<uint64_t>(sigma));
  return fnv.h;
}

void PlanTable::push_back(const RoundPlan& plan) {
  const uint64_t hash = Hash(plan);
  const auto [first, last] = by_hash_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    if (distinct_[it->second] == plan) {
      index_.push_back(it->second);
      return;
    }
  }
  ASYNCDP_CHECK(distinct_.size() < std::numeric_limits<uint32_t>::max());
  const auto slot = static_cast<uint32_t>(distinct_.size());
  distinct_.push_back(plan);
  by_hash_.emplace(hash, slot);
  index_.push_back(slot);
}

void PlanTable::Reindex() {
  by_hash_.clear();
  for (size_t k = 0; k < distinct_.size(); ++k) by_hash_.emplace(Hash(distinct_[k]), static_cast<uint32_t>(k));
}

}  // namespace asyncdp::sim
