#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/boxes/bb_flip.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (0 to 1,000 boxes, every format and flip) on the GPU equals the CPU kernel.
TEST(BbFlipGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  const std::vector<int64_t> boxes{0, 1, 1000, 37, 5, 300, 2, 64};
  std::vector<std::vector<float>> in, expected;
  std::vector<BbFlipGpuSample> desc;
  size_t total = 0;
  for (size_t k = 0; k < boxes.size(); ++k) {
    const BbFlip p{.ltrb = (k & 1) != 0, .horizontal = (k & 2) != 0, .vertical = (k & 4) != 0};
    in.emplace_back(size_t(4 * boxes[k]));
    for (auto& v : in.back()) v = u(rng);
    expected.emplace_back(in.back().size());
    bb_flip_cpu(expected.back().data(), in.back().data(), boxes[k], p);
    desc.push_back({nullptr, nullptr, boxes[k], p});
    total += in.back().size();
  }
  MemoryPool pool(make_device_allocator(0));
  auto in_buf = pool.acquire(total * sizeof(float) + 4);
  auto out_buf = pool.acquire(total * sizeof(float) + 4);
  auto desc_buf = pool.acquire(desc.size() * sizeof(BbFlipGpuSample));
  auto* d_in = static_cast<float*>(in_buf->data());
  auto* d_out = static_cast<float*>(out_buf->data());
  auto* d_desc = static_cast<BbFlipGpuSample*>(desc_buf->data());
  size_t at = 0;
  int64_t most = 0;
  for (size_t k = 0; k < desc.size(); ++k) {
    desc[k].in = d_in + at, desc[k].out = d_out + at;
    cudaMemcpy(d_in + at, in[k].data(), in[k].size() * sizeof(float), cudaMemcpyHostToDevice);
    at += in[k].size();
    most = std::max(most, desc[k].boxes);
  }
  cudaMemcpy(d_desc, desc.data(), desc.size() * sizeof(BbFlipGpuSample), cudaMemcpyHostToDevice);
  ASSERT_EQ(bb_flip_gpu(d_desc, int(desc.size()), most, nullptr), 0);
  at = 0;
  for (size_t k = 0; k < desc.size(); ++k) {
    std::vector<float> got(in[k].size());
    cudaMemcpy(got.data(), d_out + at, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, expected[k]) << "sample " << k;
    at += in[k].size();
  }
}

}  // namespace
}  // namespace stoker::kernels
