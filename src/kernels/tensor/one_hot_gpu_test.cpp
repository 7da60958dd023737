#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/tensor/one_hot.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (empty samples, labels out of range, several axes) of int32 and float labels
// into 1-, 4- and 8-byte outputs equals the CPU kernel.
template <typename In, typename Out>
void check_ragged_batch(DType in_dtype, DType out_dtype) {
  std::mt19937 rng(5);
  const int64_t classes = 7;
  const std::vector<std::pair<int64_t, int64_t>> dims{{0, 3}, {1, 1}, {13, 5}, {300, 1}, {2, 0}};
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::shared_ptr<Buffer>> keep;
  std::vector<OneHotGpuSample> desc;
  std::vector<std::vector<Out>> expected;
  int64_t most = 0;
  const Out on = one_hot_value<Out>(3.0), off = one_hot_value<Out>(-1.0);
  for (auto [outer, inner] : dims) {
    std::vector<In> labels(size_t(outer * inner));
    for (auto& v : labels) v = In(int(rng() % 10) - 1);
    expected.emplace_back(size_t(outer * classes * inner));
    one_hot_cpu(expected.back().data(), labels.data(), outer, classes, inner, on, off);
    auto in = pool.acquire(labels.size() * sizeof(In) + 8);
    auto out = pool.acquire(expected.back().size() * sizeof(Out) + 8);
    cudaMemcpy(in->data(), labels.data(), labels.size() * sizeof(In), cudaMemcpyHostToDevice);
    desc.push_back({in->data(), out->data(), outer, inner});
    keep.push_back(in), keep.push_back(out);
    most = std::max(most, outer * classes * inner);
  }
  auto d_desc = pool.acquire(desc.size() * sizeof(OneHotGpuSample));
  cudaMemcpy(d_desc->data(), desc.data(), desc.size() * sizeof(OneHotGpuSample),
             cudaMemcpyHostToDevice);
  uint64_t on_bits = 0, off_bits = 0;
  std::memcpy(&on_bits, &on, sizeof(Out));
  std::memcpy(&off_bits, &off, sizeof(Out));
  ASSERT_EQ(one_hot_gpu(static_cast<const OneHotGpuSample*>(d_desc->data()), int(desc.size()), most,
                        classes, in_dtype, out_dtype, on_bits, off_bits, nullptr),
            0);
  for (size_t k = 0; k < desc.size(); ++k) {
    std::vector<Out> got(expected[k].size());
    cudaMemcpy(got.data(), desc[k].out, got.size() * sizeof(Out), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, expected[k]) << "sample " << k;
  }
}

TEST(OneHotGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  check_ragged_batch<int32_t, float>(DType::kI32, DType::kF32);
  check_ragged_batch<float, uint8_t>(DType::kF32, DType::kU8);
  check_ragged_batch<uint8_t, double>(DType::kU8, DType::kF64);
  check_ragged_batch<int64_t, int16_t>(DType::kI64, DType::kI16);
}

}  // namespace
}  // namespace stoker::kernels
