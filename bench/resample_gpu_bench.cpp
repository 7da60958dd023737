// The fused augmentation kernel alone: random-resized-crop windows of 500x375 uint8 images
// (resident on the GPU) resampled to 224x224 (linear, antialiased), mirrored, normalised and
// written as float16 CHW, one launch per batch of 256. CUDA events around --iters launches
// after a warm-up; the median of 5 repeats. Also the host's cost of building the filter
// tables for a batch (what the operator does on the GPU stage's thread before each launch).
//   build-gpu/bench/stoker_bench_resample_gpu
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/resize/resample_gpu.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"

using namespace stoker;
using namespace stoker::kernels;

int main() {
  if (!cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const int n = 256, H = 375, W = 500, C = 3, OH = 224, OW = 224, iters = 50;
  MemoryPool device(make_device_allocator(0));
  auto images = device.acquire(size_t(n) * H * W * C);
  cudaMemset(images->data(), 77, size_t(n) * H * W * C);
  auto out = device.acquire(size_t(n) * OH * OW * C * 2);
  std::mt19937 rng(1);
  // Host: the tables (RRC windows: area 8-100%, aspect 3/4-4/3), timed.
  auto t0 = std::chrono::steady_clock::now();
  std::vector<ResampleGpuSample> desc(n);
  std::vector<int32_t> first, count;
  std::vector<float> weights;
  for (int i = 0; i < n; ++i) {
    std::uniform_real_distribution<double> area(0.08, 1.0), ratio(0.75, 1.333);
    const double a = area(rng) * H * W, r = ratio(rng);
    const int64_t w = std::clamp<int64_t>(int64_t(std::sqrt(a * r)), 1, W);
    const int64_t h = std::clamp<int64_t>(int64_t(std::sqrt(a / r)), 1, H);
    const int64_t y = int64_t(rng() % uint32_t(H - h + 1)),
                  x = int64_t(rng() % uint32_t(W - w + 1));
    auto wx = resample_weights(w, OW, Filter::kLinear, true);
    auto wy = resample_weights(h, OH, Filter::kLinear, true);
    auto& d = desc[size_t(i)];
    d.in = static_cast<uint8_t*>(images->data()) + (size_t(i) * H * W + size_t(y) * W + x) * C;
    d.in_h = h, d.in_w = w, d.in_stride = W * C;
    d.out = static_cast<uint8_t*>(out->data()) + size_t(i) * OH * OW * C * 2;
    d.out_h = OH, d.out_w = OW, d.mirror_x = i % 2;
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
  }
  const double host_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto up = [&](const auto& v) {
    auto b = device.acquire(v.size() * sizeof(v[0]));
    cudaMemcpy(b->data(), v.data(), v.size() * sizeof(v[0]), cudaMemcpyHostToDevice);
    return b;
  };
  auto dd = up(desc), df = up(first), dc = up(count), dw = up(weights);
  ResampleGpuParams p;
  p.in_type = DType::kU8, p.out_type = DType::kF16;
  p.channels = p.out_channels = C, p.planar = 1;
  for (int c = 0; c < C; ++c) p.mean[c] = 120.f, p.inv_std[c] = 1 / 58.f;
  p.mid_round = 1, p.mid_lo = 0, p.mid_hi = 255;
  ResampleGpuTables t{static_cast<const int32_t*>(df->data()),
                      static_cast<const int32_t*>(dc->data()),
                      static_cast<const float*>(dw->data())};
  auto launch = [&] {
    resample_gpu(static_cast<const ResampleGpuSample*>(dd->data()), n, OH, OW, p, t, nullptr);
  };
  for (int k = 0; k < 10; ++k) launch();
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  std::vector<double> rates;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    for (int k = 0; k < iters; ++k) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    rates.push_back(double(n) * iters / (ms / 1000.0));
  }
  std::sort(rates.begin(), rates.end());
  const double bytes_per_image = OH * OW * C * 2.0;  // fp16 out (reads hit L2 mostly)
  std::printf("fused RRC(224) + mirror + normalize -> fp16 CHW, 500x375 uint8 in, batch %d:\n", n);
  std::printf("  kernel: %.0f images/s (median of 5), %.1f GB/s written\n", rates[2],
              rates[2] * bytes_per_image / 1e9);
  std::printf("  host tables for a batch: %.2f ms (%.0f images/s on one thread)\n", host_ms,
              n / (host_ms / 1000.0));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
