#include "stoker/kernels/random/noise_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (an empty sample, an odd count, a channels-first image, a large sample) gives
// on the GPU exactly the CPU kernel's values, for every kind of noise and several types.
template <typename T>
void expect_gpu_equals_cpu(NoiseKind kind, DType dtype, float p0, float p1) {
  std::mt19937 g(int(kind) * 10 + int(dtype));
  const std::vector<int64_t> sizes{0, 1, 7, 3 * 1000, 333 * 517};
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<T>> in(sizes.size()), want(sizes.size());
  std::vector<NoiseSample> desc(sizes.size());
  std::vector<std::shared_ptr<Buffer>> keep;
  int64_t most = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    in[i].resize(size_t(sizes[i]));
    for (auto& v : in[i]) v = T(g() % 200);
    want[i].resize(in[i].size());
    NoiseSample& s = desc[i];
    s.units = sizes[i], s.key0 = g(), s.key1 = g(), s.p0 = p0, s.p1 = p1;
    T salt = T(3), pepper = T(250);
    std::memcpy(&s.salt, &salt, sizeof(T)), std::memcpy(&s.pepper, &pepper, sizeof(T));
    if (kind == NoiseKind::kSaltAndPepper && i == 3) s.channels = 3, s.inner = 1000, s.units = 1000;
    s.in = in[i].data(), s.out = want[i].data();
    noise_cpu(kind, s, dtype);
    auto din = pool.acquire(in[i].size() * sizeof(T) + 8);
    auto dout = pool.acquire(in[i].size() * sizeof(T) + 8);
    cudaMemcpy(din->data(), in[i].data(), in[i].size() * sizeof(T), cudaMemcpyHostToDevice);
    s.in = din->data(), s.out = dout->data();
    keep.push_back(din), keep.push_back(dout);
    most = std::max(most, s.units);
  }
  auto dd = pool.acquire(desc.size() * sizeof(NoiseSample));
  cudaMemcpy(dd->data(), desc.data(), desc.size() * sizeof(NoiseSample), cudaMemcpyHostToDevice);
  ASSERT_EQ(noise_gpu(kind, static_cast<const NoiseSample*>(dd->data()), int(desc.size()), most,
                      dtype, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<T> got(in[i].size());
    cudaMemcpy(got.data(), desc[i].out, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
    for (size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(got[k], want[i][k]) << "kind " << int(kind) << " sample " << i << " at " << k;
  }
}

TEST(NoiseGpu, EqualsTheCpuKernelBitForBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  expect_gpu_equals_cpu<uint8_t>(NoiseKind::kGaussian, DType::kU8, 0.5f, 20.f);
  expect_gpu_equals_cpu<float>(NoiseKind::kGaussian, DType::kF32, -1.f, 3.f);
  expect_gpu_equals_cpu<int32_t>(NoiseKind::kGaussian, DType::kI32, 0.f, 1e3f);
  expect_gpu_equals_cpu<int64_t>(NoiseKind::kGaussian, DType::kI64, 0.f, 1e3f);
  expect_gpu_equals_cpu<uint8_t>(NoiseKind::kSaltAndPepper, DType::kU8, 0.3f, 0.1f);
  expect_gpu_equals_cpu<float>(NoiseKind::kSaltAndPepper, DType::kF32, 0.3f, 0.1f);
  expect_gpu_equals_cpu<uint8_t>(NoiseKind::kShot, DType::kU8, 2.5f, 0.4f);
  expect_gpu_equals_cpu<float>(NoiseKind::kShot, DType::kF32, 0.01f, 100.f);
  expect_gpu_equals_cpu<uint16_t>(NoiseKind::kShot, DType::kU16, 0.f, INFINITY);
}

}  // namespace
}  // namespace stoker::kernels
