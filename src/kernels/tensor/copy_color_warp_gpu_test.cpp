// The strided-copy, colour and warp GPU kernels against the CPU kernels (which their own tests
// check against references): odd sizes, padding with fill, a batch of several descriptors.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/color/color_cpu.hpp"
#include "stoker/kernels/color/color_gpu.hpp"
#include "stoker/kernels/geometry/slice_cpu.hpp"
#include "stoker/kernels/geometry/warp_affine_cpu.hpp"
#include "stoker/kernels/geometry/warp_affine_gpu.hpp"
#include "stoker/kernels/tensor/copy_gpu.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
std::shared_ptr<Buffer> to_device(MemoryPool& pool, const std::vector<T>& v) {
  auto b = pool.acquire(std::max<size_t>(1, v.size() * sizeof(T)));
  EXPECT_EQ(cudaMemcpy(b->data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return b;
}

template <typename T>
std::vector<T> to_host(const void* d, size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

TEST(StridedCopyGpu, PaddingMatchesTheCpuSlice) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  // Two samples: 7x5x3 padded to 9x8x3 (fill 7), 4x11x3 padded to 6x12x3 (fill 7).
  const std::vector<std::vector<int64_t>> ins = {{7, 5, 3}, {4, 11, 3}},
                                          outs = {{9, 8, 3}, {6, 12, 3}};
  std::vector<std::shared_ptr<Buffer>> keep;
  std::vector<StridedCopy> desc;
  std::vector<std::vector<uint16_t>> srcs;
  for (size_t s = 0; s < ins.size(); ++s) {
    const auto& id = ins[s];
    const auto& od = outs[s];
    std::vector<uint16_t> src(size_t(id[0] * id[1] * id[2]));
    for (size_t k = 0; k < src.size(); ++k) src[k] = uint16_t(k * 31 + s);
    srcs.push_back(src);
    keep.push_back(to_device(device, src));
    auto out = device.acquire(size_t(od[0] * od[1] * od[2]) * 2);
    keep.push_back(out);
    StridedCopy d;
    d.in = keep[keep.size() - 2]->data(), d.out = out->data(), d.ndim = 3, d.count = 1, d.fill = 7;
    for (int k = 0; k < 3; ++k) {
      d.shape[k] = od[size_t(k)], d.in_shape[k] = id[size_t(k)], d.count *= od[size_t(k)];
      d.out_stride[k] = k == 0 ? od[1] * od[2] : k == 1 ? od[2] : 1;
      d.in_stride[k] = k == 0 ? id[1] * id[2] : k == 1 ? id[2] : 1;
    }
    desc.push_back(d);
  }
  auto dd = to_device(device, desc);
  ASSERT_EQ(
      strided_copy_gpu(static_cast<const StridedCopy*>(dd->data()), 2, 9 * 8 * 3, 2, nullptr),
      0);
  for (size_t s = 0; s < ins.size(); ++s) {
    const auto& od = outs[s];
    const size_t n = size_t(od[0] * od[1] * od[2]);
    auto got = to_host<uint16_t>(desc[s].out, n);
    std::vector<uint16_t> ref(n);
    const uint16_t fill = 7;
    slice_cpu(reinterpret_cast<const uint8_t*>(srcs[s].data()), ins[s], 2, {0, 0, 0}, od,
              reinterpret_cast<const uint8_t*>(&fill), reinterpret_cast<uint8_t*>(ref.data()));
    EXPECT_EQ(got, ref) << "sample " << s;
  }
}

// Windows reaching outside the input on every axis, each axis with its own border, on the
// GPU equal the CPU's strided copy (whose test compares the borders with numpy.pad's modes).
TEST(StridedCopyGpu, BordersMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  std::mt19937 rng(9);
  std::uniform_int_distribution<int64_t> extent(1, 9), offset(-12, 8), border(0, 4);
  std::vector<std::shared_ptr<Buffer>> keep;
  std::vector<StridedCopy> desc, host;
  std::vector<std::vector<uint32_t>> expected;
  int64_t most = 0;
  for (int s = 0; s < 40; ++s) {
    StridedCopy d;
    d.ndim = 3, d.count = 1, d.fill = 0xdeadbeef;
    int64_t in_volume = 1;
    for (int k = 2; k >= 0; --k) {
      d.in_shape[k] = extent(rng), d.shape[k] = extent(rng) + 4, d.in_start[k] = offset(rng);
      d.border[k] = Border(border(rng));
      d.in_stride[k] = in_volume, d.out_stride[k] = d.count;
      in_volume *= d.in_shape[k], d.count *= d.shape[k];
    }
    std::vector<uint32_t> src(static_cast<size_t>(in_volume));
    for (size_t k = 0; k < src.size(); ++k) src[k] = uint32_t(k * 7 + 1000 * size_t(s));
    expected.emplace_back(size_t(d.count));
    StridedCopy c = d;
    c.in = src.data(), c.out = expected.back().data();
    strided_copy_cpu(c, 4);
    keep.push_back(to_device(device, src));
    d.in = keep.back()->data();
    keep.push_back(device.acquire(size_t(d.count) * 4));
    d.out = keep.back()->data();
    desc.push_back(d);
    most = std::max(most, d.count);
  }
  auto dd = to_device(device, desc);
  ASSERT_EQ(strided_copy_gpu(static_cast<const StridedCopy*>(dd->data()), int(desc.size()), most,
                             4, nullptr),
            0);
  for (size_t s = 0; s < desc.size(); ++s) {
    EXPECT_EQ(to_host<uint32_t>(desc[s].out, expected[s].size()), expected[s]) << "sample " << s;
  }
}

TEST(ColorGpu, AffineAndMatrixMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  std::mt19937 rng(5);
  std::vector<uint8_t> img(size_t(13 * 17 * 3));
  for (auto& v : img) v = uint8_t(rng() & 255);
  auto in = to_device(device, img);
  auto out = device.acquire(img.size() * 4);
  const Mat3 m = hsv_matrix(25, 1.3, 0.9);
  for (bool matrix : {false, true}) {
    ColorGpuSample d;
    d.in = in->data(), d.out = out->data(), d.elements = int64_t(img.size());
    d.gain = 1.2f, d.bias = -9.5f;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) d.m[3 * r + c] = float(m[size_t(r)][size_t(c)]);
    d.offset[0] = 3, d.offset[1] = -2, d.offset[2] = 0.5f;
    std::vector<ColorGpuSample> descs{d};
    auto dd = to_device(device, descs);
    ASSERT_EQ(color_gpu(static_cast<const ColorGpuSample*>(dd->data()), 1, d.elements, matrix,
                        DType::kU8, DType::kF32, nullptr),
              0);
    auto got = to_host<float>(out->data(), img.size());
    std::vector<float> ref(img.size());
    if (matrix)
      color_matrix_cpu(img.data(), int64_t(img.size() / 3), m, {3, -2, 0.5}, ref.data());
    else
      affine_cpu(img.data(), int64_t(img.size()), 1.2f, -9.5f, ref.data());
    for (size_t k = 0; k < ref.size(); ++k) ASSERT_NEAR(got[k], ref[k], 1e-3) << k;
  }
}

TEST(WarpAffineGpu, MatchesTheCpuWithFillAndClamp) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  const int64_t H = 19, W = 23, C = 3, OH = 15, OW = 29;
  std::vector<float> img(size_t(H * W * C));
  for (size_t k = 0; k < img.size(); ++k) img[k] = float((k * 37) % 251);
  auto in = to_device(device, img);
  auto out = device.acquire(size_t(OH * OW * C) * 4);
  const Affine m{0.8, 0.3, -2.5, -0.25, 1.1, 4.0};
  for (bool linear : {true, false}) {
    for (bool use_fill : {true, false}) {
      WarpGpuSample d;
      d.in = in->data(), d.out = out->data(), d.h = H, d.w = W, d.oh = OH, d.ow = OW;
      for (int k = 0; k < 6; ++k) d.m[k] = m[size_t(k)];
      std::vector<WarpGpuSample> descs{d};
      auto dd = to_device(device, descs);
      std::vector<float> fill{5, 6, 7};
      ASSERT_EQ(warp_affine_gpu(static_cast<const WarpGpuSample*>(dd->data()), 1, OH, OW, int(C),
                                linear, use_fill ? fill.data() : nullptr, DType::kF32, DType::kF32,
                                nullptr),
                0);
      auto got = to_host<float>(out->data(), size_t(OH * OW * C));
      std::vector<float> ref(got.size());
      warp_affine_cpu(img.data(), H, W, C, ref.data(), OH, OW, m, linear,
                      use_fill ? &fill : nullptr);
      for (size_t k = 0; k < ref.size(); ++k)
        ASSERT_NEAR(got[k], ref[k], 1e-3) << k << (linear ? " linear" : " nn");
    }
  }
}

