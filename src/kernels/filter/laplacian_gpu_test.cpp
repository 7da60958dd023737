#include "stoker/kernels/filter/laplacian_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// Equal bit for bit, except that any NaN equals any NaN: float16 sums overflow to infinities
// whose differences are NaN, and x86 makes those -NaN where CUDA makes them +NaN.
template <typename T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(T)) == 0;
  else
    return a == b;
}

// A ragged batch of each rank (planes, channels, extents of 1, windows wider than the sample,
// size-1 smoothing, scales, an empty sample; float16's rounding) on the GPU equals the CPU kernel
// bit for bit, for integer and float outputs.
template <typename In, typename Out>
void check(int axes, DType in_type, DType out_type) {
  std::mt19937 rng(uint32_t(17 + axes));
  std::vector<LaplacianShape> shapes;
  for (int k = 0; k < 4; ++k) {
    LaplacianShape s;
    s.axes = axes;
    s.half = std::is_same_v<In, float16>;  // as the operator sets it for float16 data
    s.planes = 1 + k % 2;
    s.channels = 1 + k % 3;
    for (int a = 0; a < axes; ++a) {
      s.extent[a] = k == 3 && a == 0 ? 0 : 1 + int64_t(rng() % 11);
      s.scale[a] = a % 2 ? 0.5f : -1.25f;
      for (int b = 0; b < axes; ++b)
        s.window[a][b] = a == b ? 3 + 2 * int(rng() % 5) : 2 * int(rng() % 4) + 1;
    }
    shapes.push_back(s);
  }
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<In>> in;
  std::vector<LaplacianGpuSample> desc;
  std::vector<std::shared_ptr<Buffer>> keep;
  int64_t max_elems = 0;
  for (const auto& s : shapes) {
    const int64_t n = s.planes * laplacian_plane_size(s);
    in.emplace_back(size_t(n));
    for (auto& v : in.back())
      v = In(float(rng() % 4000) / (std::is_same_v<In, float> ? 7.f : 16.f));
    LaplacianGpuSample d;
    d.shape = s;
    auto ib = pool.acquire(size_t(n) * sizeof(In) + 4),
         ob = pool.acquire(size_t(n) * sizeof(Out) + 4);
    auto sb = pool.acquire(size_t(3 * n) * 4 + 4);
    cudaMemcpy(ib->data(), in.back().data(), size_t(n) * sizeof(In), cudaMemcpyHostToDevice);
    d.in = ib->data(), d.out = ob->data();
    d.a = static_cast<float*>(sb->data()), d.b = d.a + n, d.acc = d.b + n;
    keep.insert(keep.end(), {ib, ob, sb});
    desc.push_back(d);
    max_elems = std::max(max_elems, n);
  }
  std::vector<float> table(kLaplacianWindowTableSize);
  laplacian_window_table(table.data());
  auto tb = pool.acquire(table.size() * 4), db = pool.acquire(desc.size() * sizeof(desc[0]));
  cudaMemcpy(tb->data(), table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db->data(), desc.data(), desc.size() * sizeof(desc[0]), cudaMemcpyHostToDevice);
  ASSERT_EQ(laplacian_gpu(static_cast<const LaplacianGpuSample*>(db->data()),
                          static_cast<const float*>(tb->data()), int(desc.size()), axes, max_elems,
                          in_type, out_type, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    const size_t n = in[i].size();
    std::vector<Out> want(n), got(n);
    std::vector<float> scratch;
    laplacian_cpu(in[i].data(), want.data(), shapes[i], scratch);
    cudaMemcpy(got.data(), desc[i].out, n * sizeof(Out), cudaMemcpyDeviceToHost);
    for (size_t e = 0; e < n; ++e)
      if (!same(got[e], want[e])) {
        ADD_FAILURE() << "axes " << axes << " sample " << i << " element " << e << ": "
                      << double(got[e]) << " != " << double(want[e]);
        break;
      }
  }
}

TEST(LaplacianGpu, RaggedBatchesMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  for (int axes = 1; axes <= 3; ++axes) {
    check<uint8_t, uint8_t>(axes, DType::kU8, DType::kU8);
    check<uint8_t, float>(axes, DType::kU8, DType::kF32);
    check<float, float>(axes, DType::kF32, DType::kF32);
    check<int16_t, int16_t>(axes, DType::kI16, DType::kI16);
    check<int32_t, int32_t>(axes, DType::kI32, DType::kI32);
    check<float16, float>(axes, DType::kF16, DType::kF32);
  }
}

}  // namespace
}  // namespace stoker::kernels
