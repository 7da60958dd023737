#include "stoker/core/affinity.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "stoker/core/error.hpp"

namespace stoker {

namespace {

#ifdef __linux__
std::vector<int> cores_of(const cpu_set_t& set) {
  std::vector<int> cores;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cores.push_back(c);
  return cores;
}

bool set_thread_affinity(const std::vector<int>& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0;  // 0: the calling thread
}
#endif

}  // namespace

void set_thread_name(const std::string& name) {
#ifdef __linux__
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());  // 16 bytes with the NUL
#else
  (void)name;
#endif
}

std::string thread_name() {
#ifdef __linux__
  char buf[16] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) == 0) return buf;
#endif
  return "";
}

std::vector<int> thread_affinity() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  return cores_of(set);
#else
  return {};
#endif
}

std::string format_cores(const std::vector<int>& cores) {
  std::string out;
  for (size_t i = 0; i < cores.size();) {
    size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cores[i]);
    if (j > i) {
      out += j == i + 1 ? ',' : '-';
      out += std::to_string(cores[j]);
    }
    i = j + 1;
  }
  return out;
}

ScopedAffinity::ScopedAffinity(const std::vector<int>& cores, const std::string& what) {
  if (cores.empty()) return;
#ifdef __linux__
  const long configured = sysconf(_SC_NPROCESSORS_CONF);
  for (int c : cores)
    STOKER_ENFORCE(c >= 0 && c < CPU_SETSIZE && c < configured, ValueError, what, ": core ", c,
                   " does not exist (this machine's cores are 0-", configured - 1, ")");
  std::vector<int> wanted = cores;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  saved_ = thread_affinity();
  // The kernel keeps only the cores this process may use (its cpuset): read back what it took.
  const bool ok = set_thread_affinity(wanted);
  const std::vector<int> got = ok ? thread_affinity() : std::vector<int>{};
  if (got != wanted) {
    if (ok) set_thread_affinity(saved_);
    std::vector<int> refused;
    std::set_difference(wanted.begin(), wanted.end(), got.begin(), got.end(),
                        std::back_inserter(refused));
    saved_.clear();
    throw ValueError(detail::concat(what, ": this process may not run on core(s) ",
                                    format_cores(refused), " (offline, or outside its cpuset)"));
  }
#else
  STOKER_ENFORCE(false, ValueError, what, ": CPU affinity is supported on Linux only");
#endif
}

ScopedAffinity::~ScopedAffinity() {
#ifdef __linux__
  if (!saved_.empty()) set_thread_affinity(saved_);
#endif
}

}  // namespace stoker
