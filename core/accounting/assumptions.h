// The assumptions behind a reported epsilon. Every number an accountant returns carries one of these, so a
// user never sees an epsilon without its sampling model, neighbour relation, accountant and delta.
#pragma once

#include <string>
#include <string_view>

#include "core/privacy_assumptions.h"

namespace asyncdp::accounting {

// Which accountant produced a number.
enum class AccountantKind {
  kRdp,          // Renyi DP of the subsampled Gaussian (Mironov, Talwar, Zhang 2019; WBK19 for fixed size)
  kPld,          // privacy-loss distribution composed by FFT (Koskela et al. 2020; Doroshenko et al. 2022)
  kGdp,          // mu-GDP central-limit approximation (Dong, Roth, Su 2022; Bu et al. 2020)
  kProactive,    // closed form of the Proactive-DP paper, Theorem 3.1 / B.4 (relation (6))
  kComposition,  // generic (eps0, delta0) composition theorems
  kRandomAllocation,  // random allocation / check-ins, Feldman & Shenfeld 2025 (random_allocation/)
};

// What kind of statement a number is.
enum class BoundKind {
  kUpperBound,     // a guarantee: the mechanism is (epsilon, delta)-DP
  kLowerBound,     // the true epsilon is at least this (an optimistic discretisation)
  kApproximation,  // an asymptotic estimate; never a guarantee (GDP / CLT)
};

std::string_view ToString(AccountantKind kind);
std::string_view ToString(BoundKind kind);

// Parses "rdp", "pld", "gdp", "random_allocation" (the CLI and config spelling); throws ConfigError at `key_path` otherwise.
AccountantKind ParseAccountantKind(std::string_view text, std::string_view key_path);

struct Assumptions {
  AccountantKind accountant = AccountantKind::kRdp;
  BoundKind bound = BoundKind::kUpperBound;
  SamplingModel sampling = SamplingModel::kPoisson;
  NeighbourRelation neighbours = NeighbourRelation::kAddRemove;
  double delta = 0.0;
  // Free text naming the exact method, e.g. "MTZ19 Poisson subsampled Gaussian, CKS20 conversion".
  std::string method;

  // One line, e.g. "rdp upper_bound: sampling=poisson neighbours=add_remove delta=1e-05 (method)".
  std::string ToString() const;
};

}  // namespace asyncdp::accounting
