#include "stoker/kernels/color/jpeg_distortion_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A batch of odd sizes (smaller than a block, not multiples of 16, a 1-pixel image, an empty
// one) and per-sample qualities: the kernel computes the CPU reference's bytes exactly.
TEST(JpegDistortionGpu, BatchEqualsTheCpuReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> any(0, 255);
  // (16 x 65,557: 4,097 blocks, more than one pass of the grid's 1,024 x 4.)
  const std::vector<std::pair<int64_t, int64_t>> sizes{
      {17, 5}, {1, 1}, {64, 64}, {0, 9}, {33, 47}, {100, 3}, {240, 320}, {16, 16 * 4097 + 5}};
  const std::vector<int> qualities{50, 1, 100, 30, 95, 5, 75, 60};
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<uint8_t>> in;
  std::vector<JpegDistortionGpuSample> desc;
  std::vector<std::shared_ptr<Buffer>> keep;
  int64_t most = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto [h, w] = sizes[i];
    in.emplace_back(size_t(h * w * 3));
    for (int64_t y = 0; y < h; ++y)  // smooth in the left half, noise in the right
      for (int64_t x = 0; x < w; ++x)
        for (int c = 0; c < 3; ++c)
          in.back()[size_t((y * w + x) * 3 + c)] =
              uint8_t(2 * x < w ? (x * (c + 2) + y * (3 - c)) % 256 : any(rng));
    auto a = pool.acquire(in.back().size() + 1), b = pool.acquire(in.back().size() + 1);
    ASSERT_EQ(cudaMemcpy(a->data(), in.back().data(), in.back().size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    JpegDistortionGpuSample s;
    s.in = static_cast<const uint8_t*>(a->data()), s.out = static_cast<uint8_t*>(b->data());
    s.h = h, s.w = w, s.tables = jpeg_distortion_tables(qualities[i]);
    desc.push_back(s);
    keep.push_back(a), keep.push_back(b);
    most = std::max(most, ((h + 15) / 16) * ((w + 15) / 16));
  }
  auto d = pool.acquire(desc.size() * sizeof(JpegDistortionGpuSample));
  ASSERT_EQ(cudaMemcpy(d->data(), desc.data(), desc.size() * sizeof(JpegDistortionGpuSample),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(jpeg_distortion_gpu(static_cast<const JpegDistortionGpuSample*>(d->data()),
                                int(desc.size()), most, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<uint8_t> want(in[i].size()), got(in[i].size());
    jpeg_distortion_reference(in[i].data(), want.data(), desc[i].h, desc[i].w, desc[i].tables);
    ASSERT_EQ(cudaMemcpy(got.data(), desc[i].out, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, want) << "sample " << i;
  }
}

}  // namespace
}  // namespace stoker::kernels
