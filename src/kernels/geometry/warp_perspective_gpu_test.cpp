#include "stoker/kernels/geometry/warp_perspective_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/geometry/warp_perspective_cpu.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (a 1x1 image among them) through every border and both interpolations, for
// the float path (uint8) and the fixed-point one (int16): the GPU equals the CPU bit for bit.
template <typename T>
void check_type(DType type) {
  std::mt19937 rng(3);
  const std::vector<std::pair<int64_t, int64_t>> sizes{{37, 53}, {1, 1}, {64, 17}, {2, 9}};
  const int64_t C = 3;
  std::vector<std::vector<T>> in;
  size_t total = 0;
  for (auto [h, w] : sizes) {
    in.emplace_back(size_t(h * w * C));
    for (auto& v : in.back()) v = T(rng() % 250);
    total += in.back().size();
  }
  MemoryPool pool(make_device_allocator(0));
  auto in_buf = pool.acquire(total * sizeof(T) + 4), out_buf = pool.acquire(total * sizeof(T) + 4);
  auto desc_buf = pool.acquire(sizes.size() * sizeof(PerspectiveSample));
  auto* d_in = static_cast<T*>(in_buf->data());
  auto* d_out = static_cast<T*>(out_buf->data());
  const double m[9] = {1.2, 0.3, -5, 0.2, 0.8, 4, 0.004, 0.003, 1.1};
  for (auto mode : {WarpBorder::kConstant, WarpBorder::kReplicate, WarpBorder::kReflect,
                    WarpBorder::kReflect101, WarpBorder::kWrap})
    for (auto interp :
         {PerspectiveInterp::kNearest, PerspectiveInterp::kLinear, PerspectiveInterp::kCubic}) {
      std::vector<PerspectiveSample> gpu(sizes.size());
      std::vector<std::vector<T>> expected;
      size_t at = 0;
      for (size_t k = 0; k < sizes.size(); ++k) {
        expected.emplace_back(in[k].size());
        PerspectiveSample s;
        s.in = in[k].data(), s.out = expected.back().data();
        s.h = s.oh = sizes[k].first, s.w = s.ow = sizes[k].second;
        std::copy(m, m + 9, s.m);
        s.fill[0] = 7, s.fill[1] = 8, s.fill[2] = 9;
        warp_perspective_cpu<T>(s, C, interp, mode);
        gpu[k] = s, gpu[k].in = d_in + at, gpu[k].out = d_out + at;
        cudaMemcpy(d_in + at, in[k].data(), in[k].size() * sizeof(T), cudaMemcpyHostToDevice);
        at += in[k].size();
      }
      cudaMemcpy(desc_buf->data(), gpu.data(), gpu.size() * sizeof(PerspectiveSample),
                 cudaMemcpyHostToDevice);
      ASSERT_EQ(warp_perspective_gpu(static_cast<const PerspectiveSample*>(desc_buf->data()),
                                     int(gpu.size()), 30, 25, int(C), interp, mode, type, nullptr),
                0);
      at = 0;
      for (size_t k = 0; k < sizes.size(); ++k) {
        std::vector<T> got(in[k].size());
        cudaMemcpy(got.data(), d_out + at, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
        EXPECT_EQ(got, expected[k])
            << "border " << int(mode) << " interp " << int(interp) << " sample " << k;
        at += in[k].size();
      }
    }
}

TEST(WarpPerspectiveGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  check_type<uint8_t>(DType::kU8);
  check_type<int16_t>(DType::kI16);
  check_type<float>(DType::kF32);
}

}  // namespace
}  // namespace stoker::kernels
