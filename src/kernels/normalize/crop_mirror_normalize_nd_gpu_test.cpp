// The N-D crop_mirror_normalize GPU kernel against its CPU twin: a ragged batch of a volume cut
// partly outside and mirrored, and a CHW image made HWC with padded channels, in every output
// type.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/normalize/crop_mirror_normalize_nd.hpp"

namespace stoker::kernels {
namespace {

template <typename T>
std::shared_ptr<Buffer> to_device(MemoryPool& pool, const std::vector<T>& v) {
  auto b = pool.acquire(std::max<size_t>(1, v.size() * sizeof(T)));
  EXPECT_EQ(cudaMemcpy(b->data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return b;
}

template <typename Out>
void check_type(DType out_type) {
  MemoryPool device(make_device_allocator(0));
  std::vector<float> vol(2 * 3 * 4 * 5), chw(3 * 6 * 7);
  for (size_t k = 0; k < vol.size(); ++k) vol[k] = float(k) * 1.7f - 40.f;
  for (size_t k = 0; k < chw.size(); ++k) chw[k] = float(k % 251);
  const std::vector<float> params = {1, -2, 0.5f, 3.f,  -7.f, 300.f, 9.f, 1e6f,  // volume
                                     5, 6,  7,    0.1f, 0.2f, 0.3f,  4.f, 4.f,  4.f, 4.f};
  auto dvol = to_device(device, vol), dchw = to_device(device, chw);
  auto dparams = to_device(device, params);
  // Sample 0: CDHW 2x3x4x5 -> DHWC 4x2x5x4 (depth from -1, a row outside, width mirrored).
  CmnNdSample a;
  a.ndim = 4, a.c_axis = 3, a.shift = 4.f;
  const int64_t sa[4] = {4, 2, 5, 4}, st[4] = {-1, 3, 4, 0}, sp[4] = {1, 1, -1, 1},
                ex[4] = {3, 4, 5, 2}, sd[4] = {20, 5, 1, 60};
  for (int j = 0; j < 4; ++j)
    a.shape[j] = sa[j], a.start[j] = st[j], a.step[j] = sp[j], a.extent[j] = ex[j],
    a.stride[j] = sd[j];
  // Sample 1: CHW 3x6x7 -> HWC 8x7x4 (rows from -1).
  CmnNdSample b;
  b.ndim = 3, b.c_axis = 2, b.shift = 0.f;
  const int64_t sb[3] = {8, 7, 4}, stb[3] = {-1, 0, 0}, exb[3] = {6, 7, 3}, sdb[3] = {7, 1, 42};
  for (int j = 0; j < 3; ++j)
    b.shape[j] = sb[j], b.start[j] = stb[j], b.step[j] = 1, b.extent[j] = exb[j],
    b.stride[j] = sdb[j];
  std::vector<CmnNdSample> host = {a, b}, dev = {a, b};
  std::vector<std::vector<Out>> want(2);
  std::vector<std::shared_ptr<Buffer>> outs;
  const void* ins[2] = {vol.data(), chw.data()};
  const void* dins[2] = {dvol->data(), dchw->data()};
  const size_t at[2] = {0, 8}, channels[2] = {2, 3};
  for (size_t k = 0; k < 2; ++k) {
    int64_t n = 1;
    for (int j = 0; j < host[k].ndim; ++j) n *= host[k].shape[j];
    want[k].resize(size_t(n));
    host[k].in = ins[k], host[k].out = want[k].data();
    host[k].mean = params.data() + at[k], host[k].inv_std = host[k].mean + channels[k];
    host[k].fill = host[k].inv_std + channels[k];
    crop_mirror_normalize_nd_cpu<Out, float>(host[k]);
    outs.push_back(device.acquire(size_t(n) * sizeof(Out)));
    const float* dp = static_cast<const float*>(dparams->data()) + at[k];
    dev[k].in = dins[k], dev[k].out = outs.back()->data();
    dev[k].mean = dp, dev[k].inv_std = dp + channels[k], dev[k].fill = dp + 2 * channels[k];
  }
  auto ddesc = to_device(device, dev);
  ASSERT_EQ(crop_mirror_normalize_nd_gpu(static_cast<const CmnNdSample*>(ddesc->data()), 2, 160,
                                         DType::kF32, out_type, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t k = 0; k < 2; ++k) {
    std::vector<Out> got(want[k].size());
    ASSERT_EQ(
        cudaMemcpy(got.data(), outs[k]->data(), got.size() * sizeof(Out), cudaMemcpyDeviceToHost),
        cudaSuccess);
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(float(got[e]), float(want[k][e]))
          << dtype_name(out_type) << " sample " << k << " element " << e;
  }
}

TEST(CropMirrorNormalizeNdGpu, EqualsTheCpuInEveryOutputType) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  check_type<float>(DType::kF32);
  check_type<float16>(DType::kF16);
  check_type<uint8_t>(DType::kU8);
  check_type<int8_t>(DType::kI8);
}

}  // namespace
}  // namespace stoker::kernels
