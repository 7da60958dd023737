#include "stoker/kernels/filter/rank_filter_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (planes, channels, windows wider than the image, even masks, every border, an
// empty sample) on the GPU equals the CPU kernel exactly, for each operation, type and a few
// iteration counts.
template <typename T>
void check(DType type, std::mt19937& rng) {
  const Border borders[] = {Border::kConstant, Border::kClamp, Border::kReflect1001,
                            Border::kReflect101, Border::kWrap};
  for (RankOp op : {RankOp::kMedian, RankOp::kDilate, RankOp::kErode})
    for (int iterations : {1, 2, 3}) {
      MemoryPool pool(make_device_allocator(0));
      std::vector<RankShape> shapes;
      std::vector<std::vector<T>> in;
      std::vector<RankGpuSample> desc;
      std::vector<std::shared_ptr<Buffer>> keep;
      int64_t max_elems = 0;
      for (int k = 0; k < 5; ++k) {
        RankShape s;
        s.planes = 1 + k % 2, s.height = k == 4 ? 0 : 1 + rng() % 19, s.width = 1 + rng() % 23;
        s.channels = 1 + k % 4;
        s.kh = op == RankOp::kMedian ? 1 + 2 * int(rng() % 6) : 1 + int(rng() % 9);
        s.kw = op == RankOp::kMedian ? 1 + 2 * int(rng() % 6) : 1 + int(rng() % 9);
        s.ay = op == RankOp::kMedian ? s.kh / 2 : int32_t(rng() % uint32_t(s.kh));
        s.ax = op == RankOp::kMedian ? s.kw / 2 : int32_t(rng() % uint32_t(s.kw));
        s.border = op == RankOp::kMedian ? Border::kClamp : borders[k];
        const int64_t n = s.planes * s.height * s.width * s.channels;
        in.emplace_back(size_t(n));
        for (auto& v : in.back())
          v = std::is_same_v<T, float> ? T(float(int(rng() % 2001) - 1000) / 8) : T(rng());
        RankGpuSample d;
        d.shape = s;
        auto ib = pool.acquire(size_t(n) * sizeof(T) + 4),
             ob = pool.acquire(size_t(n) * sizeof(T) + 4);
        auto tb = pool.acquire(size_t(n) * sizeof(T) + 4);
        cudaMemcpy(ib->data(), in.back().data(), size_t(n) * sizeof(T), cudaMemcpyHostToDevice);
        d.in = ib->data(), d.out = ob->data(), d.tmp = tb->data();
        keep.insert(keep.end(), {ib, ob, tb});
        desc.push_back(d);
        shapes.push_back(s);
        max_elems = std::max(max_elems, n);
      }
      auto db = pool.acquire(desc.size() * sizeof(desc[0]));
      cudaMemcpy(db->data(), desc.data(), desc.size() * sizeof(desc[0]), cudaMemcpyHostToDevice);
      ASSERT_EQ(rank_filter_gpu(static_cast<const RankGpuSample*>(db->data()), int(desc.size()),
                                max_elems, type, op, iterations, nullptr),
                0);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      for (size_t i = 0; i < desc.size(); ++i) {
        std::vector<T> want(in[i].size()), got(in[i].size()), tmp;
        std::vector<uint32_t> keys;
        rank_filter_cpu(in[i].data(), want.data(), shapes[i], op, iterations, tmp, keys);
        cudaMemcpy(got.data(), desc[i].out, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
        EXPECT_EQ(got, want) << "op " << int(op) << " iterations " << iterations << " sample " << i;
      }
    }
}

TEST(RankFilterGpu, RaggedBatchesMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(3);
  check<uint8_t>(DType::kU8, rng);
  check<uint16_t>(DType::kU16, rng);
  check<float>(DType::kF32, rng);
}

}  // namespace
}  // namespace stoker::kernels
