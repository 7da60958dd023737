// CPU affinity: which cores a pipeline's threads may run on.
//
// Why: a training loop's Python thread launches the model's kernels, and on a GPU-bound step
// any delay of that thread leaves the GPU idle. On the H100 box, ResNet-50's training stream was
// busy for the same 51.6-51.7 ms per step with and without stoker, yet steps took longer; keeping
// stoker's threads off the training thread's core (and that thread on it) won back about 5% on
// one instance (docs/findings.md).
#pragma once

#include <string>
#include <vector>

namespace stoker {

// The cores the calling thread may run on, ascending (Linux; elsewhere empty).
std::vector<int> thread_affinity();

// Names the calling thread ("stoker-pool3": at most 15 characters on Linux, longer names are
// cut), so top -H, gdb, perf and bench/fed_gap.py tell stoker's threads from the framework's.
void set_thread_name(const std::string& name);
std::string thread_name();  // the calling thread's name ("" where names are not supported)

// "0-3,8,10-11": cores as a short list, for messages and reports.
std::string format_cores(const std::vector<int>& cores);

// Restricts the calling thread to `cores` while it lives, then gives the thread back its own
// cores: every thread started meanwhile (and the threads those start later) inherits `cores`.
// Empty `cores`: changes nothing. Throws ValueError naming `what` when a core does not exist or
// may not run this process's threads (a container's cpuset), so a typo never goes unnoticed.
class ScopedAffinity {
 public:
  ScopedAffinity(const std::vector<int>& cores, const std::string& what);
  ~ScopedAffinity();
  ScopedAffinity(const ScopedAffinity&) = delete;
  ScopedAffinity& operator=(const ScopedAffinity&) = delete;

 private:
  std::vector<int> saved_;
};

}  // namespace stoker
