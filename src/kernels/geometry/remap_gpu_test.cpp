#include "stoker/kernels/geometry/remap_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/geometry/remap_cpu.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (a 1x1 image among them; 1 and 3 channels) with maps reaching past every edge
// (NaN among them), every interpolation, both pixel origins: the GPU equals the CPU bit for bit.
template <typename T>
void check_type(DType type) {
  std::mt19937 rng(5);
  struct Size {
    int64_t h, w, c;
  };
  const std::vector<Size> sizes{{37, 53, 3}, {1, 1, 1}, {64, 17, 1}, {2, 9, 3}};
  std::uniform_real_distribution<float> u(-1.5f, 1.2f);
  std::vector<std::vector<T>> in;
  std::vector<std::vector<float>> mx, my;
  size_t total = 0, map_total = 0;
  for (auto [h, w, c] : sizes) {
    in.emplace_back(size_t(h * w * c));
    for (auto& v : in.back()) v = T(int(rng() % 250) - (std::is_signed_v<T> ? 100 : 0));
    mx.emplace_back(size_t(h * w)), my.emplace_back(size_t(h * w));
    for (size_t p = 0; p < mx.back().size(); ++p) {
      mx.back()[p] = u(rng) * float(w) + float(w) * 0.25f;
      my.back()[p] = u(rng) * float(h) + float(h) * 0.25f;
    }
    mx.back()[0] = std::nanf("");
    total += in.back().size(), map_total += mx.back().size();
  }
  MemoryPool pool(make_device_allocator(0));
  auto in_buf = pool.acquire(total * sizeof(T) + 4), out_buf = pool.acquire(total * sizeof(T) + 4);
  auto map_buf = pool.acquire(2 * map_total * sizeof(float));
  auto desc_buf = pool.acquire(sizes.size() * sizeof(RemapSample));
  auto* d_in = static_cast<T*>(in_buf->data());
  auto* d_out = static_cast<T*>(out_buf->data());
  auto* d_maps = static_cast<float*>(map_buf->data());
  for (auto interp : {RemapInterp::kNearest, RemapInterp::kLinear, RemapInterp::kCubic})
    for (float shift : {0.f, -0.5f}) {
      std::vector<RemapSample> gpu(sizes.size());
      std::vector<std::vector<T>> expected;
      size_t at = 0, map_at = 0;
      for (size_t k = 0; k < sizes.size(); ++k) {
        expected.emplace_back(in[k].size());
        RemapSample s;
        s.in = in[k].data(), s.out = expected.back().data();
        s.mapx = mx[k].data(), s.mapy = my[k].data();
        s.h = sizes[k].h, s.w = sizes[k].w, s.c = sizes[k].c;
        remap_cpu<T>(s, interp, shift);
        gpu[k] = s, gpu[k].in = d_in + at, gpu[k].out = d_out + at;
        gpu[k].mapx = d_maps + map_at, gpu[k].mapy = d_maps + map_total + map_at;
        cudaMemcpy(d_in + at, in[k].data(), in[k].size() * sizeof(T), cudaMemcpyHostToDevice);
        cudaMemcpy(d_maps + map_at, mx[k].data(), mx[k].size() * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(d_maps + map_total + map_at, my[k].data(), my[k].size() * 4,
                   cudaMemcpyHostToDevice);
        at += in[k].size(), map_at += mx[k].size();
      }
      cudaMemcpy(desc_buf->data(), gpu.data(), gpu.size() * sizeof(RemapSample),
                 cudaMemcpyHostToDevice);
      ASSERT_EQ(remap_gpu(static_cast<const RemapSample*>(desc_buf->data()), int(gpu.size()), 30,
                          25, interp, shift, type, nullptr),
                0);
      at = 0;
      for (size_t k = 0; k < sizes.size(); ++k) {
        std::vector<T> got(in[k].size());
        cudaMemcpy(got.data(), d_out + at, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
        EXPECT_EQ(got, expected[k])
            << "interp " << int(interp) << " shift " << shift << " sample " << k;
        at += in[k].size();
      }
    }
}

TEST(RemapGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  check_type<uint8_t>(DType::kU8);
  check_type<uint16_t>(DType::kU16);
  check_type<int16_t>(DType::kI16);
  check_type<float>(DType::kF32);
}

// More samples than one launch's grid holds (65535): every one is remapped.
TEST(RemapGpu, BatchesBeyondOneGridAreChunked) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const int n = 70000;
  MemoryPool pool(make_device_allocator(0));
  auto in_buf = pool.acquire(size_t(n)), out_buf = pool.acquire(size_t(n));
  auto map_buf = pool.acquire(2 * sizeof(float)), desc_buf = pool.acquire(n * sizeof(RemapSample));
  std::vector<uint8_t> in(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) in[size_t(i)] = uint8_t(i % 251 + 1);
  const float zero[2] = {0.f, 0.f};
  cudaMemcpy(in_buf->data(), in.data(), in.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(map_buf->data(), zero, sizeof(zero), cudaMemcpyHostToDevice);
  cudaMemset(out_buf->data(), 0, size_t(n));
  std::vector<RemapSample> desc(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& s = desc[size_t(i)];
    s.in = static_cast<uint8_t*>(in_buf->data()) + i;
    s.out = static_cast<uint8_t*>(out_buf->data()) + i;
    s.mapx = s.mapy = static_cast<const float*>(map_buf->data());
    s.h = s.w = s.c = 1;
  }
  cudaMemcpy(desc_buf->data(), desc.data(), desc.size() * sizeof(RemapSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(remap_gpu(static_cast<const RemapSample*>(desc_buf->data()), n, 1, 1,
                      RemapInterp::kLinear, 0.f, DType::kU8, nullptr),
            0);
  std::vector<uint8_t> got(static_cast<size_t>(n));
  cudaMemcpy(got.data(), out_buf->data(), got.size(), cudaMemcpyDeviceToHost);
  EXPECT_EQ(got, in);
}

}  // namespace
}  // namespace stoker::kernels
