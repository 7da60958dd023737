#include "stoker/core/mapping_guard.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "stoker/core/error.hpp"

namespace stoker {
namespace {

// The registry the SIGBUS handler reads: fixed slots of atomics (a handler may not lock or
// allocate). A slot is live while `end` is non-zero; `owner` claims it.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<const MappingGuard*> owner{nullptr};
  std::atomic<bool> damaged{false};
  std::atomic<bool> reported{false};
};
Slot g_slots[MappingGuard::kMaxGuarded];
std::atomic<int> g_used{0};  // slots at and above this were never claimed
std::atomic<uint64_t> g_damage{0};
uintptr_t g_page = 4096;
std::mutex g_release;  // a guard going away vs take_new_damage() reading its path
struct sigaction g_previous {};

void forward(int sig, siginfo_t* info, void* context) {
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    ::sigaction(SIGBUS, &g_previous, nullptr);  // the fault repeats with the default action
  }
}

// Maps zero pages over a guarded mapping from the faulting page to its end (everything past a
// truncation faults alike), so that the access that faulted reads zeros when it resumes.
void on_sigbus(int sig, siginfo_t* info, void* context) {
  if (info != nullptr && info->si_code == BUS_ADRERR) {
    const auto a = reinterpret_cast<uintptr_t>(info->si_addr);
    const int used = g_used.load(std::memory_order_acquire);
    for (int k = 0; k < used; ++k) {
      Slot& s = g_slots[k];
      const uintptr_t e = s.end.load(std::memory_order_acquire);
      const uintptr_t b = s.begin.load(std::memory_order_acquire);
      if (e == 0 || a < b || a >= e) continue;
      const uintptr_t page = a & ~(g_page - 1);
      void* r = ::mmap(reinterpret_cast<void*>(page), e - page, PROT_READ,
                       MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
      if (r == MAP_FAILED) break;
      s.damaged.store(true, std::memory_order_release);
      g_damage.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
  }
  forward(sig, info, context);
}

// Installs on_sigbus unless it is the current handler (another library may have replaced it
// since: it is put back in front, forwarding to that one).
void ensure_handler() {
  static std::mutex m;
  std::lock_guard lock(m);
  struct sigaction current {};
  ::sigaction(SIGBUS, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigbus) return;
  g_page = uintptr_t(::sysconf(_SC_PAGESIZE));
  struct sigaction ours {};
  ours.sa_sigaction = on_sigbus;
  ours.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&ours.sa_mask);
  g_previous = current;
  ::sigaction(SIGBUS, &ours, nullptr);
}

// The lowest free slot: the slots scanned (by the handler, by every batch view's check) stay as
// many as the most mappings ever live at once, not as many as were ever made.
int claim_slot(const MappingGuard* owner) {
  for (int k = 0; k < MappingGuard::kMaxGuarded; ++k) {
    const MappingGuard* none = nullptr;
    if (!g_slots[k].owner.compare_exchange_strong(none, owner, std::memory_order_acq_rel))
      continue;
    int used = g_used.load(std::memory_order_relaxed);
    while (used < k + 1 &&
           !g_used.compare_exchange_weak(used, k + 1, std::memory_order_acq_rel)) {
    }
    return k;
  }
  return -1;
}

const Slot* overlapping(const void* p, size_t n, bool damaged_only) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t z = a + (n > 0 ? n : 1);
  const int used = g_used.load(std::memory_order_acquire);
  for (int k = 0; k < used; ++k) {
    const Slot& s = g_slots[k];
    if (damaged_only && !s.damaged.load(std::memory_order_acquire)) continue;
    const uintptr_t e = s.end.load(std::memory_order_acquire);
    if (e != 0 && a < e && z > s.begin.load(std::memory_order_acquire)) return &s;
  }
  return nullptr;
}

}  // namespace

MappingGuard::MappingGuard(const void* addr, size_t length, std::string path, int fd)
    : path_(std::move(path)), fd_(fd), length_(length) {
  if (addr == nullptr || length == 0) return;
  ensure_handler();
  slot_ = claim_slot(this);
  if (slot_ < 0) return;
  Slot& s = g_slots[slot_];
  s.damaged.store(false, std::memory_order_relaxed);
  s.reported.store(false, std::memory_order_relaxed);
  s.begin.store(reinterpret_cast<uintptr_t>(addr), std::memory_order_release);
  s.end.store(reinterpret_cast<uintptr_t>(addr) + length, std::memory_order_release);
}

MappingGuard::~MappingGuard() {
  if (slot_ < 0) return;
  std::lock_guard lock(g_release);
  Slot& s = g_slots[slot_];
  s.end.store(0, std::memory_order_release);
  s.begin.store(0, std::memory_order_release);
  s.owner.store(nullptr, std::memory_order_release);
}

bool MappingGuard::damaged() const {
  return slot_ >= 0 && g_slots[slot_].damaged.load(std::memory_order_acquire);
}

void MappingGuard::check_size() const {
  STOKER_ENFORCE(!damaged(), IOError, "'", path_, "' shrank while it was mapped: its bytes past ",
                 "the new end are gone (read as zeros); the file changed under the pipeline");
  if (fd_ < 0) return;
  struct stat st {};
  STOKER_ENFORCE(::fstat(fd_, &st) == 0, IOError, "cannot stat '", path_, "': ",
                 std::strerror(errno));
  STOKER_ENFORCE(size_t(st.st_size) >= length_, IOError, "'", path_, "' shrank to ",
                 int64_t(st.st_size), " bytes since it was mapped (", length_,
                 "): its bytes past the new end are gone; the file changed under the pipeline");
}

uint64_t mapping_damage_count() { return g_damage.load(std::memory_order_acquire); }

const MappingGuard* damaged_mapping(const void* p, size_t n) {
  if (mapping_damage_count() == 0) return nullptr;
  const Slot* s = overlapping(p, n, true);
  return s ? s->owner.load(std::memory_order_acquire) : nullptr;
}

const MappingGuard* guarded_mapping(const void* p, size_t n) {
  const Slot* s = overlapping(p, n, false);
  return s ? s->owner.load(std::memory_order_acquire) : nullptr;
}

std::vector<std::string> take_new_damage() {
  std::vector<std::string> out;
  if (mapping_damage_count() == 0) return out;
  std::lock_guard lock(g_release);
  const int used = g_used.load(std::memory_order_acquire);
  for (int k = 0; k < used; ++k) {
    Slot& s = g_slots[k];
    if (!s.damaged.load(std::memory_order_acquire) || s.end.load() == 0) continue;
    if (s.reported.exchange(true)) continue;
    if (const MappingGuard* g = s.owner.load(std::memory_order_acquire)) out.push_back(g->path());
  }
  return out;
}

}  // namespace stoker