// `dtype`: uint8 in, float32 out keeps the interpolated values; float32 in, uint8 / int16 out
// rounds and saturates them, as the CPU kernel with the same pair. Other pairs are refused.
TEST(WarpAffineGpu, OtherOutputTypesMatchTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  const int64_t H = 13, W = 17, C = 3, OH = 11, OW = 19;
  std::vector<uint8_t> img8(size_t(H * W * C));
  std::vector<float> imgf(img8.size());
  for (size_t k = 0; k < img8.size(); ++k) {
    img8[k] = uint8_t((k * 37) % 251);
    imgf[k] = float(int((k * 53) % 701) - 200) + 0.25f;  // beyond uint8's range both ways
  }
  auto in8 = to_device(device, img8);
  auto inf = to_device(device, imgf);
  auto out = device.acquire(size_t(OH * OW * C) * 4);
  const Affine m{0.8, 0.3, -2.5, -0.25, 1.1, 4.0};
  std::vector<float> fill{5.5f, -6.f, 300.f};
  auto warp = [&](const void* src, DType in_type, DType out_type) {
    WarpGpuSample d;
    d.in = src, d.out = out->data(), d.h = H, d.w = W, d.oh = OH, d.ow = OW;
    for (int k = 0; k < 6; ++k) d.m[k] = m[size_t(k)];
    std::vector<WarpGpuSample> descs{d};
    auto dd = to_device(device, descs);
    const int err = warp_affine_gpu(static_cast<const WarpGpuSample*>(dd->data()), 1, OH, OW,
                                    int(C), true, fill.data(), in_type, out_type, nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return err;
  };
  const size_t n = size_t(OH * OW * C);
  ASSERT_EQ(warp(in8->data(), DType::kU8, DType::kF32), 0);
  {
    auto got = to_host<float>(out->data(), n);
    std::vector<float> ref(n);
    warp_affine_cpu(img8.data(), H, W, C, ref.data(), OH, OW, m, true, &fill);
    for (size_t k = 0; k < n; ++k) ASSERT_NEAR(got[k], ref[k], 1e-3) << k;
  }
  ASSERT_EQ(warp(inf->data(), DType::kF32, DType::kU8), 0);
  {
    auto got = to_host<uint8_t>(out->data(), n);
    std::vector<uint8_t> ref(n);
    warp_affine_cpu(imgf.data(), H, W, C, ref.data(), OH, OW, m, true, &fill);
    for (size_t k = 0; k < n; ++k) ASSERT_NEAR(int(got[k]), int(ref[k]), 1) << k;
  }
  ASSERT_EQ(warp(inf->data(), DType::kF32, DType::kI16), 0);
  {
    auto got = to_host<int16_t>(out->data(), n);
    std::vector<int16_t> ref(n);
    warp_affine_cpu(imgf.data(), H, W, C, ref.data(), OH, OW, m, true, &fill);
    for (size_t k = 0; k < n; ++k) ASSERT_NEAR(int(got[k]), int(ref[k]), 1) << k;
  }
  EXPECT_NE(warp(in8->data(), DType::kU8, DType::kI16), 0);
  EXPECT_FALSE(warp_affine_dtype_supported(DType::kU8, DType::kI16));
  EXPECT_TRUE(warp_affine_dtype_supported(DType::kI32, DType::kF32));
}

// A ragged uint8 batch (1, 3 and 5 channels: the kernel's specialised and generic paths) with
// a tile grid smaller than every sample: each block walks its sample's tiles, and every output
// pixel matches the CPU kernel (bilinear within one level at rounding ties, nearest exactly).
TEST(WarpAffineGpu, RaggedBatchWithASmallTileGridMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  std::mt19937 rng(5);
  const int64_t dims[][4] = {{37, 61, 40, 70}, {90, 33, 81, 33}, {16, 16, 50, 9}};
  for (int C : {1, 3, 5}) {
    for (bool linear : {true, false}) {
      std::vector<std::vector<uint8_t>> imgs;
      std::vector<std::shared_ptr<Buffer>> ins, outs;
      std::vector<WarpGpuSample> descs;
      std::vector<Affine> maps;
      for (const auto& d : dims) {
        std::vector<uint8_t> img(size_t(d[0] * d[1] * C));
        for (auto& v : img) v = uint8_t(rng() % 256);
        const double a = 0.3 * double(descs.size() + 1), c = std::cos(a), s = std::sin(a);
        maps.push_back({c, -s, d[1] / 2.0 + 3, s, c, -4.5});
        ins.push_back(to_device(device, img));
        outs.push_back(device.acquire(size_t(d[2] * d[3] * C)));
        WarpGpuSample w;
        w.in = ins.back()->data(), w.out = outs.back()->data();
        w.h = d[0], w.w = d[1], w.oh = d[2], w.ow = d[3];
        for (int k = 0; k < 6; ++k) w.m[k] = maps.back()[size_t(k)];
        descs.push_back(w);
        imgs.push_back(std::move(img));
      }
      auto dd = to_device(device, descs);
      std::vector<float> fill(size_t(C), 200.f);
      ASSERT_EQ(warp_affine_gpu(static_cast<const WarpGpuSample*>(dd->data()), int(descs.size()), 5,
                                7, C, linear, C == 3 ? fill.data() : nullptr, DType::kU8, DType::kU8,
                                nullptr),
                0);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      for (size_t i = 0; i < descs.size(); ++i) {
        const auto& d = dims[i];
        auto got = to_host<uint8_t>(outs[i]->data(), size_t(d[2] * d[3] * C));
        std::vector<uint8_t> ref(got.size());
        warp_affine_cpu(imgs[i].data(), d[0], d[1], C, ref.data(), d[2], d[3], maps[i], linear,
                        C == 3 ? &fill : nullptr);
        for (size_t k = 0; k < ref.size(); ++k)
          ASSERT_NEAR(int(got[k]), int(ref[k]), linear ? 1 : 0)
              << "sample " << i << " element " << k << " C " << C;
      }
    }
  }
}

}  // namespace
}  // namespace stoker::kernels
