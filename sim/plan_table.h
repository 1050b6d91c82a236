// Every client's a-priori RoundPlan (sim/round_plan.h), each distinct plan stored once. Clients with the
// same N_c and schedule have the same plan, so 10^6 one-record clients keep one plan and one 4-byte index
// each instead of 10^6 copies of three T-long vectors (≈ 340 bytes per client at T = 10): every MPI rank
// holds every client's public plan (docs/mpi.md, "Memory per rank").
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "sim/round_plan.h"

namespace asyncdp::sim {

class PlanTable {
 public:
  PlanTable() = default;
  // Implicit: a list of plans (tests, small callers) is a table.
  PlanTable(const std::vector<RoundPlan>& plans);  // NOLINT(google-explicit-constructor)

  size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  const RoundPlan& operator[](size_t client) const { return distinct_[index_[client]]; }
  const RoundPlan& front() const { return (*this)[0]; }
  const RoundPlan& back() const { return (*this)[size() - 1]; }
  void reserve(size_t clients) { index_.reserve(clients); }

  // Appends the next client's plan, sharing the stored copy of an equal plan.
  void push_back(const RoundPlan& plan);

  // Applies `change` (the same for every client, e.g. setting σ_i) to each distinct plan once: clients that
  // shared a plan still share it.
  template <typename Change>
  void ForEachDistinct(Change change) {
    for (RoundPlan& plan : distinct_) change(plan);
    Reindex();
  }
  size_t distinct() const { return distinct_.size(); }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = RoundPlan;
    using difference_type = std::ptrdiff_t;
    using pointer = const RoundPlan*;
    using reference = const RoundPlan&;
    const_iterator() = default;
    const_iterator(const PlanTable* table, size_t client) : table_(table), client_(client) {}
    reference operator*() const { return (*table_)[client_]; }
    pointer operator->() const { return &(*table_)[client_]; }
    const_iterator& operator++() {
      ++client_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++client_;
      return before;
    }
    bool operator==(const const_iterator& other) const { return client_ == other.client_; }

   private:
    const PlanTable* table_ = nullptr;
    size_t client_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

 private:
  static uint64_t Hash(const RoundPlan& plan);
  void Reindex();

  std::vector<RoundPlan> distinct_;
  std::vector<uint32_t> index_;  // client -> distinct_
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
};

}  // namespace asyncdp::sim
