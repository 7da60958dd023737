#include "stoker/core/memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stoker {
namespace {

TEST(MemoryPool, ReusesFreedBlocksAndCountsStats) {
  MemoryPool pool(make_host_allocator());
  void* first;
  {
    auto a = pool.acquire(10000);
    first = a->data();
    std::memset(a->data(), 0xab, a->size());
    EXPECT_EQ(pool.stats().allocations, 1u);
    EXPECT_GE(pool.stats().bytes_in_use, 10000u);
  }
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  auto b = pool.acquire(9500);  // same size class as 10000
  EXPECT_EQ(b->data(), first);
  EXPECT_EQ(pool.stats().reused, 1u);
  EXPECT_GE(pool.stats().peak_bytes_in_use, 10000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 256, 0u);
}

TEST(MemoryPool, ReusesLargerFreeBlocksUpToTwiceTheSize) {
  MemoryPool pool(make_host_allocator());
  void* big;
  {
    auto a = pool.acquire(7'000'000);
    big = a->data();
  }
  {
    auto b = pool.acquire(4'000'000);  // a smaller class: the 7 MB block serves it
    EXPECT_EQ(b->data(), big);
    EXPECT_EQ(pool.stats().reused, 1u);
    EXPECT_GE(pool.stats().bytes_in_use, 7'000'000u);  // the whole block is in use
  }
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  auto c = pool.acquire(1'000'000);  // less than half of it: a block of its own
  EXPECT_NE(c->data(), big);
  EXPECT_EQ(pool.stats().reused, 1u);
}

TEST(MemoryPool, TrimReleasesCachedBlocks) {
  MemoryPool pool(make_host_allocator());
  { auto a = pool.acquire(1 << 20); }
  EXPECT_GE(pool.stats().bytes_reserved, size_t(1) << 20);
  pool.trim();
  EXPECT_EQ(pool.stats().bytes_reserved, 0u);
}

TEST(MemoryPool, BudgetIsEnforcedWithAClearMessage) {
  MemoryPool pool(make_host_allocator(), 1 << 20);
  auto a = pool.acquire(600 << 10);
  try {
    auto b = pool.acquire(600 << 10);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("host memory budget of 1048576 bytes exceeded"),
              std::string::npos)
        << e.what();
  }
}

TEST(MemoryPool, BudgetReleasesCacheBeforeFailing) {
  MemoryPool pool(make_host_allocator(), 1 << 20);
  { auto a = pool.acquire(600 << 10); }
  auto b = pool.acquire(700 << 10);  // different class: the cached block must be released
  EXPECT_NE(b->data(), nullptr);
}

// Host memory whose allocation of `slow_bytes` waits until released, and which can be told to
// fail: to see what the pool does while an allocation is in progress or after one failed.
class GatedAllocator final : public Allocator {
 public:
  explicit GatedAllocator(size_t slow_bytes) : slow_(slow_bytes) {}
  MemoryKind kind() const override { return MemoryKind::kHost; }
  void* allocate(size_t bytes) override {
    if (fail) throw RuntimeError("no memory (test)");
    if (bytes == slow_) {
      entered.set_value();
      gate.get_future().wait();
    }
    return host_->allocate(bytes);
  }
  void deallocate(void* p, size_t bytes) noexcept override { host_->deallocate(p, bytes); }
  std::promise<void> entered, gate;
  bool fail = false;

 private:
  size_t slow_;
  std::unique_ptr<Allocator> host_ = make_host_allocator();
};

