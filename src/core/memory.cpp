#include "stoker/core/memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <vector>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stoker {

std::string_view memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::kHost:
      return "host";
    case MemoryKind::kPinned:
      return "pinned";
    case MemoryKind::kDevice:
      return "device";
  }
  return "?";
}

namespace {
constexpr size_t kAlignment = 256;

class HostAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kHost; }
  void* allocate(size_t bytes) override {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    STOKER_ENFORCE(p != nullptr, RuntimeError, "host allocation of ", bytes, " bytes failed");
    return p;
  }
  void deallocate(void* p, size_t) noexcept override { std::free(p); }
};

#ifdef STOKER_HAVE_CUDA
void cuda_check(cudaError_t e, const char* what, size_t bytes) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state
    throw RuntimeError(
        detail::concat(what, " of ", bytes, " bytes failed: ", cudaGetErrorString(e)));
  }
}
class PinnedAllocator final : public Allocator {
 public:
  MemoryKind kind() const override { return MemoryKind::kPinned; }
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    cuda_check(cudaMallocHost(&p, bytes), "pinned host allocation (cudaMallocHost)", bytes);
    return p;
  }
  void deallocate(void* p, size_t) noexcept override { cudaFreeHost(p); }
};
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {}
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* allocate(size_t bytes) override {
    int prev = 0;
    cudaGetDevice(&prev);
    cuda_check(cudaSetDevice(device_), "selecting the CUDA device for an allocation", bytes);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    cudaSetDevice(prev);
    cuda_check(e, "device allocation (cudaMalloc)", bytes);
    return p;
  }
  void deallocate(void* p, size_t) noexcept override { cudaFree(p); }

 private:
  int device_;
};
#else
class NoCudaAllocator final : public Allocator {
 public:
  explicit NoCudaAllocator(MemoryKind k) : kind_(k) {}
  MemoryKind kind() const override { return kind_; }
  void* allocate(size_t) override {
    throw RuntimeError(detail::concat("cannot allocate ", memory_kind_name(kind_),
                                      " memory: stoker was built without CUDA"));
  }
  void deallocate(void*, size_t) noexcept override {}

 private:
  MemoryKind kind_;
};
#endif

// Size classes: powers of two split in quarters above 4 KiB (≤ 25% waste), so that a block
// freed by one iteration fits the next iteration's slightly different request.
size_t size_class(size_t bytes) {
  if (bytes <= 4096) return bytes <= 256 ? 256 : (bytes + 255) / 256 * 256;
  size_t p = size_t(1) << (63 - __builtin_clzll(bytes));
  size_t quarter = p / 4;
  return (bytes + quarter - 1) / quarter * quarter;
}
}  // namespace

std::unique_ptr<Allocator> make_host_allocator() { return std::make_unique<HostAllocator>(); }
#ifdef STOKER_HAVE_CUDA
std::unique_ptr<Allocator> make_pinned_allocator() { return std::make_unique<PinnedAllocator>(); }
std::unique_ptr<Allocator> make_device_allocator(int device_id) {
  return std::make_unique<DeviceAllocator>(device_id);
}
bool cuda_available() {
  int n = 0;
  bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return ok;
}
#else
std::unique_ptr<Allocator> make_pinned_allocator() {
  return std::make_unique<NoCudaAllocator>(MemoryKind::kPinned);
}
std::unique_ptr<Allocator> make_device_allocator(int) {
  return std::make_unique<NoCudaAllocator>(MemoryKind::kDevice);
}
bool cuda_available() { return false; }
#endif

namespace detail {
struct FreeBlock {
  void* data = nullptr;
  // Work that may still use the block (recorded on the streams that used it at release, or
  // shared with other blocks: Buffer::record_use).
  std::vector<std::shared_ptr<CudaEvent>> pending;
};

struct PoolState {
  std::unique_ptr<Allocator> allocator;
  mutable std::mutex mutex;
  std::multimap<size_t, FreeBlock> free_blocks;          // block size -> block
  std::vector<std::shared_ptr<CudaEvent>> spare_events;  // owned by this pool alone
  std::vector<StreamHandle> forgotten;  // destroyed streams (MemoryPool::forget_stream)
  PoolStats stats;

