// nvCOMP's batched LZ4 against the host decoder on a ragged batch of hand-written blocks (see
// lz4_inflate_test.cpp), outputs zeroed first as the operator does.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/compression/lz4_inflate.hpp"

namespace stoker::kernels {
namespace {

TEST(NvcompLz4Gpu, MatchesTheHostDecoder) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  if (!nvcomp_unavailable().empty()) GTEST_SKIP() << nvcomp_unavailable();
  const std::vector<uint8_t> block{0x38, 'a', 'b', 'c', 3, 0, 0x50, 'X', 'Y', 'Z', 'W', 'V'};
  const std::vector<size_t> caps{20, 32, 20};  // the second leaves a tail of 12 zero bytes
  MemoryPool pool(make_device_allocator(0));
  auto src = pool.acquire(block.size());
  ASSERT_EQ(cudaMemcpy(src->data(), block.data(), block.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
  auto dst = pool.acquire(72);
  ASSERT_EQ(cudaMemset(dst->data(), 0, 72), cudaSuccess);
  std::vector<const void*> srcs(3, src->data());
  std::vector<size_t> src_sizes(3, block.size());
  auto* d = static_cast<uint8_t*>(dst->data());
  std::vector<void*> dsts{d, d + 20, d + 52};
  auto arrays = pool.acquire(3 * 8 * 6);
  auto* a = static_cast<uint8_t*>(arrays->data());
  ASSERT_EQ(cudaMemcpy(a, srcs.data(), 24, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a + 24, src_sizes.data(), 24, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a + 48, dsts.data(), 24, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(a + 72, caps.data(), 24, cudaMemcpyHostToDevice), cudaSuccess);
  NvcompLz4Batch b{.src = reinterpret_cast<const void* const*>(a),
                   .src_sizes = reinterpret_cast<const size_t*>(a + 24),
                   .dst = reinterpret_cast<void* const*>(a + 48),
                   .capacities = reinterpret_cast<const size_t*>(a + 72),
                   .inflated_sizes = reinterpret_cast<size_t*>(a + 96),
                   .statuses = reinterpret_cast<int*>(a + 120),
                   .n = 3,
                   .max_capacity = 32,
                   .total_capacity = 72};
  const size_t temp_bytes = nvcomp_lz4_temp_bytes(b);
  auto temp = pool.acquire(std::max<size_t>(temp_bytes, 1));
  nvcomp_lz4_inflate(b, temp->data(), temp_bytes, nullptr);
  std::vector<char> host(72);
  ASSERT_EQ(cudaMemcpy(host.data(), d, 72, cudaMemcpyDeviceToHost), cudaSuccess);
  const std::string expect = "abcabcabcabcabcXYZWV";
  EXPECT_EQ(std::string(host.data(), 20), expect);
  EXPECT_EQ(std::string(host.data() + 20, 32), expect + std::string(12, '\0'));
  EXPECT_EQ(std::string(host.data() + 52, 20), expect);
}

}  // namespace
}  // namespace stoker::kernels
