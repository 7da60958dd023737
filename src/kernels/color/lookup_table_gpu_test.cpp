#include "stoker/kernels/color/lookup_table_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/color/lookup_table.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch of int32 keys (negative, past the table, empty sample) mapped to uint16 on the
// GPU equals the CPU kernel.
TEST(LookupTableGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(2);
  std::uniform_int_distribution<int32_t> any(-100, 1200);
  const LutTable t =
      make_lut({0, 3, 999, 1000, 3}, {1.f, 2.5f, -4.f, 70000.f, 9.f}, 11.f, DType::kU16);
  const std::vector<int64_t> sizes{1000, 1, 0, 300000, 17};
  std::vector<std::vector<int32_t>> in;
  MemoryPool pool(make_device_allocator(0));
  std::vector<LutGpuSample> desc;
  std::vector<std::shared_ptr<Buffer>> keep;
  for (int64_t n : sizes) {
    in.emplace_back(size_t(n));
    for (auto& v : in.back()) v = any(rng);
    auto a = pool.acquire(size_t(n) * 4 + 4), b = pool.acquire(size_t(n) * 2 + 4);
    cudaMemcpy(a->data(), in.back().data(), size_t(n) * 4, cudaMemcpyHostToDevice);
    desc.push_back({a->data(), b->data(), n});
    keep.push_back(a), keep.push_back(b);
  }
  auto table = pool.acquire(t.bytes.size());
  cudaMemcpy(table->data(), t.bytes.data(), t.bytes.size(), cudaMemcpyHostToDevice);
  auto d = pool.acquire(desc.size() * sizeof(LutGpuSample));
  cudaMemcpy(d->data(), desc.data(), desc.size() * sizeof(LutGpuSample), cudaMemcpyHostToDevice);
  ASSERT_EQ(lookup_table_gpu(static_cast<const LutGpuSample*>(d->data()), int(desc.size()), 300000,
                             DType::kI32, table->data(), t.size, t.entry_bytes, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<uint16_t> want(in[i].size()), got(in[i].size());
    lookup_table_cpu(in[i].data(), want.data(), int64_t(want.size()),
                     reinterpret_cast<const uint16_t*>(t.bytes.data()), t.size);
    cudaMemcpy(got.data(), desc[i].out, got.size() * 2, cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, want) << "sample " << i;
  }
}

}  // namespace
}  // namespace stoker::kernels
