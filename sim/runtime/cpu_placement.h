// Starting worker threads on CPUs of their own: a hint at start, not a binding.
//
// Why: on a 2-vCPU Intel Xeon VM (family 6 model 207) Linux often started the threads runtime's second
// worker on its creator's CPU; the two then shared one CPU for 1.5–4 ms until the load balancer moved one of
// them, an eighth to a third of a 12 ms Table 3 run with the other CPU idle (BENCHMARKS.md, Simulator,
// "Where a worker starts"). So each started worker moves itself, once, to a CPU the others do not start on,
// then restores the process's affinity mask at once: the kernel may still move it (other processes, more
// workers than CPUs, a cpuset that changes), and it never stays bound — several asyncdp processes on one
// machine are not piled onto the same CPUs, unlike a fixed binding.
//
// Where the kernel refuses (a sandbox without sched_setaffinity, a mask over 1024 CPUs) or the process may
// run on one CPU only, nothing moves and the kernel's placement stands; no result depends on placement.
#pragma once

#include <vector>

namespace asyncdp::sim {

class CpuPlacement {
 public:
  // The calling thread's allowed CPUs, its current CPU first (worker 0 is the calling thread).
  static CpuPlacement OfCallingThread();
  // From an explicit list (tests); `cpus[0]` is the creator's CPU.
  explicit CpuPlacement(std::vector<int> cpus) : cpus_(std::move(cpus)) {}

  // The CPU worker `worker` starts on, or −1 (one CPU only, or more workers than CPUs: the kernel places).
  int CpuFor(int worker) const;
  // Called by worker `worker` as its first action: moves the calling thread to CpuFor(worker), then gives it
  // back the affinity mask it had. Returns whether it moved.
  bool MoveCallingThread(int worker) const;

  const std::vector<int>& cpus() const { return cpus_; }

 private:
  std::vector<int> cpus_;
};

}  // namespace asyncdp::sim
