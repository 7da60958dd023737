// Heavy augmentation's kernels alone (flip, rotate) on a ragged batch shaped like the benchmark
// dataset: 256 uint8 RGB images, 82% 500x375, 7% 375x500, the rest 640x480 to 800x600 and one
// 540x720 (scripts/make_dataset.py's mix). Per kernel: ms per batch (CUDA events around 20
// launches after a warm-up, median of 5 repeats) and GB/s of bytes read + written, against a
// device-to-device copy of the same bytes (the memory's roof).
//   build-gpu/bench/stoker_bench_augment_gpu
//   build-gpu/bench/stoker_bench_augment_gpu --load SECONDS   (the library's rotate, back to back:
//                                                             GPU load for another benchmark)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/geometry/warp_affine_gpu.hpp"
#include "stoker/kernels/resize/resample_gpu.hpp"

using namespace stoker;
using namespace stoker::kernels;

namespace {

struct Dims {
  int h, w;
};

float time_ms(cudaStream_t st, const std::function<void()>& launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a), cudaEventCreate(&b);
  for (int k = 0; k < 3; ++k) launch();
  std::vector<float> reps;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(a, st);
    for (int k = 0; k < 20; ++k) launch();
    cudaEventRecord(b, st);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    reps.push_back(ms / 20);
  }
  cudaEventDestroy(a), cudaEventDestroy(b);
  std::sort(reps.begin(), reps.end());
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) std::printf("CUDA error: %s\n", cudaGetErrorString(e));
  return reps[2];
}

}  // namespace

int main(int argc, char** argv) {
  const double load_s = argc > 2 && std::string(argv[1]) == "--load" ? std::atof(argv[2]) : 0;
  if (!cuda_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  std::vector<Dims> dims;
  const std::pair<Dims, int> mix[] = {{{375, 500}, 210}, {{500, 375}, 18}, {{540, 720}, 10},
                                      {{600, 800}, 9},   {{480, 640}, 8},  {{720, 540}, 1}};
  for (auto [d, k] : mix)
    for (int i = 0; i < k; ++i) dims.push_back(d);
  std::mt19937 rng(1);
  std::shuffle(dims.begin(), dims.end(), rng);
  const int n = int(dims.size());
  for (bool uniform : {false, true}) {
    if (uniform && load_s > 0) break;
    if (uniform) std::fill(dims.begin(), dims.end(), Dims{375, 500});
    size_t total = 0;
    int64_t max_h = 0, max_w = 0, max_elements = 0;
    double mean_h = 0, mean_w = 0;
    for (auto d : dims) {
      total += size_t(d.h) * d.w * 3;
      max_h = std::max<int64_t>(max_h, d.h), max_w = std::max<int64_t>(max_w, d.w);
      max_elements = std::max<int64_t>(max_elements, int64_t(d.h) * d.w * 3);
      mean_h += double(d.h) / n, mean_w += double(d.w) / n;
    }
    MemoryPool device(make_device_allocator(0));
    auto a = device.acquire(total), b = device.acquire(total);
    cudaMemset(a->data(), 77, total);
    std::vector<WarpGpuSample> wd(static_cast<size_t>(n));
    std::vector<FlipGpuSample> fd(static_cast<size_t>(n));
    size_t at = 0;
    for (int i = 0; i < n; ++i) {
      const auto d = dims[size_t(i)];
      auto* src = static_cast<uint8_t*>(a->data()) + at;
      auto* dst = static_cast<uint8_t*>(b->data()) + at;
      at += size_t(d.h) * d.w * 3;
      const double ang = (double(i % 21) - 10) * M_PI / 180, c = std::cos(ang), s = std::sin(ang);
      auto& w = wd[size_t(i)];
      w.in = src, w.out = dst, w.h = d.h, w.w = d.w, w.oh = d.h, w.ow = d.w;
      // Output centre -> input: rotation about the image centre.
      w.m[0] = c, w.m[1] = -s, w.m[3] = s, w.m[4] = c;
      w.m[2] = d.w / 2.0 - c * d.w / 2.0 + s * d.h / 2.0;
      w.m[5] = d.h / 2.0 - s * d.w / 2.0 - c * d.h / 2.0;
      auto& f = fd[size_t(i)];
      f.in = src, f.out = dst, f.h = d.h, f.w = d.w, f.channels = 3;
      f.horizontal = i % 2, f.vertical = (i / 2) % 2;
    }
    auto wdev = device.acquire(sizeof(WarpGpuSample) * n);
    auto fdev = device.acquire(sizeof(FlipGpuSample) * n);
    cudaMemcpy(wdev->data(), wd.data(), sizeof(WarpGpuSample) * n, cudaMemcpyHostToDevice);
    cudaMemcpy(fdev->data(), fd.data(), sizeof(FlipGpuSample) * n, cudaMemcpyHostToDevice);
    const auto* W = static_cast<const WarpGpuSample*>(wdev->data());
    const auto* F = static_cast<const FlipGpuSample*>(fdev->data());
    // The kernels' tile grid: the mean size, as the operators pass it.
    const int64_t grid_h = int64_t(std::ceil(mean_h)), grid_w = int64_t(std::ceil(mean_w));
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    const double gb = 2.0 * double(total) / 1e9;
    auto row = [&](const char* what, float ms) {
      std::printf("| %s | %s | %.3f | %.0f |\n", uniform ? "uniform 500x375" : "ragged", what, ms,
                  gb / (ms / 1e3));
    };
    if (load_s > 0) {
      const auto t0 = std::chrono::steady_clock::now();
      int64_t launches = 0;
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() <
             load_s) {
        for (int k = 0; k < 10; ++k, ++launches)
          warp_affine_gpu(W, n, grid_h, grid_w, 3, true, nullptr, DType::kU8, DType::kU8, st);
        cudaStreamSynchronize(st);
      }
      std::printf("load: %lld rotate launches in %.1f s\n", (long long)launches, load_s);
      break;
    }
    if (!uniform) {
      std::printf("%d images, %.1f MB, max %lldx%lld, mean %.0fx%.0f\n\n", n, total / 1e6,
                  (long long)max_h, (long long)max_w, mean_h, mean_w);
      std::printf("| batch | kernel | ms per batch | GB/s |\n|---|---|---:|---:|\n");
    }
    row("device-to-device copy (roof)", time_ms(st, [&] {
          cudaMemcpyAsync(b->data(), a->data(), total, cudaMemcpyDeviceToDevice, st);
        }));
    const int64_t mean_px = int64_t(mean_h * mean_w);
    row("flip (horizontal and/or vertical)",
        time_ms(st, [&] { flip_gpu(F, n, mean_px, max_elements, true, 1, st); }));
    row("rotate (bilinear, clamped borders)", time_ms(st, [&] {
          warp_affine_gpu(W, n, grid_h, grid_w, 3, true, nullptr, DType::kU8, DType::kU8, st);
        }));
    cudaStreamDestroy(st);
  }
  return 0;
}
