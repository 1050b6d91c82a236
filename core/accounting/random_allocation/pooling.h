// Pooling atoms of a likelihood-ratio law onto a grid by post-processing: the dominated (lower-bound)
// counterpart of spreading each atom onto its two neighbours (docs/random_allocation.md §5c).
//
// An atom is a set of outputs with one value x (a partial sum S of the Y_i, or the likelihood ratio V
// itself) and Q-mass q. Reporting a run of consecutive atoms as one output is a post-processing of the
// mechanism (a Blackwell garbling): the pooled output's value is the Q-weighted mean of the run (for V:
// P(pool) / Q(pool); for a partial sum: E_Q[S | pool], which enters V linearly). Splitting an atom at
// random between two runs is also a post-processing, as both parts keep its value. So if every run's mean
// is exactly a grid point, the pooled law lives on the grid and every hockey-stick divergence of it, alone
// or composed, is at most the true one (data processing).
#pragma once

#include <algorithm>
#include <vector>

namespace asyncdp::accounting {

struct Atom {
  double x = 0.0;  // value
  double q = 0.0;  // Q-mass
};

// The last run of PoolUp, which never reached its goal (mass 0 when none is left over).
struct PoolRest {
  double goal = 0.0;
  double mass = 0.0;
  double mean = 0.0;  // below goal
};

// Pools `ascending` (atoms in increasing x) into runs, each starting at an atom x_first and taking atoms
// (the last one possibly in part) until its mean rises exactly to target(x_first) >= x_first.
// emit(target, mass) receives each finished run; the return value is the last run. The caller drops it, or
// rounds its value up where that only lowers the divergence it bounds.
template <class Target, class Emit>
PoolRest PoolUp(const std::vector<Atom>& ascending, Target target, Emit emit) {
  double mass = 0.0;
  double deficit = 0.0;  // sum of q (G - x) over the run: > 0 while its mean is below G
  double goal = 0.0;
  for (const Atom& atom : ascending) {
    double rest = atom.q;
    while (rest > 0.0) {
      if (mass == 0.0) {
        // A new run starts here (the whole remainder of the atom goes in: its mean is its value, and a
        // target within round-off below it must not emit an empty run).
        goal = target(atom.x);
        mass = rest;
        deficit = rest * std::max(goal - atom.x, 0.0);
        rest = 0.0;
        break;
      }
      const double gap = goal - atom.x;
      if (gap >= 0.0) {
        mass += rest;
        deficit += rest * gap;
        rest = 0.0;
        break;
      }
      // The part f of this atom above the goal that brings the run's mean to it exactly.
      const double f = std::clamp(deficit / -gap, 0.0, rest);
      if (f < rest) {
        emit(goal, mass + f);
        mass = 0.0;
        deficit = 0.0;
        rest -= f;
      } else {
        mass += rest;
        deficit += rest * gap;
        rest = 0.0;
      }
    }
  }
  return {goal, mass, mass > 0.0 ? goal - deficit / mass : 0.0};
}

}  // namespace asyncdp::accounting
