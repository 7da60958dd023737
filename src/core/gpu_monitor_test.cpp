// GpuMonitor: without CUDA or NVML it says why; on a GPU it samples while work runs.
#include "stoker/core/gpu_monitor.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "stoker/core/cuda.hpp"
#include "stoker/core/memory.hpp"

#ifdef STOKER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stoker {
namespace {

TEST(GpuMonitor, SamplesWhileStartedOrSaysWhyNot) {
  GpuMonitor m(0, 0.05);
  EXPECT_EQ(m.read().samples, 0);
  if (!cuda_available()) {
    EXPECT_FALSE(m.read().available);
    EXPECT_FALSE(m.read().why.empty());
    m.start();  // nothing to sample: no thread, no error
    GTEST_SKIP() << "no CUDA device: " << m.read().why;
  }
  if (!m.read().available) GTEST_SKIP() << "NVML unavailable: " << m.read().why;
  m.start();
#ifdef STOKER_HAVE_CUDA
  MemoryPool device(make_device_allocator(0));
  CudaStream s(0);
  auto buf = device.acquire_on(size_t(256) << 20, s.get());
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(600)) {
    for (int k = 0; k < 20; ++k)
      ASSERT_EQ(cudaMemsetAsync(buf->data(), k, size_t(256) << 20, cudaStream_t(s.get())),
                cudaSuccess);
    s.synchronize();
  }
#endif
  const auto u = m.read();
  EXPECT_GE(u.samples, 5);
  EXPECT_GE(u.sm_percent, 0);
  EXPECT_LE(u.sm_percent, 100);
  EXPECT_TRUE(u.nvjpg_percent == -1 || (u.nvjpg_percent >= 0 && u.nvjpg_percent <= 100));
}

}  // namespace
}  // namespace stoker
