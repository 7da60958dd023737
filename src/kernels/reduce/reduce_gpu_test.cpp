#include "stoker/kernels/reduce/reduce_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/reduce/reduce_cpu.hpp"

namespace stoker::kernels {
namespace {

struct Case {
  TensorShape shape;
  std::vector<bool> mask;
};

// A ragged batch (an empty sample, reductions of nothing, of every axis, of large runs split
// into several chunks) on the GPU against the CPU kernel: integer results, min and max exactly,
// float sums within float rounding of the different order.
template <Reduction R, typename In, typename Out>
void check_against_cpu(uint32_t seed, const std::vector<Case>& cases, int64_t ddof = 0) {
  std::mt19937 rng(seed);
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<In>> in;
  std::vector<std::vector<float>> means;
  std::vector<ReducePlan> plans;
  std::vector<std::shared_ptr<Buffer>> keep;
  std::vector<ReduceGpuSample> desc;
  int64_t items = 0, outputs = 0;
  for (const auto& c : cases) {
    const ReducePlan p = plan_reduce(c.shape, c.mask);
    plans.push_back(p);
    in.emplace_back(size_t(c.shape.volume()));
    for (auto& v : in.back()) v = In(int64_t(rng() % 200) - (std::is_signed_v<In> ? 100 : 0));
    means.emplace_back(size_t(p.outputs));
    for (auto& m : means.back()) m = float(rng() % 50) / 7.f;
    ReduceGpuSample d;
    d.plan = p;
    d.norm = reduce_norm(p.count - ddof);
    d.chunk_len = kReduceGpuChunk;
    d.chunks = p.nred ? (p.count + d.chunk_len - 1) / d.chunk_len : 0;
    auto upload = [&](const void* src, size_t bytes) {
      keep.push_back(pool.acquire(bytes + 8));
      cudaMemcpy(keep.back()->data(), src, bytes, cudaMemcpyHostToDevice);
      return keep.back()->data();
    };
    d.in = upload(in.back().data(), in.back().size() * sizeof(In));
    d.mean = static_cast<const float*>(upload(means.back().data(), means.back().size() * 4));
    d.mean_stride = 1;
    keep.push_back(pool.acquire(size_t(p.outputs) * sizeof(Out) + 8));
    d.out = keep.back()->data();
    keep.push_back(pool.acquire(size_t(p.outputs * d.chunks) * sizeof(Out) + 8));
    d.partial = keep.back()->data();
    items = std::max(items, p.outputs * d.chunks);
    outputs = std::max(outputs, p.outputs);
    desc.push_back(d);
  }
  auto desc_buf = pool.acquire(desc.size() * sizeof(ReduceGpuSample));
  cudaMemcpy(desc_buf->data(), desc.data(), desc.size() * sizeof(ReduceGpuSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(reduce_gpu(R, dtype_of<In>, dtype_of<Out>,
                       static_cast<const ReduceGpuSample*>(desc_buf->data()), int(desc.size()),
                       items, outputs, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t k = 0; k < cases.size(); ++k) {
    const ReducePlan& p = plans[k];
    std::vector<Out> want(size_t(p.outputs)), got(size_t(p.outputs));
    reduce_cpu<R>(in[k].data(), want.data(), p, means[k].data(), 1, desc[k].norm);
    cudaMemcpy(got.data(), desc[k].out, got.size() * sizeof(Out), cudaMemcpyDeviceToHost);
    for (size_t o = 0; o < want.size(); ++o) {
      if constexpr (std::is_same_v<Out, float>) {
        if (std::isnan(want[o])) {
          EXPECT_TRUE(std::isnan(got[o])) << "sample " << k << " output " << o;
          continue;
        }
        if (std::isinf(want[o])) {  // (EXPECT_NEAR's inf - inf is NaN)
          EXPECT_EQ(got[o], want[o]) << "sample " << k << " output " << o;
          continue;
        }
        EXPECT_NEAR(got[o], want[o], 1e-5 * std::max(1.0, std::abs(double(want[o]))))
            << "sample " << k << " output " << o;
      } else {
        EXPECT_EQ(got[o], want[o]) << "sample " << k << " output " << o;
      }
    }
  }
}

std::vector<Case> ragged() {
  return {{{0, 3}, {true, false}},
          {{5, 4, 3}, {true, false, true}},
          {{5, 4, 3}, {false, false, false}},
          {{300, 40, 3}, {true, true, false}},
          {{9000}, {true}},
          {{6, 7, 8}, {false, true, false}},
          {{}, {}}};
}

TEST(ReduceGpu, RaggedBatchesMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  check_against_cpu<Reduction::kSum, uint8_t, uint64_t>(1, ragged());
  check_against_cpu<Reduction::kSum, uint8_t, uint8_t>(2, ragged());
  check_against_cpu<Reduction::kSum, int16_t, float>(3, ragged());
  check_against_cpu<Reduction::kSum, float, float>(4, ragged());
  check_against_cpu<Reduction::kMin, int8_t, int8_t>(5, ragged());
  check_against_cpu<Reduction::kMax, float, float>(6, ragged());
  check_against_cpu<Reduction::kMean, int32_t, int32_t>(7, ragged());
  check_against_cpu<Reduction::kMean, uint16_t, float>(8, ragged());
  check_against_cpu<Reduction::kMeanSquare, uint16_t, uint64_t>(9, ragged());
  check_against_cpu<Reduction::kRms, uint8_t, uint8_t>(10, ragged());
  check_against_cpu<Reduction::kRms, int64_t, float>(11, ragged());
  check_against_cpu<Reduction::kVariance, uint8_t, float>(12, ragged(), 1);
  check_against_cpu<Reduction::kStdDev, float, float>(13, ragged());
}

}  // namespace
}  // namespace stoker::kernels
