#include "stoker/kernels/color/clahe_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (gray, per-channel RGB, luma RGB, an empty sample, padded tiles) on the GPU
// equals the CPU kernel: exactly, and for luma within a level on all but 1% of the elements
// (powf and cbrtf may round differently on the device).
TEST(ClaheGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  struct Case {
    int64_t H, W;
    int C;
    bool luma;
  };
  const std::vector<Case> cases{{64, 48, 1, false},
                                {37, 53, 3, false},
                                {480, 640, 3, true},
                                {0, 5, 3, true},
                                {17, 23, 3, true}};
  const int tx = 4, ty = 3;
  const double clip = 2.0;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(110.f, 40.f);
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::vector<uint8_t>> in;
  std::vector<ClaheGpuSample> desc;
  std::vector<std::shared_ptr<Buffer>> keep;
  auto tables = pool.acquire(sizeof(LabTables));
  cudaMemcpy(tables->data(), &lab_tables(), sizeof(LabTables), cudaMemcpyHostToDevice);
  for (const Case& c : cases) {
    in.emplace_back(size_t(c.H * c.W * c.C));
    for (auto& v : in.back()) v = uint8_t(std::clamp(nd(rng), 0.f, 255.f));
    auto a = pool.acquire(in.back().size() + 4), b = pool.acquire(in.back().size() + 4);
    auto l = pool.acquire(size_t(c.C * tx * ty * 256)), p = pool.acquire(size_t(c.H * c.W) + 4);
    cudaMemcpy(a->data(), in.back().data(), in.back().size(), cudaMemcpyHostToDevice);
    ClaheGpuSample d;
    d.in = static_cast<const uint8_t*>(a->data()), d.out = static_cast<uint8_t*>(b->data());
    d.luts = static_cast<uint8_t*>(l->data()), d.plane = static_cast<uint8_t*>(p->data());
    d.height = c.H, d.width = c.W, d.channels = c.C, d.luma = c.luma;
    d.lab = static_cast<const LabTables*>(tables->data());
    if (c.H * c.W) d.geometry = clahe_geometry(c.H, c.W, tx, ty, clip);
    desc.push_back(d);
    keep.insert(keep.end(), {a, b, l, p});
  }
  auto dd = pool.acquire(desc.size() * sizeof(ClaheGpuSample));
  cudaMemcpy(dd->data(), desc.data(), desc.size() * sizeof(ClaheGpuSample), cudaMemcpyHostToDevice);
  ASSERT_EQ(clahe_gpu(static_cast<const ClaheGpuSample*>(dd->data()), int(desc.size()), 480 * 640,
                      tx * ty, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<uint8_t> want(in[i].size()), got(in[i].size()), luts(size_t(tx * ty * 256)),
        plane(size_t(c.H * c.W));
    if (c.H * c.W)
      clahe_cpu(in[i].data(), want.data(), c.H, c.W, c.C, c.luma, desc[i].geometry, luts.data(),
                plane.data());
    cudaMemcpy(got.data(), desc[i].out, got.size(), cudaMemcpyDeviceToHost);
    // Luma: a value of L* rounded the other way picks another table entry, so a few elements
    // may differ by more than a level.
    size_t off = 0;
    for (size_t k = 0; k < got.size(); ++k) off += std::abs(int(got[k]) - int(want[k])) > 1;
    if (c.luma)
      EXPECT_LE(double(off), 0.01 * double(got.size())) << "sample " << i;
    else
      EXPECT_EQ(got, want) << "sample " << i;
  }
}

}  // namespace
}  // namespace stoker::kernels
