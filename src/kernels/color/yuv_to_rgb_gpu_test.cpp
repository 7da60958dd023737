#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/color/yuv_to_rgb.hpp"

namespace stoker::kernels {
namespace {

// NV12 frames (as NVDEC maps them: one pitched buffer, luma rows then interleaved chroma rows)
// and planar 4:2:2, of odd sizes, every siting, range and matrix: the GPU's RGB, YCbCr and
// float outputs equal the CPU kernel's bit for bit.
TEST(YuvToRgbGpu, EqualsTheCpuBitForBit) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  MemoryPool pool(make_device_allocator(0));
  struct Case {
    int64_t w, h;
    bool nv12, center, full, bt709;
  };
  for (const Case& c : {Case{17, 9, true, false, false, false}, Case{64, 36, true, true, true, true},
                        Case{33, 21, false, false, true, false}, Case{1, 1, true, false, false, true}}) {
    const int64_t pitch = (c.w + 63) / 64 * 64;  // a surface's pitch, wider than the frame
    const int64_t cw = (c.w + 1) / 2, ch = c.nv12 ? (c.h + 1) / 2 : c.h;
    // Host copy of the device layout: luma rows, then chroma rows (interleaved for NV12; for
    // planar 4:2:2, Cb rows then Cr rows).
    std::vector<uint8_t> host(size_t(pitch * (c.h + (c.nv12 ? ch : 2 * ch))));
    for (auto& b : host) b = uint8_t(byte(rng));
    auto dev = pool.acquire(host.size());
    cudaMemcpy(dev->data(), host.data(), host.size(), cudaMemcpyHostToDevice);
    auto planes_at = [&](const uint8_t* base) {
      YuvPlanes p;
      p.y = base, p.y_pitch = pitch, p.uv_pitch = pitch;
      p.shift_x = 1, p.shift_y = c.nv12 ? 1 : 0, p.chroma_center = c.center;
      p.full_range = c.full, p.matrix = c.bt709 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
      p.width = c.w, p.height = c.h;
      const uint8_t* chroma = base + pitch * c.h;
      if (c.nv12) {
        p.u = chroma, p.v = chroma + 1, p.uv_step = 2;
      } else {
        p.u = chroma, p.v = chroma + pitch * ch, p.uv_step = 1;
      }
      (void)cw;
      return p;
    };
    const YuvPlanes on_host = planes_at(host.data());
    const YuvPlanes on_device = planes_at(static_cast<const uint8_t*>(dev->data()));
    const size_t n = size_t(c.w * c.h * 3);
    for (int mode = 0; mode < 4; ++mode) {
      const bool rgb = mode != 1, as_float = mode >= 2, normalized = mode == 3;
      const size_t bytes = n * (as_float ? sizeof(float) : 1);
      std::vector<uint8_t> want(bytes), got(bytes);
      if (as_float) {
        yuv_to_rgb_cpu(on_host, rgb, normalized, reinterpret_cast<float*>(want.data()));
      } else {
        yuv_to_rgb_cpu(on_host, rgb, normalized, want.data());
      }
      auto out = pool.acquire(bytes);
      ASSERT_EQ(yuv_to_rgb_gpu(on_device, rgb, normalized, as_float ? DType::kF32 : DType::kU8,
                               out->data(), nullptr),
                0);
      cudaMemcpy(got.data(), out->data(), bytes, cudaMemcpyDeviceToHost);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), bytes), 0)
          << c.w << "x" << c.h << " nv12 " << c.nv12 << " mode " << mode;
    }
  }
  EXPECT_NE(yuv_to_rgb_gpu(YuvPlanes{.width = 2, .height = 2}, true, false, DType::kI16, nullptr,
                           nullptr),
            0);
}

}  // namespace
}  // namespace stoker::kernels
