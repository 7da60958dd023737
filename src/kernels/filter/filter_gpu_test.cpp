#include "stoker/kernels/filter/filter_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (2-D with channels, channel planes, a volume, a filter larger than the image,
// an empty sample; every border; 'valid' shapes) on the GPU equals the CPU kernel bit for bit,
// fused and unfused accumulations included.
TEST(FilterGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> px(0, 255);
  std::uniform_real_distribution<float> u(-0.3f, 1.f);
  struct Dims {
    int64_t planes, d, h, w, c, kd, kh, kw;
    bool valid;
  };
  const std::vector<Dims> dims{{1, 1, 19, 23, 3, 1, 3, 5, false}, {3, 1, 6, 5, 1, 1, 2, 3, false},
                               {1, 4, 5, 6, 2, 3, 2, 3, false},   {1, 1, 3, 2, 1, 1, 7, 6, false},
                               {1, 1, 9, 37, 3, 1, 3, 3, true},   {1, 1, 0, 5, 3, 1, 3, 3, false}};
  const Border borders[] = {Border::kReflect101, Border::kReflect1001, Border::kWrap,
                            Border::kClamp, Border::kConstant};
  for (DType out_type : {DType::kU8, DType::kF32}) {
    std::vector<std::vector<uint8_t>> in;
    std::vector<std::vector<float>> taps;
    std::vector<FilterGpuSample> desc;
    size_t in_total = 0, out_total = 0, tap_total = 0;
    int64_t max_row = 0, max_rows = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dims& g = dims[i];
      FilterShape s;
      s.planes = g.planes, s.channels = g.c, s.border = borders[i % 5];
      const int64_t ext[3] = {g.d, g.h, g.w}, k[3] = {g.kd, g.kh, g.kw};
      for (int a = 0; a < 3; ++a) {
        s.in[a] = ext[a], s.k[a] = k[a];
        s.out[a] = g.valid ? ext[a] - k[a] + 1 : ext[a];
        s.anchor[a] = g.valid ? 0 : int64_t(rng() % uint32_t(k[a]));
      }
      s.fused = fused_prefix(DType::kU8, out_type, s.out[2] * s.channels);
      in.emplace_back(size_t(g.planes * g.d * g.h * g.w * g.c));
      for (auto& v : in.back()) v = uint8_t(px(rng));
      taps.emplace_back(size_t(g.kd * g.kh * g.kw));
      for (auto& v : taps.back()) v = rng() % 4 == 0 ? 0.f : u(rng) / 3;
      FilterGpuSample d;
      d.shape = s;
      if (g.h == 0) d.shape.planes = 0;  // as the operator passes an empty sample
      desc.push_back(d);
      in_total += in.back().size();
      out_total += size_t(s.planes * s.out[0] * s.out[1] * s.out[2] * s.channels);
      tap_total += taps.back().size();
      max_row = std::max(max_row, s.out[2] * s.channels);
      max_rows = std::max(max_rows, d.shape.planes * s.out[0] * s.out[1]);
    }
    const uint8_t fill = 201;
    MemoryPool pool(make_device_allocator(0));
    auto in_buf = pool.acquire(in_total + 4), out_buf = pool.acquire(out_total * 4 + 4);
    auto tap_buf = pool.acquire(tap_total * 4 + 4), fill_buf = pool.acquire(4);
    auto desc_buf = pool.acquire(desc.size() * sizeof(FilterGpuSample));
    cudaMemcpy(fill_buf->data(), &fill, 1, cudaMemcpyHostToDevice);
    size_t at_in = 0, at_out = 0, at_tap = 0;
    std::vector<size_t> out_at;
    for (size_t i = 0; i < desc.size(); ++i) {
      auto& d = desc[i];
      d.in = static_cast<uint8_t*>(in_buf->data()) + at_in;
      d.taps = static_cast<float*>(tap_buf->data()) + at_tap;
      d.out = static_cast<uint8_t*>(out_buf->data()) + at_out * dtype_size(out_type);
      d.fill = fill_buf->data();
      cudaMemcpy(const_cast<void*>(d.in), in[i].data(), in[i].size(), cudaMemcpyHostToDevice);
      cudaMemcpy(const_cast<float*>(d.taps), taps[i].data(), taps[i].size() * 4,
                 cudaMemcpyHostToDevice);
      out_at.push_back(at_out);
      at_in += in[i].size(), at_tap += taps[i].size();
      const auto& s = d.shape;
      at_out += size_t(dims[i].planes * s.out[0] * s.out[1] * s.out[2] * s.channels);
    }
    cudaMemcpy(desc_buf->data(), desc.data(), desc.size() * sizeof(FilterGpuSample),
               cudaMemcpyHostToDevice);
    ASSERT_EQ(filter_gpu(static_cast<const FilterGpuSample*>(desc_buf->data()), int(desc.size()),
                         max_row, max_rows, DType::kU8, out_type, nullptr),
              0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (size_t i = 0; i < desc.size(); ++i) {
      FilterShape s = desc[i].shape;
      s.planes = dims[i].planes;
      const size_t count = size_t(s.planes * s.out[0] * s.out[1] * s.out[2] * s.channels);
      std::vector<float> scratch;
      if (out_type == DType::kU8) {
        std::vector<uint8_t> want(count), got(count);
        filter_cpu(in[i].data(), want.data(), taps[i].data(), s, float(fill), scratch);
        cudaMemcpy(got.data(), static_cast<uint8_t*>(out_buf->data()) + out_at[i], count,
                   cudaMemcpyDeviceToHost);
        EXPECT_EQ(got, want) << "sample " << i;
      } else {
        std::vector<float> want(count), got(count);
        filter_cpu(in[i].data(), want.data(), taps[i].data(), s, float(fill), scratch);
        cudaMemcpy(got.data(), static_cast<float*>(out_buf->data()) + out_at[i], count * 4,
                   cudaMemcpyDeviceToHost);
        EXPECT_EQ(got, want) << "sample " << i;
      }
    }
  }
}

}  // namespace
}  // namespace stoker::kernels
