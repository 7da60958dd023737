// The conversions around the optical-flow engine against host loops: frames packed as ABGR8
// (RGB and BGR) or copied as GRAYSCALE8 into pitched rows, S10.5 vectors decoded and encoded
// (rounding, saturation, NaN). Skips without a GPU.
#include "stoker/kernels/flow/optical_flow_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
std::shared_ptr<Buffer> upload(MemoryPool& pool, const std::vector<T>& v) {
  auto b = pool.acquire(v.size() * sizeof(T) + 1);
  EXPECT_EQ(cudaMemcpy(b->data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return b;
}
template <typename T>
std::vector<T> download(const Buffer& b, size_t n) {
  std::vector<T> v(n);
  EXPECT_EQ(cudaMemcpy(v.data(), b.data(), n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return v;
}

TEST(OpticalFlowGpu, FramesArePackedAsTheEngineReadsThem) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool pool(make_device_allocator(0));
  const int64_t h = 5, w = 7, pitch = 64;
  std::vector<uint8_t> rgb(size_t(h * w * 3));
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = uint8_t(i * 7 + 3);
  auto in = upload(pool, rgb);
  for (bool bgr : {false, true}) {
    auto out = pool.acquire(size_t(h * pitch));
    ASSERT_EQ(cudaMemset(out->data(), 0, size_t(h * pitch)), cudaSuccess);
    ASSERT_EQ(pack_flow_frame_gpu(static_cast<const uint8_t*>(in->data()), h, w, 3, bgr,
                                  static_cast<uint8_t*>(out->data()), pitch, nullptr),
              0);
    auto got = download<uint8_t>(*out, size_t(h * pitch));
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const uint8_t* p = &rgb[size_t((y * w + x) * 3)];
        const uint8_t* q = &got[size_t(y * pitch + x * 4)];
        EXPECT_EQ(q[0], bgr ? p[2] : p[0]);
        EXPECT_EQ(q[1], p[1]);
        EXPECT_EQ(q[2], bgr ? p[0] : p[2]);
        EXPECT_EQ(q[3], 255);
      }
  }
  auto gray_out = pool.acquire(size_t(h * pitch));
  ASSERT_EQ(pack_flow_frame_gpu(static_cast<const uint8_t*>(in->data()), h, w, 1, false,
                                static_cast<uint8_t*>(gray_out->data()), pitch, nullptr),
            0);
  auto gray = download<uint8_t>(*gray_out, size_t(h * pitch));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) EXPECT_EQ(gray[size_t(y * pitch + x)], rgb[size_t(y * w + x)]);
}

TEST(OpticalFlowGpu, VectorsDecodeAndEncodeAsS10_5) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool pool(make_device_allocator(0));
  const int64_t h = 3, w = 5, pitch = 32;  // bytes per row of int16 pairs (20 used)
  std::vector<int16_t> raw(size_t(h * pitch / 2));
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = int16_t((int(i) * 977) % 65536 - 32768);
  auto in = upload(pool, raw);
  auto out = pool.acquire(size_t(h * w * 2) * sizeof(float));
  ASSERT_EQ(decode_flow_gpu(static_cast<const int16_t*>(in->data()), pitch, h, w,
                            static_cast<float*>(out->data()), nullptr),
            0);
  auto flow = download<float>(*out, size_t(h * w * 2));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w * 2; ++x)
      EXPECT_EQ(flow[size_t(y * w * 2 + x)], float(raw[size_t(y * pitch / 2 + x)]) / 32.f);
  // Encoding: the nearest S10.5 value, saturated; NaN is 0.
  std::vector<float> values = {
      0.f,    1.f / 64,    3.3f,  -2.49f, 1e6f, -1e6f, std::numeric_limits<float>::quiet_NaN(),
      -0.03f, 1023.96875f, 7.25f, -7.25f, 0.5f, -0.5f, 100.f,
      -100.f};
  auto src = upload(pool, values);
  auto packed = pool.acquire(size_t(h * pitch));
  ASSERT_EQ(encode_flow_gpu(static_cast<const float*>(src->data()), h, 2,
                            static_cast<int16_t*>(packed->data()), pitch, nullptr),
            0);
  auto enc = download<int16_t>(*packed, size_t(h * pitch / 2));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < 4; ++x) {
      const float v = values[size_t(y * 4 + x)];
      const int16_t want = std::isnan(v)     ? 0
                           : v * 32 > 32767  ? 32767
                           : v * 32 < -32768 ? -32768
                                             : int16_t(std::nearbyint(v * 32));
      EXPECT_EQ(enc[size_t(y * pitch / 2 + x)], want) << v;
      EXPECT_EQ(encode_flow_value(v), want) << v;
    }
}

}  // namespace
}  // namespace stoker::kernels