  void release_free_locked() {
    for (auto& [size, b] : free_blocks) {
      for (auto& e : b.pending) e->synchronize();
      allocator->deallocate(b.data, size);
      stats.bytes_reserved -= size;
    }
    free_blocks.clear();
  }
  void give_back(void* p, size_t block, const std::vector<StreamHandle>& streams,
                 std::vector<std::shared_ptr<CudaEvent>> uses) {
    FreeBlock b{p, std::move(uses)};
    std::lock_guard lock(mutex);
    for (StreamHandle s : streams) {
      if (std::find(forgotten.begin(), forgotten.end(), s) != forgotten.end()) continue;
      std::shared_ptr<CudaEvent> e;
      if (!spare_events.empty()) {
        e = std::move(spare_events.back());
        spare_events.pop_back();
      } else {
        try {
          e = std::make_shared<CudaEvent>();
        } catch (const Error&) {
          continue;  // no CUDA: nothing can still be using the block
        }
      }
      try {
        // A stream of a pipeline closed since (this pool was not told): its work was waited
        // for when it was destroyed.
        if (!record_unless_destroyed(*e, s)) {
          spare_events.push_back(std::move(e));
          continue;
        }
      } catch (const Error&) {
        continue;  // a stream CUDA refuses: its work has been submitted and cannot be waited on
      }
      ++stats.release_events;
      b.pending.push_back(std::move(e));
    }
    stats.bytes_in_use -= block;
    free_blocks.emplace(block, std::move(b));
  }
  // Finished events go back to the spares unless another block or buffer shares them.
  void recycle(std::vector<std::shared_ptr<CudaEvent>>& events) {
    for (auto& e : events)
      if (e.use_count() == 1) spare_events.push_back(std::move(e));
    events.clear();
  }
  // Whether the block's pending work has finished (finished events are recycled).
  bool idle(FreeBlock& b) {
    for (auto& e : b.pending)
      if (!e->done()) return false;
    recycle(b.pending);
    return true;
  }
  ~PoolState() { release_free_locked(); }
};
}  // namespace detail

void Buffer::record_stream(StreamHandle stream) {
  std::lock_guard lock(streams_mutex_);
  for (StreamHandle s : streams_)
    if (s == stream) return;
  streams_.push_back(stream);
}

void Buffer::record_use(std::shared_ptr<CudaEvent> done) {
  if (!done) return;
  std::lock_guard lock(streams_mutex_);
  for (const auto& e : uses_)
    if (e == done) return;
  uses_.push_back(std::move(done));
}

std::shared_ptr<Buffer> Buffer::wrap(void* data, size_t size, MemoryKind kind, ReleaseFn release) {
  auto b = std::make_shared<Buffer>(data, size, kind, nullptr, 0);
  b->release_ = std::move(release);
  return b;
}

Buffer::~Buffer() {
  if (pool_) {
    pool_->give_back(data_, block_size_, streams_, std::move(uses_));
  } else if (release_) {
    std::vector<std::shared_ptr<CudaEvent>> pending = std::move(uses_);
    for (StreamHandle s : streams_)
      if (auto e = record_if_live(s)) pending.push_back(std::move(e));
    release_(std::move(pending));
  }
}

MemoryPool::MemoryPool(std::unique_ptr<Allocator> allocator, size_t budget)
    : state_(std::make_shared<detail::PoolState>()) {
  state_->allocator = std::move(allocator);
  state_->stats.budget = budget;
}

MemoryPool::~MemoryPool() { trim(); }

std::shared_ptr<Buffer> MemoryPool::acquire(size_t bytes) { return acquire_impl(bytes, nullptr); }

std::shared_ptr<Buffer> MemoryPool::acquire_on(size_t bytes, StreamHandle stream) {
  auto b = acquire_impl(bytes, &stream);
  // The block belongs to `stream` until released: reuse by another stream waits for that
  // stream's work (its own stream's order needs no event, but one is cheap and uniform).
  b->record_stream(stream);
  return b;
}

