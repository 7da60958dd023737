// The GPU kernels of signal_gpu.cu against their CPU twins on ragged batches (empty samples
// included): preemphasis, mel filter banks and DCTs bit for bit, decibels within 2 ulp.
#include "stoker/kernels/signal/signal_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/signal/dct.hpp"
#include "stoker/kernels/signal/decibels.hpp"

namespace stoker::kernels {
namespace {

// Device copies kept alive for a test.
class Device {
 public:
  template <typename T>
  T* put(const std::vector<T>& v) {
    T* p = alloc<T>(v.size());
    EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    return p;
  }
  template <typename T>
  T* alloc(size_t n) {
    keep_.push_back(pool_.acquire(n * sizeof(T) + 8));
    return static_cast<T*>(keep_.back()->data());
  }
  template <typename T>
  std::vector<T> get(const void* p, size_t n) {
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }

 private:
  MemoryPool pool_{make_device_allocator(0)};
  std::vector<std::shared_ptr<Buffer>> keep_;
};

// Equal bits (any NaN equals any NaN: the CPU's and the GPU's differ in sign).
template <typename T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a || b != b) return a != a && b != b;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return a == b;
  }
}

template <typename Out, typename In>
void check_preemphasis(const std::vector<std::vector<In>>& in, const std::vector<float>& coeffs,
                       PreemphasisBorder border) {
  Device dev;
  std::vector<PreemphasisGpuSample> desc;
  int64_t most = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const auto n = int64_t(in[i].size());
    desc.push_back({dev.put(in[i]), dev.alloc<Out>(in[i].size()), n, coeffs[i % coeffs.size()]});
    most = std::max(most, n);
  }
  const auto* d = dev.put(desc);
  ASSERT_EQ(
      preemphasis_gpu(d, int(desc.size()), most, dtype_of<In>, dtype_of<Out>, border, nullptr), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<Out> want(in[i].size());
    preemphasis_cpu(in[i].data(), int64_t(in[i].size()), desc[i].coeff, border, want.data());
    const auto got = dev.get<Out>(desc[i].out, in[i].size());
    for (size_t t = 0; t < want.size(); ++t) {
      ASSERT_TRUE(same(got[t], want[t]))
          << "sample " << i << " element " << t << ": " << +got[t] << " vs the CPU's " << +want[t];
    }
  }
}

