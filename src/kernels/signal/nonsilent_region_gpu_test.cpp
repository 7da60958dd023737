// nonsilent_region's GPU kernels against the CPU kernel (moving_mean_square, power_max,
// nonsilent_bounds) on ragged batches: bursts in noise, loud from the first sample, silence,
// an empty signal, signals shorter than the window, a NaN; float signals with and without
// resets (the float drift decides where a region ends), exact and float sums of integers;
// the reference given or the maximum. Equal (begin and length).
#include "stoker/kernels/signal/nonsilent_region_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/signal/nonsilent_region.hpp"

namespace stoker::kernels {
namespace {

// Noise of amplitude `noise` with a sine burst of amplitude `amp` over [lo, hi).
std::vector<double> burst(int64_t n, int64_t lo, int64_t hi, double amp, double noise,
                          std::mt19937& rng) {
  std::normal_distribution<double> g;
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = noise * g(rng) + (i >= lo && i < hi ? amp * std::sin(0.3 * double(i)) : 0.0);
  }
  return x;
}

template <typename T>
std::vector<std::vector<T>> signals(double scale, double offset) {
  std::mt19937 rng(5);
  std::vector<std::vector<double>> raw = {burst(10000, 3000, 6000, 1, 1e-4, rng),
                                          burst(10000, 0, 6000, 1, 1e-4, rng),
                                          burst(20000, 1500, 2500, 1, 1e-4, rng),
                                          burst(70000, 1000, 60000, 1, 0.1, rng),
                                          burst(100, 0, 0, 0, 0, rng),
                                          {},
                                          burst(500, 100, 200, 1, 1e-4, rng),
                                          burst(30, 10, 20, 1, 1e-3, rng),
                                          burst(1, 0, 1, 1, 0, rng)};
  std::vector<std::vector<T>> out;
  for (const auto& r : raw) {
    std::vector<T> v(r.size());
    for (size_t k = 0; k < r.size(); ++k) v[k] = T(r[k] * scale + offset);
    out.push_back(std::move(v));
  }
  return out;
}

struct Args {
  int64_t window;
  int64_t reset;
  float cutoff_db;
  bool has_reference;
  float reference;
};

template <typename T>
void expect_gpu_equals_cpu(const std::vector<std::vector<T>>& batch, DType type, const Args& a) {
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::shared_ptr<Buffer>> keep;
  auto acquire = [&](size_t bytes) {
    auto b = pool.acquire(bytes + 8);
    keep.push_back(b);
    return b->data();
  };
  std::vector<NonsilentGpuSample> desc;
  std::vector<std::pair<int64_t, int64_t>> want;
  int64_t most_segments = 0;
  for (const auto& x : batch) {
    const int64_t len = int64_t(x.size());
    std::pair<int64_t, int64_t> region{0, 0};
    if (len > 0) {
      const int64_t window = std::min(a.window, len);
      std::vector<float> power(x.size());
      moving_mean_square(x.data(), len, window, a.reset, power.data());
      const float reference = a.has_reference ? a.reference : power_max(power.data(), len);
      region =
          nonsilent_bounds(power.data(), len, nonsilent_threshold(reference, a.cutoff_db), window);
    }
    want.push_back(region);
    NonsilentGpuSample d;
    d.in = acquire(x.size() * sizeof(T));
    cudaMemcpy(const_cast<void*>(d.in), x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice);
    d.length = len;
    d.window = std::max<int64_t>(std::min(a.window, len), 1);
    d.mean_factor = 1.f / float(d.window);
    d.segment = nonsilent_segment(type, len, d.window, a.reset);
    d.power = static_cast<float*>(acquire(x.size() * sizeof(float)));
    d.begin = static_cast<int32_t*>(acquire(4));
    d.region_length = static_cast<int32_t*>(acquire(4));
    desc.push_back(d);
    most_segments = std::max(most_segments, (len + d.segment - 1) / d.segment);
  }
  void* device = acquire(desc.size() * sizeof(desc[0]));
  cudaMemcpy(device, desc.data(), desc.size() * sizeof(desc[0]), cudaMemcpyHostToDevice);
  ASSERT_EQ(nonsilent_region_gpu(static_cast<const NonsilentGpuSample*>(device), int(desc.size()),
                                 most_segments, type, a.has_reference, a.reference,
                                 nonsilent_threshold(1.f, a.cutoff_db), nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    int32_t begin = -1, length = -1;
    cudaMemcpy(&begin, desc[i].begin, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&length, desc[i].region_length, 4, cudaMemcpyDeviceToHost);
    EXPECT_EQ(begin, int32_t(want[i].first)) << "sample " << i << " window " << a.window;
    EXPECT_EQ(length, int32_t(want[i].second)) << "sample " << i << " window " << a.window;
  }
}

TEST(NonsilentRegionGpu, FloatSignalsEqualTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  auto batch = signals<float>(1, 0);
  batch.push_back({1.f, NAN, 2.f, 0.f});
  batch.push_back({NAN, 1.f, 2.f});
  const std::vector<Args> cases = {{2048, 8192, -60, false, 0},
                                   {128, 8192, -60, false, 0},
                                   {256, 8192, -30, false, 0},
                                   {50, 100, -60, false, 0},
                                   {64, 8192, -60, true, 1e-3f},
                                   {64, 8192, -60, true, 1e6f},
                                   {8192, 8192, -60, false, 0},
                                   {16, -1, -60, false, 0},
                                   // Thresholds below the float drift a loud passage leaves: the
                                   // sums' order and restarts decide where the region ends.
                                   {64, 1024, -60, true, 1e-3f},
                                   {64, -1, -60, true, 1e-3f}};
  for (const Args& a : cases) expect_gpu_equals_cpu(batch, DType::kF32, a);
}

TEST(NonsilentRegionGpu, IntegerSignalsEqualTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  for (const Args& a : {Args{64, 8192, -60, false, 0}, Args{10, 30, -20, false, 0},
                        Args{2048, -1, -60, true, 100.f}}) {
    expect_gpu_equals_cpu(signals<int16_t>(1000, 0), DType::kI16, a);
    expect_gpu_equals_cpu(signals<uint8_t>(100, 100), DType::kU8, a);
    expect_gpu_equals_cpu(signals<int8_t>(60, 0), DType::kI8, a);
    expect_gpu_equals_cpu(signals<uint16_t>(20000, 30000), DType::kU16, a);
    expect_gpu_equals_cpu(signals<int32_t>(1e6, 0), DType::kI32, a);
    expect_gpu_equals_cpu(signals<uint32_t>(1e6, 2e6), DType::kU32, a);
    expect_gpu_equals_cpu(signals<int64_t>(1e9, 0), DType::kI64, a);
    expect_gpu_equals_cpu(signals<uint64_t>(1e9, 3e9), DType::kU64, a);
  }
}

}  // namespace
}  // namespace stoker::kernels
