// preemphasis_filter, to_decibels, mel_filter_bank and mfcc on the GPU: the CPU kernels of
// preemphasis.hpp, decibels.hpp, mel_filter_bank.hpp and dct.hpp, every sample of a batch in
// one launch (samples past 65535, the grid's y limit, in further launches). Each float product
// and sum is rounded once as on the CPU (float_rn.hpp: nvcc would fuse them) and taken in the
// CPU's order, from the tables the CPU builds, so the results are the CPU's bit for bit, but for
// to_decibels' logarithm: see to_decibels_gpu.
//
// Each launcher takes a device array of per-sample descriptors (samples without elements may
// be left out) and the largest sample's element (or output) count, and returns a cudaError_t
// (0: launched).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"
#include "stoker/kernels/signal/mel_filter_bank.hpp"
#include "stoker/kernels/signal/preemphasis.hpp"

namespace stoker::kernels {

// -- preemphasis_filter: `in` and `out` of any integer type, float32 or float64.
struct PreemphasisGpuSample {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t elements = 0;
  float coeff = 0.f;
};

int preemphasis_gpu(const PreemphasisGpuSample* samples, int n, int64_t max_elements, DType in,
                    DType out, PreemphasisBorder border, StreamHandle stream);

// -- to_decibels (float32).
struct DecibelsGpuSample {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t elements = 0;
  // The sample's largest value above 0 as bits (0 before the launch): a first launch finds it
  // when `reference` is 0.
  uint32_t max_bits = 0;
};

// `min_ratio` and `mul_log2`: decibels_min_ratio and decibels_mul_log2 of the arguments;
// `reference` 0: each sample's maximum. The logarithm is taken in double and rounded to float,
// where the CPU calls the C library's log2f (within 0.75 ulp in glibc): the two agree but for
// rare last-bit differences, so outputs are within 2 ulp of the CPU's.
int to_decibels_gpu(DecibelsGpuSample* samples, int n, int64_t max_elements, float reference,
                    float min_ratio, float mul_log2, StreamHandle stream);

// -- mel_filter_bank: one MelFilterBank's tables on the device, arranged for the CPU's two
// orders of summation.
struct MelBankGpu {
  // Time-major spectra (apply_time_major): per bin 1 - weight_down and weight_down; per filter
  // its norm (null: not normalised); the first bin of each of the nfilter + 1 intervals and the
  // end of the last (nfilter + 2).
  const float* rise = nullptr;
  const float* fall = nullptr;
  const float* norm = nullptr;
  const int64_t* ends = nullptr;
  // Frequency-major spectra (apply_freq_major): per bin the weight into the filter it rises
  // into and out of the filter it falls from (norms applied); the bins of interval k (those the
  // CPU's loop gives interval k) are [first[k], last[k]), k <= nfilter.
  const float* up = nullptr;
  const float* down = nullptr;
  const int64_t* first = nullptr;
  const int64_t* last = nullptr;
};

// A sample as the CPU operator sees it: (outer, bins, inner) -> (outer, nfilter, inner); inner
// 1 is a time-major spectrum. Fewer than 2 bins give zeros (bank unused).
struct MelGpuSample {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t outer = 0, bins = 0, inner = 0;
  MelBankGpu bank;
};

// `max_outputs`: the largest outer * nfilter * inner.
int mel_filter_bank_gpu(const MelGpuSample* samples, int n, int64_t max_outputs, int64_t nfilter,
                        StreamHandle stream);

// The tables of several banks in one block of bytes, for one upload; each table 8-byte aligned.
class MelBankPack {
 public:
  // Adds `bank`'s tables; returns its number.
  int add(const MelFilterBank& bank) {
    const auto& wd = bank.weight_down();
    const auto& norm = bank.norm();
    const auto& interval = bank.interval();
    const int64_t bins = bank.bins(), nfilter = bank.args().nfilter;
    const bool normalize = bank.args().normalize;
    std::vector<float> rise(size_t(bins), 0.f), up(size_t(bins), 0.f), down(size_t(bins), 0.f);
    std::vector<int64_t> first(size_t(nfilter + 1), 0), last(size_t(nfilter + 1), 0);
    for (int64_t b = 0; b < bins; ++b) rise[size_t(b)] = 1.f - wd[size_t(b)];
    // The weights apply_freq_major computes for every bin it visits, in its float steps.
    for (int64_t b = bank.bin_start(); b <= bank.bin_end(); ++b) {
      const int k = interval[size_t(b)];
      if (k < 0) continue;
      if (first[size_t(k)] == last[size_t(k)]) first[size_t(k)] = b;
      last[size_t(k)] = b + 1;
      float weight_up = 1.f - wd[size_t(b)], weight_down = wd[size_t(b)];
      if (k < nfilter) up[size_t(b)] = normalize ? weight_up * norm[size_t(k)] : weight_up;
      if (k > 0) down[size_t(b)] = normalize ? weight_down * norm[size_t(k - 1)] : weight_down;
    }
    Offsets o;
    o.rise = put(rise);
    o.fall = put(wd);
    o.norm = normalize ? put(norm) : -1;
    o.ends = put(bank.ends());
    o.up = put(up);
    o.down = put(down);
    o.first = put(first);
    o.last = put(last);
    banks_.push_back(o);
    return int(banks_.size() - 1);
  }

  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // Bank `index` in the copy of bytes() at `device`.
  MelBankGpu on_device(int index, const void* device) const {
    const Offsets& o = banks_[size_t(index)];
    const auto* base = static_cast<const uint8_t*>(device);
    const auto f = [&](int64_t at) {
      return at < 0 ? nullptr : reinterpret_cast<const float*>(base + at);
    };
    const auto i = [&](int64_t at) { return reinterpret_cast<const int64_t*>(base + at); };
    return {f(o.rise), f(o.fall), f(o.norm), i(o.ends), f(o.up), f(o.down), i(o.first), i(o.last)};
  }

 private:
  struct Offsets {
    int64_t rise, fall, norm, ends, up, down, first, last;
  };
  template <typename T>
  int64_t put(const std::vector<T>& v) {
    const size_t at = (bytes_.size() + 7) / 8 * 8;
    bytes_.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bytes_.data() + at, v.data(), v.size() * sizeof(T));
    return int64_t(at);
  }
  std::vector<uint8_t> bytes_;
  std::vector<Offsets> banks_;
};

// -- mfcc: the DCT along the middle axis of (outer, n, inner) -> (outer, ndct, inner), with
// dct_table's table (ndct x n, on the device).
struct DctGpuSample {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t outer = 0, n = 0, inner = 0, ndct = 0;
  const float* table = nullptr;
};

// `max_outputs`: the largest outer * ndct * inner; `lifter`: the liftering weights on the device
// (as many as the largest ndct), or null.
int dct_gpu(const DctGpuSample* samples, int count, int64_t max_outputs, const float* lifter,
            StreamHandle stream);

}  // namespace stoker::kernels
