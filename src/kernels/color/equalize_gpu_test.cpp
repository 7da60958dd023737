#include "stoker/kernels/color/equalize_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (HWC, channel planes, many channels, one value, an empty sample, one larger
// than a histogram block) on the GPU equals the CPU kernel.
TEST(EqualizeGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(120.f, 30.f);
  const std::vector<EqualizeShape> shapes{{1, 37 * 41, 3}, {3, 17 * 5, 1}, {1, 9 * 9, 7},
                                          {1, 16, 1},      {1, 0, 3},      {1, 300 * 200, 3}};
  std::vector<std::vector<uint8_t>> in;
  std::vector<EqualizeGpuSample> desc;
  size_t total = 0, groups = 0;
  int64_t max_values = 0, max_groups = 0, max_planes = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& s = shapes[i];
    in.emplace_back(size_t(s.planes * s.pixels * s.channels));
    for (auto& v : in.back()) v = i == 3 ? 77 : uint8_t(std::clamp(nd(rng), 0.f, 255.f));
    EqualizeGpuSample d;
    d.shape = s;
    desc.push_back(d);
    total += in.back().size();
    groups += size_t(s.planes * s.channels);
    max_values = std::max(max_values, s.pixels * s.channels);
    max_groups = std::max(max_groups, s.planes * s.channels);
    max_planes = std::max(max_planes, s.planes);
  }
  MemoryPool pool(make_device_allocator(0));
  auto in_buf = pool.acquire(total + 4), out_buf = pool.acquire(total + 4);
  auto work = pool.acquire(groups * 256 * 5);
  auto desc_buf = pool.acquire(desc.size() * sizeof(EqualizeGpuSample));
  size_t at = 0, g = 0;
  for (size_t i = 0; i < desc.size(); ++i) {
    auto& d = desc[i];
    d.in = static_cast<uint8_t*>(in_buf->data()) + at;
    d.out = static_cast<uint8_t*>(out_buf->data()) + at;
    d.hist = static_cast<uint32_t*>(work->data()) + g * 256;
    d.lut = static_cast<uint8_t*>(work->data()) + groups * 256 * 4 + g * 256;
    cudaMemcpy(const_cast<uint8_t*>(d.in), in[i].data(), in[i].size(), cudaMemcpyHostToDevice);
    at += in[i].size(), g += size_t(d.shape.planes * d.shape.channels);
  }
  cudaMemcpy(desc_buf->data(), desc.data(), desc.size() * sizeof(EqualizeGpuSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(equalize_gpu(static_cast<const EqualizeGpuSample*>(desc_buf->data()), int(desc.size()),
                         max_values, max_groups, max_planes, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<uint8_t> want(in[i].size()), got(in[i].size());
    equalize_cpu(in[i].data(), want.data(), shapes[i]);
    cudaMemcpy(got.data(), desc[i].out, got.size(), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, want) << "sample " << i;
  }
}

}  // namespace
}  // namespace stoker::kernels
