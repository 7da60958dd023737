// Memory: allocators for host, pinned-host and device memory, and MemoryPool, a caching pool
// that hands out reference-counted Buffers, reuses freed blocks by size class, grows to the
// high-water mark, reports statistics, honours an optional budget and can be trimmed.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/core/cuda.hpp"

namespace stoker {

enum class MemoryKind { kHost, kPinned, kDevice };
std::string_view memory_kind_name(MemoryKind k);

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual MemoryKind kind() const = 0;
  // Returns at least `bytes` bytes aligned to 256; throws RuntimeError on failure.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p, size_t bytes) noexcept = 0;
};

std::unique_ptr<Allocator> make_host_allocator();
// Pinned host and device allocators use the CUDA runtime; without CUDA (build or device)
// allocate() throws RuntimeError saying so.
std::unique_ptr<Allocator> make_pinned_allocator();
std::unique_ptr<Allocator> make_device_allocator(int device_id);
// True when stoker was built with CUDA and a CUDA device is present.
bool cuda_available();

struct PoolStats {
  size_t bytes_in_use = 0;       // handed out and not yet released
  size_t peak_bytes_in_use = 0;  // high-water mark of bytes_in_use
  size_t bytes_reserved = 0;     // in use + cached free blocks
  size_t budget = 0;             // 0: unlimited
  size_t allocations = 0;        // acquire() calls
  size_t reused = 0;             // of which served from cached blocks
  // Of allocations: fresh blocks made because every cached one was still in use on the GPU
  // (reusing it would have made the caller wait for another stream's work).
  size_t not_waited = 0;
  // Events recorded when buffers came back (one per stream a released buffer was used on,
  // Buffer::record_stream); buffers guarded by a shared event (Buffer::record_use) need none.
  size_t release_events = 0;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("bytes_in_use", s.bytes_in_use), f("peak_bytes_in_use", s.peak_bytes_in_use),
        f("bytes_reserved", s.bytes_reserved), f("budget", s.budget),
        f("allocations", s.allocations), f("reused", s.reused), f("not_waited", s.not_waited),
        f("release_events", s.release_events);
  }
};

class Buffer;

namespace detail {
struct PoolState;
}

class MemoryPool {
 public:
  // `budget` in bytes; 0 for unlimited.
  explicit MemoryPool(std::unique_ptr<Allocator> allocator, size_t budget = 0);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // A buffer of at least `bytes` bytes. Freed blocks of the same size class are reused. When
  // the budget would be exceeded, cached blocks are released first; if still over, throws
  // RuntimeError naming the budget and the request.
  //
  // Stream order: a buffer that streams used (Buffer::record_stream) is reused only after the
  // work those streams had queued when it was released. Blocks whose work has finished are
  // preferred; while that work is pending, fresh blocks are made up to a bound (see
  // acquire_impl); past it acquire() (for use by the host) waits for that work, and
  // acquire_on(stream) makes `stream` wait for it on the device instead, so the host never
  // blocks. acquire_on records `stream` on the new buffer (work queued there uses it).
  std::shared_ptr<Buffer> acquire(size_t bytes);
  std::shared_ptr<Buffer> acquire_on(size_t bytes, StreamHandle stream);
  // Releases all cached (free) blocks to the allocator.
  void trim();
  PoolStats stats() const;
  MemoryKind kind() const;
  // `stream` is about to be destroyed and has no work left (its owner synchronised it):
  // buffers released later no longer record events on it.
  void forget_stream(StreamHandle stream);
  void set_budget(size_t bytes);

 private:
  std::shared_ptr<Buffer> acquire_impl(size_t bytes, const StreamHandle* stream);
  std::shared_ptr<detail::PoolState> state_;
};

// A block of memory from a pool (or wrapping external memory). Returned to its pool when the
// last reference goes; the pool's state outlives the pool object while buffers remain.
class Buffer {
 public:
  // What a wrapped buffer's owner gets when the last reference goes: one event per stoker
  // stream that used the memory and still exists. The memory may be reused once they are done.
  using ReleaseFn = std::function<void(std::vector<std::shared_ptr<CudaEvent>> pending)>;

  Buffer(void* data, size_t size, MemoryKind kind, std::shared_ptr<detail::PoolState> pool,
         size_t block_size)
      : data_(data), size_(size), kind_(kind), pool_(std::move(pool)), block_size_(block_size) {}
  // Memory stoker borrows (e.g. a Python array fed without copying): `release` is called once,
  // from whichever thread drops the last reference, and must not block or throw.
  static std::shared_ptr<Buffer> wrap(void* data, size_t size, MemoryKind kind, ReleaseFn release);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  size_t size() const { return size_; }
  MemoryKind kind() const { return kind_; }
  // Says that work queued on `stream` uses this buffer: when the buffer is released, an event
  // recorded on each such stream guards its reuse (see MemoryPool::acquire). Thread-safe.
  void record_stream(StreamHandle stream);
  // Says that the work `done` captured is this buffer's last use on the GPU (nothing queued
  // later uses it): the buffer is reused only after that event. One event can guard a whole
  // batch of buffers, where record_stream records one per buffer at release and each is polled
  // on its own. Thread-safe.
  void record_use(std::shared_ptr<CudaEvent> done);

 private:
  void* data_;
  size_t size_;
  MemoryKind kind_;
  std::shared_ptr<detail::PoolState> pool_;
  size_t block_size_;
  ReleaseFn release_;
  std::mutex streams_mutex_;
  std::vector<StreamHandle> streams_;
  std::vector<std::shared_ptr<CudaEvent>> uses_;
};

// The process-wide host pool used where no pipeline pool is at hand (e.g. Python inputs).
MemoryPool& default_host_pool();

}  // namespace stoker