// A thread inside a slow allocation does not hold the pool: other threads give buffers back
// and reuse cached blocks meanwhile (a training thread releasing a batch never waits for
// cudaHostAlloc or a GPU wait in another thread's acquire).
TEST(MemoryPool, AnAllocationInProgressDoesNotHoldThePool) {
  auto gated = std::make_unique<GatedAllocator>(size_t(1) << 20);
  GatedAllocator* g = gated.get();
  MemoryPool pool(std::move(gated));
  { auto warm = pool.acquire(4096); }  // a cached block of another class
  auto entered = g->entered.get_future();
  auto slow = std::async(std::launch::async, [&] { return pool.acquire(size_t(1) << 20); });
  entered.wait();  // the other thread is inside allocate() now
  auto fast = std::async(std::launch::async, [&] {
    auto reused = pool.acquire(4096);
    reused.reset();  // given back while the allocation is still in progress
    return pool.stats();
  });
  // A pool held during allocate() would wait for the gate: give up after 10 s, then open it.
  const bool in_time = fast.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  g->gate.set_value();
  ASSERT_TRUE(in_time) << "acquire and release waited for another thread's allocation";
  const PoolStats seen = fast.get();
  EXPECT_EQ(seen.reused, 1u);
  EXPECT_EQ(seen.bytes_in_use, size_t(1) << 20);  // the allocation in progress, counted first
  auto big = slow.get();
  EXPECT_EQ(big->size(), size_t(1) << 20);
  EXPECT_EQ(pool.stats().bytes_reserved, (size_t(1) << 20) + 4096);
}

TEST(MemoryPool, AFailedAllocationLeavesTheCountsAsTheyWere) {
  auto gated = std::make_unique<GatedAllocator>(0);
  GatedAllocator* g = gated.get();
  MemoryPool pool(std::move(gated), 1 << 20);
  g->fail = true;
  EXPECT_THROW(pool.acquire(600 << 10), RuntimeError);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_EQ(pool.stats().bytes_reserved, 0u);
  g->fail = false;
  auto a = pool.acquire(600 << 10);  // the budget was not spent by the failure
  EXPECT_NE(a->data(), nullptr);
}

TEST(MemoryPool, BuffersOutliveThePool) {
  std::shared_ptr<Buffer> kept;
  {
    MemoryPool pool(make_host_allocator());
    kept = pool.acquire(4096);
  }
  std::memset(kept->data(), 1, 4096);  // still valid; freed when `kept` goes (ASan checks)
}

// Borrowed memory goes back to its owner exactly once, when the last reference goes; without
// streams there is nothing to wait for.
TEST(Buffer, WrappedMemoryIsReleasedOnceWithoutEvents) {
  std::vector<uint8_t> memory(100);
  int released = 0;
  size_t pending = 99;
  auto b = Buffer::wrap(memory.data(), memory.size(), MemoryKind::kHost,
                        [&](std::vector<std::shared_ptr<CudaEvent>> events) {
                          ++released;
                          pending = events.size();
                        });
  EXPECT_EQ(b->data(), memory.data());
  EXPECT_EQ(b->size(), 100u);
  auto copy = b;
  b.reset();
  EXPECT_EQ(released, 0);
  copy.reset();
  EXPECT_EQ(released, 1);
  EXPECT_EQ(pending, 0u);
}

#ifdef STOKER_HAVE_CUDA
// Borrowed device memory used by a stoker stream is handed back with an event that completes
// only after that stream's work; a stream destroyed before the release (its work finished)
// gives no event.
TEST(Buffer, WrappedMemoryReleaseCarriesTheStreamsWork) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const size_t bytes = size_t(64) << 20;
  void* mem = nullptr;
  ASSERT_EQ(cudaMalloc(&mem, bytes), cudaSuccess);
  std::vector<std::shared_ptr<CudaEvent>> got;
  auto keep = [&](std::vector<std::shared_ptr<CudaEvent>> e) { got = std::move(e); };
  {
    CudaStream s(0);
    auto b = Buffer::wrap(mem, bytes, MemoryKind::kDevice, keep);
    for (int k = 0; k < 30; ++k)
      ASSERT_EQ(cudaMemsetAsync(mem, 0x11, bytes, cudaStream_t(s.get())), cudaSuccess);
    b->record_stream(s.get());
    b.reset();
    ASSERT_EQ(got.size(), 1u);
    got[0]->synchronize();
    EXPECT_EQ(cudaStreamQuery(cudaStream_t(s.get())), cudaSuccess);
  }
  got.clear();
  std::shared_ptr<Buffer> late;
  {
    CudaStream s(0);
    late = Buffer::wrap(mem, bytes, MemoryKind::kDevice, keep);
    late->record_stream(s.get());
    s.synchronize();
  }
  late.reset();  // its stream is gone
  EXPECT_TRUE(got.empty());
  cudaFree(mem);
}

