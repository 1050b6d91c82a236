#include "sim/runtime/cpu_placement.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace asyncdp::sim {

CpuPlacement CpuPlacement::OfCallingThread() {
  std::vector<int> cpus;
#if defined(__linux__)
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return CpuPlacement({});
  const int current = sched_getcpu();
  if (current >= 0 && current < CPU_SETSIZE && CPU_ISSET(current, &mask)) cpus.push_back(current);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask) && cpu != current) cpus.push_back(cpu);
  }
#endif
  return CpuPlacement(std::move(cpus));
}

int CpuPlacement::CpuFor(int worker) const {
  if (cpus_.size() < 2 || worker < 0 || static_cast<size_t>(worker) >= cpus_.size()) return -1;
  return cpus_[static_cast<size_t>(worker)];
}

bool CpuPlacement::MoveCallingThread(int worker) const {
  const int cpu = CpuFor(worker);
  if (cpu < 0) return false;
#if defined(__linux__)
  cpu_set_t before;
  CPU_ZERO(&before);
  if (sched_getaffinity(0, sizeof(before), &before) != 0) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  // Setting a one-CPU mask migrates the thread there before the call returns; restoring the old mask keeps
  // it there (the load balancer does not move a lone thread off its CPU) without binding it.
  const bool moved = sched_setaffinity(0, sizeof(one), &one) == 0;
  if (moved) sched_setaffinity(0, sizeof(before), &before);
  return moved;
#else
  return false;
#endif
}

}  // namespace asyncdp::sim