// acquire holds the pool's mutex across neither the allocation (cudaHostAlloc, cudaMalloc) nor
// a host wait for a reused block's work (only a budget's forced release of the cache, and
// trim(), free under it): a training thread giving a batch back (Buffer's destructor,
// give_back) would wait for them, and a GPU-bound step idles the GPU while that thread is late.
std::shared_ptr<Buffer> MemoryPool::acquire_impl(size_t bytes, const StreamHandle* stream) {
  size_t block = size_class(bytes);
  std::unique_lock lock(state_->mutex);
  auto& st = state_->stats;
  ++st.allocations;
  void* p = nullptr;
  std::vector<std::shared_ptr<CudaEvent>> pending;  // a reused block's last users' work
  // Candidates: free blocks of this class or larger, up to twice the size (requests that vary,
  // like a reader's runs of records, still reuse blocks instead of faulting in fresh memory).
  const auto first = state_->free_blocks.lower_bound(block);
  const auto last = state_->free_blocks.upper_bound(2 * block);
  // A block whose last users' work has finished is taken at once. When every candidate still
  // has work pending (its last user is another stage's stream, behind on the GPU), reusing it
  // would make this stream, or the host, wait for that stage: the stages would move in lock
  // step. A fresh block is allocated instead, while the cached blocks stay no larger than what
  // is in use (memory stays within twice the working set) and within the budget; past that, the
  // oldest candidate is reused after its work.
  auto it = first;
  while (it != last && !state_->idle(it->second)) ++it;
  if (it == last && first != last) {
    const size_t cached = st.bytes_reserved - st.bytes_in_use;
    const bool room = !st.budget || st.bytes_reserved + block <= st.budget;
    if (cached <= st.bytes_in_use + block && room)
      ++st.not_waited;
    else
      it = first;
  }
  const bool fresh = it == last;
  if (!fresh) {
    block = it->first;
    p = it->second.data;
    pending = std::move(it->second.pending);
    state_->free_blocks.erase(it);
    ++st.reused;
  } else {
    if (st.budget && st.bytes_reserved + block > st.budget) state_->release_free_locked();
    STOKER_ENFORCE(st.budget == 0 || st.bytes_reserved + block <= st.budget, RuntimeError,
                   memory_kind_name(state_->allocator->kind()), " memory budget of ", st.budget,
                   " bytes exceeded: ", st.bytes_in_use, " bytes in use, ", bytes,
                   " more requested");
    st.bytes_reserved += block;  // counted now, so that no other thread overdraws the budget
  }
  st.bytes_in_use += block;
  if (st.bytes_in_use > st.peak_bytes_in_use) st.peak_bytes_in_use = st.bytes_in_use;
  lock.unlock();
  try {
    if (fresh) p = state_->allocator->allocate(block);
    // The reused block's pending work: waited for by `stream` on the device, or by the host.
    for (auto& e : pending) {
      if (stream)
        e->wait_on(*stream);
      else
        e->synchronize();
    }
  } catch (...) {
    lock.lock();
    st.bytes_in_use -= block;
    if (fresh) {
      st.bytes_reserved -= block;
    } else {  // the block goes back, still waiting for its work
      detail::FreeBlock b{p, std::move(pending)};
      state_->free_blocks.emplace(block, std::move(b));
    }
    throw;
  }
  if (!pending.empty()) {
    lock.lock();
    state_->recycle(pending);
    lock.unlock();
  }
  return std::make_shared<Buffer>(p, bytes, state_->allocator->kind(), state_, block);
}

void MemoryPool::forget_stream(StreamHandle stream) {
  std::lock_guard lock(state_->mutex);
  state_->forgotten.push_back(stream);
}

void MemoryPool::trim() {
  std::lock_guard lock(state_->mutex);
  state_->release_free_locked();
}

PoolStats MemoryPool::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

MemoryKind MemoryPool::kind() const { return state_->allocator->kind(); }

void MemoryPool::set_budget(size_t bytes) {
  std::lock_guard lock(state_->mutex);
  state_->stats.budget = bytes;
}

MemoryPool& default_host_pool() {
  static MemoryPool pool(make_host_allocator());
  return pool;
}

}  // namespace stoker