// Samples of `sizes` elements: values over [lo, hi], halves and (floats) NaN and infinities.
template <typename T>
std::vector<std::vector<T>> signals(const std::vector<size_t>& sizes, double lo, double hi,
                                    unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> any(lo, hi);
  std::vector<std::vector<T>> out;
  for (size_t n : sizes) {
    std::vector<T> v(n);
    for (size_t k = 0; k < n; ++k) {
      const double x = k % 7 == 3 ? std::round(any(rng)) + 0.5 : any(rng);
      v[k] = T(x);
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (n > 20) {
        v[5] = std::numeric_limits<T>::quiet_NaN();
        v[9] = std::numeric_limits<T>::infinity();
        v[13] = -std::numeric_limits<T>::infinity();
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

const std::vector<size_t> kSizes{1000, 1, 0, 300000, 2, 17};
const std::vector<float> kCoeffs{0.97f, 0.f, -0.3f, 0.5f, 2.5f, 0.97f};
const PreemphasisBorder kBorders[] = {PreemphasisBorder::kClamp, PreemphasisBorder::kReflect,
                                      PreemphasisBorder::kZero};

TEST(PreemphasisGpu, RaggedBatchesMatchTheCpuForEveryBorderAndTypes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  for (PreemphasisBorder border : kBorders) {
    SCOPED_TRACE(int(border));
    check_preemphasis<float>(signals<int16_t>(kSizes, -32768, 32767, 1), kCoeffs, border);
    check_preemphasis<int16_t>(signals<float>(kSizes, -40000, 40000, 2), kCoeffs, border);
    check_preemphasis<uint8_t>(signals<uint64_t>(kSizes, 0, 1e19, 3), kCoeffs, border);
    check_preemphasis<double>(signals<double>(kSizes, -1e10, 1e10, 4), kCoeffs, border);
    check_preemphasis<uint32_t>(signals<int32_t>(kSizes, -2e9, 2e9, 5), kCoeffs, border);
    check_preemphasis<int64_t>(signals<double>(kSizes, -1e19, 1e19, 6), kCoeffs, border);
    check_preemphasis<int8_t>(signals<uint16_t>(kSizes, 0, 65535, 7), kCoeffs, border);
    check_preemphasis<float>(signals<float>(kSizes, -1, 1, 8), kCoeffs, border);
  }
}

TEST(PreemphasisGpu, MoreSamplesThanOneGridHolds) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const std::vector<size_t> sizes(70001, 2);
  check_preemphasis<int32_t>(signals<float>(sizes, -100, 100, 9), {0.9f, 0.f, 1.5f},
                             PreemphasisBorder::kReflect);
}

// The distance in representable floats (0: the same value).
int64_t ulps(float a, float b) {
  if (a == b) return 0;
  const auto key = [](float x) {
    int32_t i;
    std::memcpy(&i, &x, 4);
    return i < 0 ? int64_t(std::numeric_limits<int32_t>::min()) - i : int64_t(i);
  };
  return std::llabs(key(a) - key(b));
}

TEST(ToDecibelsGpu, RaggedBatchesAreWithinTwoUlpOfTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<std::vector<float>> in;
  for (size_t n : {5000, 0, 1, 200000, 33}) {
    std::vector<float> v(n);
    for (auto& x : v) x = std::pow(u(rng), 6.f) * 37.f;
    in.push_back(std::move(v));
  }
  in.push_back(std::vector<float>(7, 0.f));                     // silence: at the cut-off
  in.push_back({std::nanf(""), 1.f, 2.f, -3.f, 0.f, 1e-40f});   // NaN, negative, denormal
  in.push_back({std::numeric_limits<float>::infinity(), 4.f});  // an infinite maximum
  const Decibels cases[] = {{10.f, 0.f, -200.f}, {20.f, 0.f, -80.f}, {10.f, 0.5f, -200.f},
                            {20.f, 2.f, -20.f},  {10.f, 1.f, -60.f}, {10.f, 0.f, -1000.f}};
  int64_t values = 0, differ = 0;
  for (const Decibels& args : cases) {
    Device dev;
    std::vector<DecibelsGpuSample> desc;
    int64_t most = 0;
    for (const auto& v : in) {
      desc.push_back({dev.put(v), dev.alloc<float>(v.size()), int64_t(v.size()), 0});
      most = std::max(most, int64_t(v.size()));
    }
    auto* d = dev.put(desc);
    ASSERT_EQ(to_decibels_gpu(d, int(desc.size()), most, args.reference, decibels_min_ratio(args),
                              decibels_mul_log2(args), nullptr),
              0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (size_t i = 0; i < in.size(); ++i) {
      std::vector<float> want(in[i].size());
      to_decibels_cpu(in[i].data(), int64_t(in[i].size()), args, want.data());
      const auto got = dev.get<float>(desc[i].out, in[i].size());
      for (size_t t = 0; t < want.size(); ++t) {
        ++values;
        if (want[t] != want[t] || got[t] != got[t]) {
          EXPECT_TRUE(want[t] != want[t] && got[t] != got[t]) << i << " " << t;
          continue;
        }
        const int64_t d_ulps = ulps(got[t], want[t]);
        differ += d_ulps != 0;
        ASSERT_LE(d_ulps, 2) << "multiplier " << args.multiplier << " reference " << args.reference
                             << " sample " << i << " element " << t << ": " << got[t]
                             << " vs the CPU's " << want[t];
      }
    }
  }
  // The logarithms differ only where the C library's log2f misrounds: rarely.
  EXPECT_LE(differ, values / 100) << differ << " of " << values << " values differ";
}

// The CPU operator's loop (ops/signal/mel_filter_bank.cpp) over an (outer, bins, inner) sample.
std::vector<float> mel_cpu(const MelFilterBank* bank, const std::vector<float>& in, int64_t outer,
                           int64_t bins, int64_t inner, int64_t nfilter) {
  std::vector<float> out(size_t(outer * nfilter * inner), 0.f);
  if (bins < 2) return out;
  for (int64_t o = 0; o < outer; ++o) {
    if (inner == 1) {
      bank->apply_time_major(in.data() + o * bins, out.data() + o * nfilter);
    } else {
      bank->apply_freq_major(in.data() + o * bins * inner, inner, inner,
                             out.data() + o * nfilter * inner, inner);
    }
  }
  return out;
}

TEST(MelFilterBankGpu, RaggedBatchesMatchTheCpuForEveryLayoutAndScale) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  struct Shape {
    int64_t outer, bins, inner;
  };
  // Frequency-major, time-major, 3-D, empty, one bin, a second spectrum size.
  const std::vector<Shape> shapes{{1, 257, 31}, {40, 257, 1}, {3, 129, 5}, {1, 257, 0},
                                  {0, 257, 1},  {1, 1, 4},    {2, 129, 1}, {1, 257, 1000}};
  MelFilterBankArgs variants[5];
  variants[0] = {40, 16000.f, 0.f, 8000.f, false, true};
  variants[1] = {64, 16000.f, 0.f, 8000.f, true, false};
  variants[2] = {10, 22050.f, 300.f, 5000.f, false, false};
  variants[3] = {128, 44100.f, 0.f, 22050.f, true, true};
  variants[4] = {20, 16000.f, 100.f, 16000.f, false, true};  // freq_high past Nyquist
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (const auto& args : variants) {
    SCOPED_TRACE(args.nfilter);
    Device dev;
    std::map<int64_t, MelFilterBank> banks;
    MelBankPack pack;
    std::map<int64_t, int> bank_of;
    for (const Shape& s : shapes) {
      if (s.bins >= 2 && !banks.count(s.bins)) {
        banks.emplace(s.bins, MelFilterBank(args, s.bins));
        bank_of[s.bins] = pack.add(banks.at(s.bins));
      }
    }
    const void* tables = dev.put(pack.bytes());
    std::vector<std::vector<float>> in;
    std::vector<MelGpuSample> desc;
    int64_t most = 0;
    for (const Shape& s : shapes) {
      std::vector<float> v(size_t(s.outer * s.bins * s.inner));
      for (auto& x : v) x = std::pow(u(rng), 3.f);
      const int64_t outputs = s.outer * args.nfilter * s.inner;
      MelGpuSample d{dev.put(v), dev.alloc<float>(size_t(outputs)), s.outer, s.bins, s.inner};
      if (s.bins >= 2) d.bank = pack.on_device(bank_of.at(s.bins), tables);
      desc.push_back(d);
      in.push_back(std::move(v));
      most = std::max(most, outputs);
    }
    ASSERT_EQ(mel_filter_bank_gpu(dev.put(desc), int(desc.size()), most, args.nfilter, nullptr), 0);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Shape& s = shapes[i];
      const auto want = mel_cpu(s.bins >= 2 ? &banks.at(s.bins) : nullptr, in[i], s.outer, s.bins,
                                s.inner, args.nfilter);
      const auto got = dev.get<float>(desc[i].out, want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        ASSERT_TRUE(same(got[k], want[k]))
            << "sample " << i << " output " << k << ": " << got[k] << " vs the CPU's " << want[k];
      }
    }
  }
}

TEST(DctGpu, RaggedBatchesMatchTheCpuForEveryTypeAndLifter) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  struct Shape {
    int64_t outer, n, inner;
  };
  const std::vector<Shape> shapes{{1, 40, 100}, {7, 12, 1},  {2, 40, 3}, {1, 40, 0},
                                  {0, 12, 5},   {1, 128, 9}, {3, 2, 2}};
  std::mt19937 rng(8);
  std::normal_distribution<float> g;
  for (int type = 1; type <= 4; ++type) {
    for (bool normalize : {false, true}) {
      if (type == 1 && normalize) continue;
      for (int64_t n_mfcc : {int64_t(13), int64_t(1000)}) {
        for (float lifter : {0.f, 22.f}) {
          SCOPED_TRACE(testing::Message() << "type " << type << " normalize " << normalize
                                          << " n_mfcc " << n_mfcc << " lifter " << lifter);
          Device dev;
          std::map<int64_t, std::vector<float>> tables;
          std::map<int64_t, const float*> on_device;
          int64_t most_ndct = 0;
          for (const Shape& s : shapes) {
            const int64_t ndct = std::min(n_mfcc, s.n);
            most_ndct = std::max(most_ndct, ndct);
            if (tables.count(s.n)) continue;
            std::vector<float> t(size_t(ndct * s.n));
            dct_table(t.data(), s.n, ndct, type, normalize);
            on_device[s.n] = dev.put(t);
            tables.emplace(s.n, std::move(t));
          }
          std::vector<float> lift;
          if (lifter != 0.f) {
            lift.resize(size_t(most_ndct));
            lifter_coefficients(lift.data(), most_ndct, lifter);
          }
          std::vector<std::vector<float>> in;
          std::vector<DctGpuSample> desc;
          int64_t most = 0;
          for (const Shape& s : shapes) {
            std::vector<float> v(size_t(s.outer * s.n * s.inner));
            for (auto& x : v) x = g(rng);
            const int64_t ndct = std::min(n_mfcc, s.n), outputs = s.outer * ndct * s.inner;
            desc.push_back({dev.put(v), dev.alloc<float>(size_t(outputs)), s.outer, s.n, s.inner,
                            ndct, on_device.at(s.n)});
            in.push_back(std::move(v));
            most = std::max(most, outputs);
          }
          ASSERT_EQ(dct_gpu(dev.put(desc), int(desc.size()), most,
                            lift.empty() ? nullptr : dev.put(lift), nullptr),
                    0);
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          for (size_t i = 0; i < shapes.size(); ++i) {
            const Shape& s = shapes[i];
            const int64_t ndct = desc[i].ndct;
            std::vector<float> want(size_t(s.outer * ndct * s.inner));
            dct_cpu(in[i].data(), s.outer, s.n, s.inner, tables.at(s.n).data(), ndct,
                    lift.empty() ? nullptr : lift.data(), want.data());
            const auto got = dev.get<float>(desc[i].out, want.size());
            for (size_t k = 0; k < want.size(); ++k) {
              ASSERT_TRUE(same(got[k], want[k])) << "sample " << i << " output " << k << ": "
                                                 << got[k] << " vs the CPU's " << want[k];
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace stoker::kernels
