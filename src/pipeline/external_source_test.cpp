// External sources fed from C++: borrowed and copied batches, checks at feed time, and on the
// GPU device data (borrowed, released with events for the stage's work) and uploaded host data.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "stoker/core/cuda.hpp"
#include "stoker/core/memory.hpp"
#include "stoker/pipeline.hpp"

namespace stoker {
namespace {

std::unique_ptr<Pipeline> source_pipeline(const std::string& device, int batch = 2,
                                          std::optional<int> device_id = std::nullopt) {
  PipelineBuilder b({.batch_size = batch, .num_threads = 1, .device_id = device_id, .seed = 1});
  auto src = b.add("external_source", {}, {{"layout", std::string("HW")}}, {},
                   {.name = "in", .device = device});
  b.set_outputs({src[0]});
  return b.build();
}

// A host batch of two 2x3 uint8 samples borrowing `memory` (12 bytes); `released` counts
// the calls of the owner's release function.
Batch borrowed_host_batch(std::vector<uint8_t>& memory, int& released) {
  auto buffer = Buffer::wrap(memory.data(), memory.size(), MemoryKind::kHost,
                             [&released](auto) { ++released; });
  Batch b = Batch::with_samples(2, DType::kU8);
  for (int i = 0; i < 2; ++i) b.set_sample(i, buffer, memory.data() + 6 * i, TensorShape({2, 3}));
  return b;
}

TEST(ExternalSource, BorrowedBatchIsTheOutputAndIsReleasedWhenDone) {
  std::vector<uint8_t> memory(12);
  std::iota(memory.begin(), memory.end(), uint8_t(1));
  int released = 0;
  auto pipe = source_pipeline("cpu");
  pipe->feed_input("in", borrowed_host_batch(memory, released));
  {
    auto out = pipe->run();
    EXPECT_EQ(out[0].data(1), memory.data() + 6);  // no copy
    EXPECT_EQ(out[0].layout().str(), "HW");
    EXPECT_EQ(released, 0);  // the output still uses it
  }
  EXPECT_EQ(released, 1);
}

TEST(ExternalSource, CopiedBatchLeavesTheCallersMemoryAtOnce) {
  std::vector<uint8_t> memory(12);
  std::iota(memory.begin(), memory.end(), uint8_t(1));
  int released = 0;
  auto pipe = source_pipeline("cpu");
  pipe->feed_input("in", borrowed_host_batch(memory, released), /*copy=*/true);
  EXPECT_EQ(released, 1);                      // given back before feed_input returned
  std::fill(memory.begin(), memory.end(), 0);  // the caller reuses its memory
  auto out = pipe->run();
  EXPECT_NE(out[0].data(0), memory.data());
  EXPECT_EQ(out[0].data_as<uint8_t>(1)[5], 12);  // what was fed, not the zeros
}

TEST(ExternalSource, BadBatchesAreRefusedWhenFedWithClearErrors) {
  std::vector<uint8_t> memory(12);
  int released = 0;
  auto pipe = source_pipeline("cpu", 3);
  try {
    pipe->feed_input("in", borrowed_host_batch(memory, released));
    FAIL() << "a batch of 2 for batch_size 3 was taken";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "external_source 'in': fed a batch of 2 samples, but the pipeline's batch_size "
                 "is 3");
  }
  auto flat = Batch::allocate(default_host_pool(), DType::kU8, {{6}, {6}, {6}});
  try {
    pipe->feed_input("in", flat);
    FAIL() << "1-D samples were taken for layout HW";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "external_source 'in': sample 0 has shape (6,), which does not match layout "
                 "'HW'");
  }
  EXPECT_EQ(released, 1);
}

TEST(ExternalSource, GpuSourceNeedsAGpu) {
  try {
    source_pipeline("gpu");
    FAIL() << "a gpu external source was built without a device";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("but the pipeline has no GPU (device_id=None)"),
              std::string::npos)
        << e.what();
  }
}

#ifdef STOKER_HAVE_CUDA
std::vector<uint8_t> to_host_bytes(const Batch& b, int i) {
  std::vector<uint8_t> h(b.sample(i).num_bytes());
  if (b.ready_event()) b.ready_event()->synchronize();
  copy_to_host_async(h.data(), b.data(i), h.size(), nullptr);
  synchronize_stream(nullptr);
  return h;
}

// 12 bytes 1, 2, ..., 12 in device memory from `device`; `host` gets the same values.
std::shared_ptr<Buffer> device_bytes(MemoryPool& device, std::vector<uint8_t>& host) {
  auto memory = device.acquire(12);
  host.resize(12);
  std::iota(host.begin(), host.end(), uint8_t(1));
  copy_to_device_async(memory->data(), host.data(), 12, nullptr);
  synchronize_stream(nullptr);
  return memory;
}

// Device data borrowed by a gpu source is the output itself; its owner gets it back with an
// event for the stage's work (the pipeline still lives), after the output is dropped.
TEST(ExternalSource, GpuSourceBorrowsDeviceDataAndReleasesItWithEvents) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  std::vector<uint8_t> host;
  auto memory = device_bytes(device, host);
  int released = 0;
  size_t events = 0;
  auto buffer = Buffer::wrap(memory->data(), 12, MemoryKind::kDevice, [&](auto pending) {
    ++released;
    events = pending.size();
  });
  Batch fed = Batch::with_samples(2, DType::kU8, {}, MemoryKind::kDevice);
  auto* p = static_cast<uint8_t*>(memory->data());
  for (int i = 0; i < 2; ++i) fed.set_sample(i, buffer, p + 6 * i, TensorShape({2, 3}));
  buffer.reset();
  auto pipe = source_pipeline("gpu", 2, 0);
  ASSERT_NE(pipe->feed_stream(), nullptr);
  pipe->feed_input("in", std::move(fed));
  {
    auto out = pipe->run();
    ASSERT_EQ(out[0].memory(), MemoryKind::kDevice);
    EXPECT_EQ(out[0].data(1), p + 6);
    EXPECT_EQ(to_host_bytes(out[0], 1), std::vector<uint8_t>(host.begin() + 6, host.end()));
  }
  EXPECT_EQ(released, 1);
  EXPECT_EQ(events, 1u);  // the gpu stage's stream
}

TEST(ExternalSource, GpuSourceCopiesDeviceDataOrUploadsHostData) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  std::vector<uint8_t> host;
  auto memory = device_bytes(device, host);
  auto pipe = source_pipeline("gpu", 2, 0);
  Batch fed = Batch::with_samples(2, DType::kU8, {}, MemoryKind::kDevice);
  for (int i = 0; i < 2; ++i)
    fed.set_sample(i, memory, static_cast<uint8_t*>(memory->data()) + 6 * i, TensorShape({2, 3}));
  pipe->feed_input("in", fed, /*copy=*/true);
  std::vector<uint8_t> zeros(12, 0);
  copy_to_device_async(memory->data(), zeros.data(), 12, nullptr);  // reused by the caller
  synchronize_stream(nullptr);
  auto out = pipe->run();
  EXPECT_NE(out[0].data(0), memory->data());
  EXPECT_EQ(to_host_bytes(out[0], 0), std::vector<uint8_t>(host.begin(), host.begin() + 6));

  std::vector<uint8_t> on_host(host);
  int released = 0;
  pipe->feed_input("in", borrowed_host_batch(on_host, released));
  auto up = pipe->run();
  ASSERT_EQ(up[0].memory(), MemoryKind::kDevice);
  EXPECT_EQ(to_host_bytes(up[0], 1), std::vector<uint8_t>(host.begin() + 6, host.end()));
}
#endif

}  // namespace
}  // namespace stoker
