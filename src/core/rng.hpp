// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011). Every random decision in a
// pipeline draws from random_stream(seed, operator instance, sample index): a pure function of
// those numbers, so results never depend on thread count, prefetch depth or scheduling.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace stoker {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// One Philox4x32 block: 10 rounds.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A stream of random numbers. The key is derived from (seed, operator instance); the counter's
// upper 96 bits hold (sample index, epoch) and the low 32 bits count blocks within the stream.
class RandomStream {
 public:
  RandomStream(PhiloxKey key, uint64_t sample_index, uint32_t epoch)
      : key_(key), counter_{0, epoch, uint32_t(sample_index), uint32_t(sample_index >> 32)} {}

  uint32_t next_u32() {
    if (pos_ == 4) {
      block_ = philox4x32_10(counter_, key_);
      ++counter_[0];
      pos_ = 0;
    }
    return block_[pos_++];
  }
  // Uniform in [0, 1) with 24 random bits (every value exactly representable).
  float uniform() { return float(next_u32() >> 8) * (1.0f / 16777216.0f); }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n) (n > 0), by rejection: no modulo bias.
  uint32_t below(uint32_t n);
  // Standard normal (Box–Muller on two uniform draws).
  float normal();
  bool bernoulli(float p) { return uniform() < p; }
  // The key, and the counter of the next block drawn (block k of a fresh stream has the counter
  // {k, counter()[1], counter()[2], counter()[3]}): for kernels that draw block k directly.
  const PhiloxKey& key() const { return key_; }
  const PhiloxCounter& counter() const { return counter_; }

 private:
  PhiloxKey key_;
  PhiloxCounter counter_;
  PhiloxCounter block_{};
  int pos_ = 4;
};

// The stream of operator instance `op_instance` for sample `sample_index` (the sample's
// position in the pipeline's output since the start) in a pipeline seeded with `seed`.
RandomStream random_stream(uint64_t seed, uint64_t op_instance, uint64_t sample_index,
                           uint32_t epoch = 0);

// splitmix64 finaliser: a bijective 64-bit mix, used to derive keys from small integers.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace stoker
