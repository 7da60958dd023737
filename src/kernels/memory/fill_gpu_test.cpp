#include "stoker/kernels/memory/fill_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

TEST(FillGpu, MatchesHostFillIncludingUnalignedTail) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool pool(make_device_allocator(0));
  for (size_t bytes : {size_t(1), size_t(17), size_t(4096 + 5), size_t(3) << 20}) {
    auto buf = pool.acquire(bytes + 1);
    ASSERT_EQ(cudaMemset(buf->data(), 0x11, bytes + 1), cudaSuccess);
    ASSERT_EQ(fill_bytes_gpu(buf->data(), bytes, 0xab, nullptr), 0);
    std::vector<uint8_t> host(bytes + 1);
    ASSERT_EQ(cudaMemcpy(host.data(), buf->data(), bytes + 1, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(host[i], 0xab) << i;
    EXPECT_EQ(host[bytes], 0x11) << "wrote past the end";
  }
}

}  // namespace
}  // namespace stoker::kernels
