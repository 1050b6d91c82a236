// The assumptions a reported epsilon rests on. Samplers (core/sampling.h) name the model they implement;
// accountants (core/accounting/) state which models they are valid for; every output carries both.
#pragma once

#include <string_view>

namespace asyncdp {

// How a round's mini-batch is drawn from a client's N records.
enum class SamplingModel {
  kPoisson,                      // each record independently with probability q = s_i / N (batch size varies)
  kFixedSizeWithoutReplacement,  // exactly s_i distinct records, uniformly (the paper's pseudocode)
  kShuffle,                      // disjoint batches from a fresh permutation each epoch
  // Random allocation ("balls in bins", random check-ins): in each window of T rounds every record joins
  // exactly k of them, chosen uniformly (Feldman & Shenfeld 2025; Balle et al. 2020 with p0 = 1).
  kRandomAllocation,
};

// Which pairs of data sets count as neighbours.
enum class NeighbourRelation {
  kAddRemove,   // one data set has one extra record (the Proactive-DP paper, Def. 2.1)
  kReplaceOne,  // one record replaced by another (sensitivity 2C for a clipped sum)
};

constexpr std::string_view ToString(SamplingModel m) {
  switch (m) {
    case SamplingModel::kPoisson: return "poisson";
    case SamplingModel::kFixedSizeWithoutReplacement: return "fixed_size_without_replacement";
    case SamplingModel::kShuffle: return "shuffle";
    case SamplingModel::kRandomAllocation: return "random_allocation";
  }
  return "?";
}

constexpr std::string_view ToString(NeighbourRelation r) {
  switch (r) {
    case NeighbourRelation::kAddRemove: return "add_remove";
    case NeighbourRelation::kReplaceOne: return "replace_one";
  }
  return "?";
}

// The neighbour relation under which a sampler's output is analysed by our accountants: Poisson
// subsampling is analysed under add/remove (Mironov et al. 2019); fixed-size sampling without replacement
// under replace-one (Wang, Balle, Kasiviswanathan 2019); shuffling has no amplification bound here and is
// accounted as full-batch participation per epoch under replace-one; random allocation under add/remove
// (zero-out, Feldman & Shenfeld 2025).
constexpr NeighbourRelation NaturalNeighbours(SamplingModel m) {
  return m == SamplingModel::kPoisson || m == SamplingModel::kRandomAllocation ? NeighbourRelation::kAddRemove
                                                                                : NeighbourRelation::kReplaceOne;
}

}  // namespace asyncdp
