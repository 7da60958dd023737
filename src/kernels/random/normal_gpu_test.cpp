#include "stoker/kernels/random/normal_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (an empty sample, counts off the blocks of four and eight, a large sample) gives
// on the GPU exactly the CPU kernel's values (its AVX2 path included), for float and double draws.
template <typename T>
void expect_gpu_equals_cpu(DType dtype, bool wide, float mean, float stddev) {
  std::mt19937 g(static_cast<unsigned>(dtype));
  const std::vector<int64_t> sizes{0, 1, 7, 33, 3 * 1000 + 1, 333 * 517};
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<T>> want(sizes.size());
  std::vector<NormalSample> desc(sizes.size());
  std::vector<std::shared_ptr<Buffer>> keep;
  int64_t most = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    want[i].resize(size_t(sizes[i]));
    NormalSample& s = desc[i];
    s.count = sizes[i], s.key0 = g(), s.key1 = g(), s.ctr1 = g(), s.ctr2 = g(), s.ctr3 = g();
    s.mean = mean, s.stddev = stddev, s.mean_wide = mean, s.stddev_wide = stddev;
    s.out = want[i].data();
    normal_cpu(s, dtype, wide);
    auto dout = pool.acquire(want[i].size() * sizeof(T) + 8);
    s.out = dout->data();
    keep.push_back(dout);
    most = std::max(most, s.count);
  }
  auto dd = pool.acquire(desc.size() * sizeof(NormalSample));
  cudaMemcpy(dd->data(), desc.data(), desc.size() * sizeof(NormalSample), cudaMemcpyHostToDevice);
  ASSERT_EQ(normal_gpu(static_cast<const NormalSample*>(dd->data()), int(desc.size()), most, dtype,
                       wide, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<T> got(want[i].size());
    cudaMemcpy(got.data(), desc[i].out, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
    for (size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(std::memcmp(&got[k], &want[i][k], sizeof(T)), 0)
          << "dtype " << dtype_name(dtype) << " sample " << i << " at " << k << ": "
          << double(got[k]) << " vs " << double(want[i][k]);
  }
}

TEST(NormalGpu, EqualsTheCpuKernelBitForBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  expect_gpu_equals_cpu<float>(DType::kF32, false, -1.f, 3.f);
  expect_gpu_equals_cpu<uint8_t>(DType::kU8, false, 100.f, 60.f);
  expect_gpu_equals_cpu<int16_t>(DType::kI16, false, 0.f, 1e4f);
  expect_gpu_equals_cpu<double>(DType::kF64, true, 0.5f, 2.f);
  expect_gpu_equals_cpu<int32_t>(DType::kI32, true, 0.f, 1e9f);
  expect_gpu_equals_cpu<uint64_t>(DType::kU64, true, 0.f, 1e3f);
}

}  // namespace
}  // namespace stoker::kernels
