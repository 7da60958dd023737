// audio_resample's GPU kernel against resample_cpu on ragged batches (mono and multi-channel
// signals, an empty one, a one-sample one, per-sample ratios, every quality's window), for
// integer and float types in and out: equal bit for bit.
#include "stoker/kernels/signal/resample_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/signal/resample.hpp"

namespace stoker::kernels {
namespace {

struct Signal {
  int64_t frames;
  int channels;
  double in_rate, out_rate;
};

template <typename T>
std::vector<T> random_values(int64_t n, std::mt19937& rng) {
  std::vector<T> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      x = T(0.8 * u(rng));
    } else {
      const double lo = double(std::numeric_limits<T>::min());
      const double hi = double(std::numeric_limits<T>::max());
      x = T(lo + (hi - lo) * (u(rng) + 1) / 2);
    }
  }
  return v;
}

template <typename In, typename Out>
void expect_gpu_equals_cpu(const std::vector<Signal>& signals, double quality, DType in_type,
                           DType out_type) {
  std::mt19937 rng(11);
  const int lobes = resample_lobes(quality);
  const ResampleWindow window = make_resample_window(lobes, resample_lookup_size(lobes));
  const bool out_unsigned = std::is_unsigned_v<Out>;
  const bool convert = !std::is_same_v<In, float> || out_unsigned;
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::shared_ptr<Buffer>> keep;
  auto to_device = [&](const void* data, size_t bytes) {
    auto b = pool.acquire(bytes + 4);
    cudaMemcpy(b->data(), data, bytes, cudaMemcpyHostToDevice);
    keep.push_back(b);
    return b->data();
  };
  std::vector<AudioResampleGpuSample> desc;
  std::vector<std::vector<Out>> want;
  int64_t most_in = 0, most_out = 0;
  for (const Signal& s : signals) {
    const auto values = random_values<In>(s.frames * s.channels, rng);
    std::vector<float> floats(values.size());
    for (size_t k = 0; k < values.size(); ++k) floats[k] = resample_input(values[k], out_unsigned);
    const int64_t out_length = resampled_length(s.frames, s.in_rate, s.out_rate);
    std::vector<Out> out(static_cast<size_t>(out_length * s.channels));
    resample_cpu(out.data(), out_length, s.out_rate, floats.data(), s.frames, s.in_rate, s.channels,
                 window);
    want.push_back(out);
    AudioResampleGpuSample d;
    d.in = to_device(values.data(), values.size() * sizeof(In));
    if (convert) {  // the kernel converts into this scratch (the CPU's `floats`)
      auto b = pool.acquire(floats.size() * sizeof(float) + 4);
      keep.push_back(b);
      d.floats = static_cast<float*>(b->data());
    }
    auto o = pool.acquire(out.size() * sizeof(Out) + 4);
    keep.push_back(o);
    d.out = o->data();
    d.in_length = s.frames, d.out_length = out_length, d.channels = s.channels;
    d.scale = s.in_rate / s.out_rate;
    desc.push_back(d);
    most_in = std::max(most_in, s.frames * s.channels);
    most_out = std::max(most_out, out_length);
  }
  const AudioResampleGpuWindow w{
      static_cast<const float*>(to_device(window.lookup.data(), window.lookup.size() * 4)),
      int32_t(window.lookup.size()), window.scale, window.center, window.lobes};
  const void* d = to_device(desc.data(), desc.size() * sizeof(desc[0]));
  ASSERT_EQ(audio_resample_gpu(static_cast<const AudioResampleGpuSample*>(d), int(desc.size()),
                               most_in, most_out, in_type, out_type, w, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < desc.size(); ++i) {
    std::vector<Out> got(want[i].size());
    cudaMemcpy(got.data(), desc[i].out, got.size() * sizeof(Out), cudaMemcpyDeviceToHost);
    ASSERT_EQ(got.size(), want[i].size());
    // Bit patterns: a float's sign of zero counts too.
    EXPECT_EQ(std::memcmp(got.data(), want[i].data(), got.size() * sizeof(Out)), 0)
        << "sample " << i << " (" << signals[i].frames << "x" << signals[i].channels << ", quality "
        << quality << ")";
  }
}

const std::vector<Signal> kMono = {{1000, 1, 16000, 22050}, {0, 1, 16000, 22050}, {1, 1, 1, 3},
                                   {777, 1, 44100, 16000},  {3000, 1, 1, 1.37},   {10, 1, 1, 0.31}};
const std::vector<Signal> kMulti = {{1000, 2, 16000, 8000},  {0, 3, 1, 2},
                                    {777, 3, 1, 2.5},        {600, 9, 1, 0.75},
                                    {300, 17, 48000, 44100}, {5, 1, 1, 1}};

TEST(AudioResampleGpu, FloatMonoAndMultiChannelEqualTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  for (double quality : {0.0, 50.0, 100.0}) {
    expect_gpu_equals_cpu<float, float>(kMono, quality, DType::kF32, DType::kF32);
    expect_gpu_equals_cpu<float, float>(kMulti, quality, DType::kF32, DType::kF32);
  }
}

TEST(AudioResampleGpu, IntegerTypesInAndOutEqualTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  for (const auto* signals : {&kMono, &kMulti}) {
    expect_gpu_equals_cpu<int16_t, int16_t>(*signals, 50, DType::kI16, DType::kI16);
    expect_gpu_equals_cpu<int16_t, uint8_t>(*signals, 50, DType::kI16, DType::kU8);
    expect_gpu_equals_cpu<uint8_t, float>(*signals, 75, DType::kU8, DType::kF32);
    expect_gpu_equals_cpu<uint8_t, int32_t>(*signals, 10, DType::kU8, DType::kI32);
    expect_gpu_equals_cpu<float, uint32_t>(*signals, 50, DType::kF32, DType::kU32);
    expect_gpu_equals_cpu<float, int8_t>(*signals, 50, DType::kF32, DType::kI8);
    expect_gpu_equals_cpu<int32_t, uint16_t>(*signals, 100, DType::kI32, DType::kU16);
    expect_gpu_equals_cpu<uint32_t, int16_t>(*signals, 0, DType::kU32, DType::kI16);
  }
}

}  // namespace
}  // namespace stoker::kernels
