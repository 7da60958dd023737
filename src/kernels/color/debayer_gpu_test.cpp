#include "stoker/kernels/color/debayer_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (every pattern, a 2-pixel-high image, an empty one) on the GPU equals the CPU
// kernel, bilinear and gray, uint8 and uint16.
template <typename T>
void check(DebayerAlgorithm alg) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> d(0, int(T(-1)));
  const std::vector<DebayerShape> shapes{{10, 14}, {2, 8}, {0, 4}, {480, 640}, {6, 6}};
  const int ch = alg == DebayerAlgorithm::kGray ? 1 : 3;
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<T>> in;
  std::vector<DebayerGpuSample> desc;
  std::vector<std::shared_ptr<Buffer>> keep;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto s = shapes[i];
    in.emplace_back(size_t(s.height * s.width));
    for (auto& v : in.back()) v = T(d(rng));
    auto a = pool.acquire(in.back().size() * sizeof(T) + 4);
    auto b = pool.acquire(in.back().size() * ch * sizeof(T) + 4);
    cudaMemcpy(a->data(), in.back().data(), in.back().size() * sizeof(T), cudaMemcpyHostToDevice);
    desc.push_back({a->data(), b->data(), s, int(i % 4)});
    keep.push_back(a), keep.push_back(b);
  }
  auto dd = pool.acquire(desc.size() * sizeof(DebayerGpuSample));
  cudaMemcpy(dd->data(), desc.data(), desc.size() * sizeof(DebayerGpuSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(debayer_gpu(static_cast<const DebayerGpuSample*>(dd->data()), int(desc.size()),
                        480 * 640, dtype_of<T>, alg, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<T> want(in[i].size() * ch), got(want.size());
    debayer_cpu(in[i].data(), want.data(), shapes[i], desc[i].pattern, alg);
    cudaMemcpy(got.data(), desc[i].out, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, want) << "sample " << i;
  }
}

TEST(DebayerGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  check<uint8_t>(DebayerAlgorithm::kBilinear);
  check<uint16_t>(DebayerAlgorithm::kBilinear);
  check<uint8_t>(DebayerAlgorithm::kGray);
}

}  // namespace
}  // namespace stoker::kernels