// One process, several GPUs (a pipeline per GPU): buffers are released on whatever thread and
// device is current, and their events must still record on the stream's own device, or the
// block would be reused without waiting for that stream.
TEST(MemoryPool, ReleaseRecordsOnTheStreamsDeviceFromAnotherDevice) {
  if (cuda_device_count() < 2) GTEST_SKIP() << "fewer than two GPUs: multi-GPU test skipped";
  const size_t bytes = size_t(64) << 20;
  MemoryPool device1(make_device_allocator(1), bytes);  // one block: reuse, not a fresh one
  CudaStream a(1), b(1);
  DeviceGuard current(0);  // the releasing thread works on GPU 0
  auto buf = device1.acquire_on(bytes, a.get());
  void* first = buf->data();
  {
    DeviceGuard on1(1);
    for (int k = 0; k < 30; ++k)
      ASSERT_EQ(cudaMemsetAsync(buf->data(), 0x11, bytes, cudaStream_t(a.get())), cudaSuccess);
  }
  buf.reset();
  auto again = device1.acquire_on(bytes, b.get());
  ASSERT_EQ(again->data(), first);
  DeviceGuard on1(1);
  ASSERT_EQ(cudaMemsetAsync(again->data(), 0x22, bytes, cudaStream_t(b.get())), cudaSuccess);
  b.synchronize();
  std::vector<uint8_t> host(bytes);
  ASSERT_EQ(cudaMemcpy(host.data(), again->data(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(host[i], 0x22) << "byte " << i;
  CudaEvent e;  // made on GPU 1 now; records on a GPU 0 stream too
  CudaStream s0(0);
  e.record(s0.get());
  e.synchronize();
}

TEST(MemoryPool, PinnedAndDeviceRoundTripOnAGpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool pinned(make_pinned_allocator()), device(make_device_allocator(0));
  auto h = pinned.acquire(1 << 20);
  auto d = device.acquire(1 << 20);
  EXPECT_EQ(pinned.kind(), MemoryKind::kPinned);
  EXPECT_EQ(device.kind(), MemoryKind::kDevice);
  auto* p = static_cast<uint8_t*>(h->data());
  for (size_t i = 0; i < (1 << 20); ++i) p[i] = uint8_t(i * 7);
  ASSERT_EQ(cudaMemcpy(d->data(), p, 1 << 20, cudaMemcpyHostToDevice), cudaSuccess);
  std::memset(p, 0, 1 << 20);
  ASSERT_EQ(cudaMemcpy(p, d->data(), 1 << 20, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < (1 << 20); ++i) ASSERT_EQ(p[i], uint8_t(i * 7));
  h.reset();
  auto again = pinned.acquire(1 << 20);  // served from the pool's cache
  EXPECT_EQ(pinned.stats().reused, 1u);
}

// A block released while stream A still has work on it is handed to stream B only behind an
// event: B's write lands after all of A's, whatever the host does in between. (The budget of
// one block makes the pool reuse it rather than make a fresh one.)
TEST(MemoryPool, ReuseOnAnotherStreamWaitsForTheFirst) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const size_t bytes = size_t(64) << 20;
  MemoryPool device(make_device_allocator(0), bytes);
  CudaStream a(0), b(0);
  for (int round = 0; round < 3; ++round) {
    auto buf = device.acquire_on(bytes, a.get());
    void* first = buf->data();
    for (int k = 0; k < 30; ++k)  // a few milliseconds of work on A
      ASSERT_EQ(cudaMemsetAsync(buf->data(), 0x11, bytes, cudaStream_t(a.get())), cudaSuccess);
    buf->record_stream(a.get());
    buf.reset();  // released while A is still busy
    auto again = device.acquire_on(bytes, b.get());
    ASSERT_EQ(again->data(), first);  // the same block, recycled
    ASSERT_EQ(cudaMemsetAsync(again->data(), 0x22, bytes, cudaStream_t(b.get())), cudaSuccess);
    b.synchronize();
    std::vector<uint8_t> host(bytes);
    ASSERT_EQ(cudaMemcpy(host.data(), again->data(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(host[i], 0x22) << "byte " << i;
    ASSERT_EQ(host[bytes - 1], 0x22);
    a.synchronize();
  }
  // Host reuse (acquire) waits on the host.
  auto buf = device.acquire_on(bytes, a.get());
  ASSERT_EQ(cudaMemsetAsync(buf->data(), 0x33, bytes, cudaStream_t(a.get())), cudaSuccess);
  buf->record_stream(a.get());
  buf.reset();
  auto host_use = device.acquire(bytes);
  EXPECT_EQ(cudaStreamQuery(cudaStream_t(a.get())), cudaSuccess);
}

// Holds a stream's work until open(): what was queued after it stays pending.
class StreamGate {
 public:
  explicit StreamGate(StreamHandle s) : future_(open_.get_future().share()) {
    // The callback owns its copy of the future: the gate may go before the stream drains.
    auto* f = new std::shared_future<void>(future_);
    EXPECT_EQ(cudaLaunchHostFunc(
                  cudaStream_t(s),
                  [](void* p) {
                    auto* fut = static_cast<std::shared_future<void>*>(p);
                    fut->wait();
                    delete fut;
                  },
                  f),
              cudaSuccess);
  }
  ~StreamGate() { open(); }
  void open() {
    if (!opened_) open_.set_value(), opened_ = true;
  }

 private:
  std::promise<void> open_;
  std::shared_future<void> future_;
  bool opened_ = false;
};

// Blocks whose last users' work is still pending give way to fresh ones (the caller would wait
// for another stage's stream) while the cached blocks are no more than those in use; past that
// bound the oldest is reused behind an event, the caller's stream waiting on the device.
TEST(MemoryPool, PendingBlocksGiveWayToFreshOnesWithinTheBound) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  CudaStream a(0), b(0);
  const size_t mb = size_t(1) << 20;
  std::vector<std::shared_ptr<Buffer>> on_a;
  for (int k = 0; k < 3; ++k) on_a.push_back(device.acquire_on(mb, a.get()));
  std::vector<void*> blocks;
  for (auto& buf : on_a) blocks.push_back(buf->data());
  StreamGate gate(a.get());
  on_a[0].reset();  // pending on A; 2 MiB in use
  auto fresh = device.acquire_on(mb, b.get());
  EXPECT_NE(fresh->data(), blocks[0]);
  EXPECT_EQ(device.stats().not_waited, 1u);
  EXPECT_EQ(device.stats().reused, 0u);
  on_a.clear();  // 3 MiB pending, 1 MiB in use: past the bound
  auto reused = device.acquire_on(mb, b.get());
  EXPECT_EQ(reused->data(), blocks[0]);  // the oldest
  EXPECT_EQ(device.stats().not_waited, 1u);
  EXPECT_EQ(cudaStreamQuery(cudaStream_t(b.get())), cudaErrorNotReady);  // B waits for A
  gate.open();
  b.synchronize();
  a.synchronize();
  auto idle = device.acquire_on(mb, b.get());  // A's work done: a cached block, no fresh one
  EXPECT_TRUE(idle->data() == blocks[1] || idle->data() == blocks[2]);
  EXPECT_EQ(device.stats().reused, 2u);
  EXPECT_EQ(device.stats().bytes_reserved, 4 * mb);
}

// A pool buffer used on a pipeline's stream and released after that stream is gone (a batch
// fed to a pipeline that was closed first): nothing is recorded on the dead handle, and the
// block is free at once.
TEST(MemoryPool, ReleaseAfterItsStreamWasDestroyedSkipsThatStream) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  auto buf = device.acquire(1 << 20);
  void* first = buf->data();
  {
    CudaStream gone(0);
    ASSERT_EQ(cudaMemsetAsync(buf->data(), 1, 1 << 20, cudaStream_t(gone.get())), cudaSuccess);
    buf->record_stream(gone.get());
  }                 // destroyed (after its work), as a closed pipeline's streams are
  CudaEvent other;  // more driver objects, which may take the freed handle's memory
  CudaStream again(0);
  buf.reset();
  auto reused = device.acquire(1 << 20);
  EXPECT_EQ(reused->data(), first);
  EXPECT_EQ(cudaStreamQuery(cudaStream_t(again.get())), cudaSuccess);
}

// A batch of buffers whose last use is already queued shares one event (Buffer::record_use):
// released, they record none of their own, and each is still reused only after that work.
// record_stream, for comparison, records one per buffer at release.
TEST(MemoryPool, OneSharedEventGuardsABatchOfBuffers) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool pinned(make_pinned_allocator());
  CudaStream a(0), b(0);
  const size_t kb = 64 << 10;
  std::vector<std::shared_ptr<Buffer>> samples;
  for (int k = 0; k < 16; ++k) samples.push_back(pinned.acquire(kb));
  std::vector<void*> blocks;
  for (auto& s : samples) blocks.push_back(s->data());
  StreamGate gate(a.get());  // the engines' reads, say, still queued behind it
  auto used = std::make_shared<CudaEvent>();
  used->record(a.get());
  for (auto& s : samples) s->record_use(used);
  samples.clear();
  EXPECT_EQ(pinned.stats().release_events, 0u);
  EXPECT_FALSE(used->done());
  // Past the bound (16 cached, none in use): the oldest block, behind the shared event.
  auto next = pinned.acquire_on(kb, b.get());
  EXPECT_NE(std::find(blocks.begin(), blocks.end(), next->data()), blocks.end());
  EXPECT_EQ(cudaStreamQuery(cudaStream_t(b.get())), cudaErrorNotReady);  // B waits for A
  gate.open();
  b.synchronize();
  EXPECT_TRUE(used->done());
  next.reset();
  for (int k = 0; k < 4; ++k) samples.push_back(pinned.acquire(kb));
  EXPECT_EQ(pinned.stats().bytes_reserved, 16 * kb);  // all cached blocks, no fresh one
  for (auto& s : samples) s->record_stream(a.get());
  samples.clear();
  EXPECT_EQ(pinned.stats().release_events, 4u + 1u);  // + `next`, used on B
  a.synchronize();
}

// An event known to be finished answers done() from its cache until it is recorded again.
TEST(CudaEvent, DoneIsRememberedUntilTheNextRecord) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  CudaStream s(0);
  CudaEvent e;
  e.record(s.get());
  e.synchronize();
  EXPECT_TRUE(e.done());
  {
    StreamGate gate(s.get());
    e.record(s.get());
    EXPECT_FALSE(e.done());
    EXPECT_FALSE(e.done());
    gate.open();
    s.synchronize();
    EXPECT_TRUE(e.done());
  }
  EXPECT_TRUE(e.done());
}

// Timing events measure the GPU work between them: more work, more time; none, about none.
TEST(CudaEvent, TimingEventsMeasureTheWorkBetweenThem) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  CudaStream s(0);
  const size_t bytes = size_t(64) << 20;
  auto buf = device.acquire_on(bytes, s.get());
  auto time_memsets = [&](int count) {
    CudaEvent start(/*timing=*/true), end(/*timing=*/true);
    start.record(s.get());
    for (int k = 0; k < count; ++k)
      EXPECT_EQ(cudaMemsetAsync(buf->data(), k, bytes, cudaStream_t(s.get())), cudaSuccess);
    end.record(s.get());
    end.synchronize();
    EXPECT_TRUE(start.done() && end.done());
    return elapsed_seconds(start, end);
  };
  const double none = time_memsets(0), few = time_memsets(5), many = time_memsets(50);
  EXPECT_GE(none, 0.0);
  EXPECT_LT(none, 1e-3);
  EXPECT_GT(few, none);
  EXPECT_GT(many, 5 * few);  // 10x the bytes written: well over 5x the time
  buf->record_stream(s.get());
}
#endif

TEST(MemoryPool, PinnedAndDeviceNeedCuda) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; covered by GPU tests";
  MemoryPool pool(make_device_allocator(0));
  EXPECT_THROW(pool.acquire(16), RuntimeError);
}

}  // namespace
}  // namespace stoker
