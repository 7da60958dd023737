#include "stoker/core/rng.hpp"

namespace stoker {

PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kM0) * c[0];
    uint64_t p1 = uint64_t(kM1) * c[2];
    PhiloxCounter n{uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1),
                    uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
    c = n;
    k[0] += kW0;
    k[1] += kW1;
  }
  return c;
}

uint32_t RandomStream::below(uint32_t n) {
  uint32_t limit = uint32_t(-n) % n;  // 2^32 mod n: values below it would bias the result
  for (;;) {
    uint32_t r = next_u32();
    if (r >= limit) return r % n;
  }
}

float RandomStream::normal() {
  // 1 - u is in (0, 1], so the log is finite.
  double u1 = 1.0 - double(uniform());
  double u2 = double(uniform());
  return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2));
}

RandomStream random_stream(uint64_t seed, uint64_t op_instance, uint64_t sample_index,
                           uint32_t epoch) {
  uint64_t key = mix64(seed ^ mix64(op_instance + 0x5851f42d4c957f2dull));
  return RandomStream({uint32_t(key), uint32_t(key >> 32)}, sample_index, epoch);
}

}  // namespace stoker
