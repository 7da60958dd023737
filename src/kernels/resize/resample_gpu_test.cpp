// The GPU resampling and flip kernels against the CPU kernels (which the CPU tests check
// against slow references): ragged batches of odd sizes, every filter, regions, mirrors,
// normalisation, planar output and every output type.
#include "stoker/kernels/resize/resample_gpu.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/geometry/flip_cpu.hpp"
#include "stoker/kernels/resize/resize_cpu.hpp"

namespace stoker::kernels {
namespace {

struct Case {
  int64_t in_h, in_w, out_h, out_w;
  ResizeRoi roi;
  Filter filter;
};

template <typename T>
std::vector<T> to_host(const void* d, size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// Builds the tables for one case as the ops layer does, runs the kernel for the whole batch.
TEST(ResampleGpu, MatchesTheCpuResizeOnARaggedBatch) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::vector<Case> cases = {{37, 53, 11, 17, {0, 37, 0, 53}, Filter::kLinear},
                             {20, 30, 41, 45, {0, 20, 0, 30}, Filter::kCubic},
                             {64, 48, 23, 61, {3.5, 40, 47, 2}, Filter::kLanczos3},
                             {9, 9, 9, 9, {0, 9, 0, 9}, Filter::kGaussian},
                             {300, 420, 5, 6, {0, 300, 0, 420}, Filter::kLinear},
                             {1, 7, 3, 2, {0, 1, 0, 7}, Filter::kNearest}};
  const int64_t C = 3;
  MemoryPool device(make_device_allocator(0));
  std::mt19937 rng(3);
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::shared_ptr<Buffer>> in_dev, out_dev;
  std::vector<ResampleGpuSample> desc;
  std::vector<int32_t> first, count;
  std::vector<float> weights;
  for (const auto& c : cases) {
    std::vector<uint8_t> img(size_t(c.in_h * c.in_w * C));
    for (auto& v : img) v = uint8_t(rng() & 255);
    inputs.push_back(img);
    in_dev.push_back(device.acquire(img.size()));
    ASSERT_EQ(cudaMemcpy(in_dev.back()->data(), img.data(), img.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    out_dev.push_back(device.acquire(size_t(c.out_h * c.out_w * C) * 4));
    ResampleGpuSample d;
    d.in = in_dev.back()->data(), d.in_h = c.in_h, d.in_w = c.in_w, d.in_stride = c.in_w * C;
    d.out = out_dev.back()->data(), d.out_h = int32_t(c.out_h), d.out_w = int32_t(c.out_w);
    auto wx = resample_weights(c.in_w, c.out_w, c.filter, true, c.roi.x0, c.roi.x1);
    auto wy = resample_weights(c.in_h, c.out_h, c.filter, true, c.roi.y0, c.roi.y1, true);
    d.x_entry = int64_t(first.size());
    first.insert(first.end(), wx.first.begin(), wx.first.end());
    count.insert(count.end(), wx.count.begin(), wx.count.end());
    d.y_entry = int64_t(first.size());
    first.insert(first.end(), wy.first.begin(), wy.first.end());
    count.insert(count.end(), wy.count.begin(), wy.count.end());
    d.x_weight = int64_t(weights.size());
    weights.insert(weights.end(), wx.weights.begin(), wx.weights.end());
    d.y_weight = int64_t(weights.size());
    weights.insert(weights.end(), wy.weights.begin(), wy.weights.end());
    d.support_x = wx.support, d.support_y = wy.support;
    desc.push_back(d);
  }
  auto upload = [&](const auto& v) {
    auto b = device.acquire(v.size() * sizeof(v[0]));
    EXPECT_EQ(cudaMemcpy(b->data(), v.data(), v.size() * sizeof(v[0]), cudaMemcpyHostToDevice),
              cudaSuccess);
    return b;
  };
  auto d_desc = upload(desc), d_first = upload(first), d_count = upload(count),
       d_weights = upload(weights);
  ResampleGpuTables t{static_cast<const int32_t*>(d_first->data()),
                      static_cast<const int32_t*>(d_count->data()),
                      static_cast<const float*>(d_weights->data())};
  for (DType out_type : {DType::kU8, DType::kF32}) {
    ResampleGpuParams p;
    p.in_type = DType::kU8, p.out_type = out_type;
    p.channels = p.out_channels = int32_t(C);
    for (auto& v : p.inv_std) v = 1.f;
    ASSERT_EQ(resample_gpu(static_cast<const ResampleGpuSample*>(d_desc->data()), int(cases.size()),
                           300, 420, p, t, nullptr),
              0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (size_t k = 0; k < cases.size(); ++k) {
      const auto& c = cases[k];
      std::vector<float> ref(size_t(c.out_h * c.out_w * C)), scratch;
      resize_cpu<float, uint8_t>(dense_image(ref.data(), c.out_h, c.out_w, C),
                                 dense_image<const uint8_t>(inputs[k].data(), c.in_h, c.in_w, C),
                                 c.filter, true, scratch, c.roi);
      if (out_type == DType::kF32) {
        auto got = to_host<float>(out_dev[k]->data(), ref.size());
        for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-3) << k << " " << i;
      } else {
        auto got = to_host<uint8_t>(out_dev[k]->data(), ref.size());
        for (size_t i = 0; i < ref.size(); ++i)
          ASSERT_NEAR(got[i], convert_sat<uint8_t>(ref[i]), 1) << k << " " << i;
      }
    }
  }
}

TEST(ResampleGpu, CopyPlansNormaliseMirrorPadAndGoPlanar) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  // One 5x6x3 image; a 4x4 window at (y 2, x 3) reaching out of it (fill), mirrored, CHW with
  // a fourth zero channel, (v - mean) * inv_std + shift in float16.
  const int64_t H = 5, W = 6, C = 3;
  std::vector<uint8_t> img(size_t(H * W * C));
  for (size_t i = 0; i < img.size(); ++i) img[i] = uint8_t(i * 3);
  MemoryPool device(make_device_allocator(0));
  auto in = device.acquire(img.size());
  ASSERT_EQ(cudaMemcpy(in->data(), img.data(), img.size(), cudaMemcpyHostToDevice), cudaSuccess);
  auto out = device.acquire(4 * 4 * 4 * 2);
  std::vector<int32_t> first, count;
  for (int i = 0; i < 4; ++i) {  // x: 3..6 (6 outside), then y: 2..5 (5 outside)
    first.push_back(3 + i < W ? 3 + i : 0), count.push_back(3 + i < W ? 1 : 0);
  }
  for (int i = 0; i < 4; ++i) first.push_back(2 + i < H ? 2 + i : 0), count.push_back(2 + i < H);
  std::vector<float> weights(8, 1.f);
  ResampleGpuSample d;
  d.in = in->data(), d.in_h = H, d.in_w = W, d.in_stride = W * C;
  d.out = out->data(), d.out_h = 4, d.out_w = 4;
  d.x_entry = 0, d.y_entry = 4, d.x_weight = 0, d.y_weight = 4, d.support_x = d.support_y = 1;
  d.mirror_x = 1;
  auto up = [&](const auto& v) {
    auto b = device.acquire(v.size() * sizeof(v[0]));
    EXPECT_EQ(cudaMemcpy(b->data(), v.data(), v.size() * sizeof(v[0]), cudaMemcpyHostToDevice),
              cudaSuccess);
    return b;
  };
  std::vector<ResampleGpuSample> descs{d};
  auto dd = up(descs), df = up(first), dc = up(count), dw = up(weights);
  ResampleGpuParams p;
  p.in_type = DType::kU8, p.out_type = DType::kF16;
  p.channels = 3, p.out_channels = 4, p.planar = 1, p.shift = 0.5f;
  const float mean[3] = {10, 20, 30}, inv[3] = {0.5f, 0.25f, 2.f}, fill[3] = {-1, -2, -3};
  for (int c = 0; c < 3; ++c) p.mean[c] = mean[c], p.inv_std[c] = inv[c], p.fill[c] = fill[c];
  ASSERT_EQ(
      resample_gpu(static_cast<const ResampleGpuSample*>(dd->data()), 1, 4, 4, p,
                   {static_cast<const int32_t*>(df->data()),
                    static_cast<const int32_t*>(dc->data()), static_cast<const float*>(dw->data())},
                   nullptr),
      0);
  auto got = to_host<uint16_t>(out->data(), 64);
  for (int c = 0; c < 4; ++c)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        const int sx = 3 + (3 - x), sy = 2 + y;  // mirrored
        float expect = 0.f;
        if (c < 3)
          expect = (sx < W && sy < H)
                       ? (float(img[size_t((sy * W + sx) * C + c)]) - mean[c]) * inv[c] + 0.5f
                       : fill[c];
        __half_raw raw;
        raw.x = got[size_t((c * 4 + y) * 4 + x)];
        EXPECT_FLOAT_EQ(__half2float(__half(raw)), __half2float(__float2half_rn(expect)))
            << c << " " << y << " " << x;
      }
}

// Ragged launches (every sample its own size and flags) with a block count from a tiny or a
// large size hint (blocks striding over many pixels, or many idle), mixed channel counts and
// the 3-channel kernel.
TEST(FlipGpu, MatchesTheCpuFlipForHwcAndPlanes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  using Dims = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // planes, h, w, channels
  const std::vector<Dims> mixed = {{1, 7, 9, 3}, {3, 5, 11, 1}, {1, 4, 2, 4}, {1, 1, 13, 3}};
  const std::vector<Dims> three = {{1, 7, 9, 3}, {1, 1, 13, 3}, {1, 40, 33, 3}};
  for (int round = 0; round < 8; ++round) {
    const auto& dims = round < 4 ? mixed : three;
    std::vector<FlipGpuSample> desc;
    std::vector<std::vector<uint16_t>> src, ref;
    std::vector<std::shared_ptr<Buffer>> keep;
    int64_t max_elements = 0;
    for (size_t k = 0; k < dims.size(); ++k) {
      auto [planes, h, w, c] = dims[k];
      const bool hor = (round + k) & 1, ver = ((round + k) >> 1) & 1;
      const size_t n = size_t(planes * h * w * c);
      src.emplace_back(n);
      for (size_t i = 0; i < n; ++i) src.back()[i] = uint16_t(i * 7 + 1 + k);
      auto in = device.acquire(n * 2), out = device.acquire(n * 2);
      ASSERT_EQ(cudaMemcpy(in->data(), src.back().data(), n * 2, cudaMemcpyHostToDevice),
                cudaSuccess);
      desc.push_back({in->data(), out->data(), planes, h, w, c, hor, ver});
      keep.push_back(in), keep.push_back(out);
      ref.emplace_back(n);
      for (int64_t p = 0; p < planes; ++p)
        flip_cpu<uint16_t>(dense_image(ref.back().data() + p * h * w * c, h, w, c),
                           dense_image<const uint16_t>(src.back().data() + p * h * w * c, h, w, c),
                           hor, ver);
      max_elements = std::max(max_elements, int64_t(n));
    }
    auto dd = device.acquire(desc.size() * sizeof(FlipGpuSample));
    ASSERT_EQ(cudaMemcpy(dd->data(), desc.data(), desc.size() * sizeof(FlipGpuSample),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    const int64_t hint = round % 2 ? 1 : 100000;
    ASSERT_EQ(flip_gpu(static_cast<const FlipGpuSample*>(dd->data()), int(desc.size()), hint,
                       max_elements, round >= 4, 2, nullptr),
              0);
    for (size_t k = 0; k < dims.size(); ++k)
      EXPECT_EQ(to_host<uint16_t>(desc[k].out, ref[k].size()), ref[k])
          << "sample " << k << ", round " << round;
  }
}

}  // namespace
}  // namespace stoker::kernels
