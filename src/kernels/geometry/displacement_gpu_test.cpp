#include "stoker/kernels/geometry/displacement_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/geometry/displacement_cpu.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch of uint8 images (one of 1 x 1, one masked off) through water and sphere, nearest
// and linear, and a grid mask: the GPU equals the CPU kernels bit for bit.
TEST(DisplaceGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(9);
  const std::vector<std::pair<int64_t, int64_t>> sizes{{37, 53}, {1, 1}, {64, 17}, {20, 31}};
  const int64_t c = 3;
  std::vector<std::vector<uint8_t>> in;
  std::vector<std::vector<float>> tables;
  size_t total = 0, total_tables = 0;
  for (auto [h, w] : sizes) {
    in.emplace_back(size_t(h * w * c));
    for (auto& v : in.back()) v = uint8_t(rng());
    tables.emplace_back(size_t(h + w));
    water_offsets(6.5f, 0.21f, 0.3f, false, h, tables.back().data());
    water_offsets(-4.f, 0.13f, 1.1f, true, w, tables.back().data() + h);
    total += in.back().size(), total_tables += tables.back().size();
  }
  MemoryPool pool(make_device_allocator(0));
  auto in_buf = pool.acquire(total + 4), out_buf = pool.acquire(total + 4);
  auto tab_buf = pool.acquire(total_tables * sizeof(float) + 4);
  auto desc_buf = pool.acquire(sizes.size() * sizeof(DisplaceSample) + 4);
  auto grid_buf = pool.acquire(sizes.size() * sizeof(GridMaskSample) + 4);
  auto* d_in = static_cast<uint8_t*>(in_buf->data());
  auto* d_out = static_cast<uint8_t*>(out_buf->data());
  auto* d_tab = static_cast<float*>(tab_buf->data());
  for (DisplaceMap map : {DisplaceMap::kWater, DisplaceMap::kSphere})
    for (bool linear : {false, true}) {
      std::vector<DisplaceSample> cpu(sizes.size()), gpu(sizes.size());
      std::vector<std::vector<uint8_t>> expected;
      size_t at = 0, tat = 0;
      for (size_t k = 0; k < sizes.size(); ++k) {
        expected.emplace_back(in[k].size());
        auto& s = cpu[k];
        s.in = in[k].data(), s.out = expected.back().data();
        s.h = sizes[k].first, s.w = sizes[k].second, s.fill = 17, s.apply = k != 2;
        s.dx = tables[k].data(), s.dy = tables[k].data() + s.h;
        displace_cpu<uint8_t>(s, c, map, linear);
        gpu[k] = s;
        gpu[k].in = d_in + at, gpu[k].out = d_out + at;
        gpu[k].dx = d_tab + tat, gpu[k].dy = d_tab + tat + s.h;
        cudaMemcpy(d_in + at, in[k].data(), in[k].size(), cudaMemcpyHostToDevice);
        cudaMemcpy(d_tab + tat, tables[k].data(), tables[k].size() * sizeof(float),
                   cudaMemcpyHostToDevice);
        at += in[k].size(), tat += tables[k].size();
      }
      cudaMemcpy(desc_buf->data(), gpu.data(), gpu.size() * sizeof(DisplaceSample),
                 cudaMemcpyHostToDevice);
      ASSERT_EQ(displace_gpu(static_cast<const DisplaceSample*>(desc_buf->data()), int(gpu.size()),
                             30, 25, int(c), map, linear, DType::kU8, nullptr),
                0);
      at = 0;
      for (size_t k = 0; k < sizes.size(); ++k) {
        std::vector<uint8_t> got(in[k].size());
        cudaMemcpy(got.data(), d_out + at, got.size(), cudaMemcpyDeviceToHost);
        EXPECT_EQ(got, expected[k])
            << "map " << int(map) << " linear " << linear << " sample " << k;
        at += in[k].size();
      }
    }
  // Grid masks with per-sample tiles and angles.
  std::vector<GridMaskSample> cpu(sizes.size()), gpu(sizes.size());
  std::vector<std::vector<uint8_t>> expected;
  size_t at = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    expected.emplace_back(in[k].size());
    auto& s = cpu[k];
    s.in = in[k].data(), s.out = expected.back().data(), s.h = sizes[k].first,
    s.w = sizes[k].second;
    grid_mask_setup(s, 3 + int64_t(k) * 4, 0.4f, 0.3f * float(k), 2.f, -5.5f);
    grid_mask_cpu<uint8_t>(s, c);
    gpu[k] = s, gpu[k].in = d_in + at, gpu[k].out = d_out + at;
    at += in[k].size();
  }
  cudaMemcpy(grid_buf->data(), gpu.data(), gpu.size() * sizeof(GridMaskSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(grid_mask_gpu(static_cast<const GridMaskSample*>(grid_buf->data()), int(gpu.size()), 30,
                          25, int(c), DType::kU8, nullptr),
            0);
  at = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<uint8_t> got(in[k].size());
    cudaMemcpy(got.data(), d_out + at, got.size(), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, expected[k]) << "grid mask sample " << k;
    at += in[k].size();
  }
}

}  // namespace
}  // namespace stoker::kernels
