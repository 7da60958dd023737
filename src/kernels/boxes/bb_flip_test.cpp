#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/kernels/boxes/bb_flip.hpp"

namespace stoker::kernels {
namespace {

// Every format and flip combination against the definition, written out per coordinate.
TEST(BbFlip, EveryCombinationMatchesTheDefinition) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.2f, 1.2f);
  for (int mask = 0; mask < 8; ++mask) {
    const BbFlip p{.ltrb = (mask & 1) != 0, .horizontal = (mask & 2) != 0,
                   .vertical = (mask & 4) != 0};
    std::vector<float> in(4 * 9), out(in.size());
    for (auto& v : in) v = u(rng);
    bb_flip_cpu(out.data(), in.data(), 9, p);
    for (size_t k = 0; k < 9; ++k) {
      const float* b = &in[4 * k];
      const float l = b[0], t = b[1];
      const float r = p.ltrb ? b[2] : b[0] + b[2], bottom = p.ltrb ? b[3] : b[1] + b[3];
      const float el = p.horizontal ? 1.f - r : l, er = p.horizontal ? 1.f - l : r;
      const float et = p.vertical ? 1.f - bottom : t, eb = p.vertical ? 1.f - t : bottom;
      const std::vector<float> expected =
          p.ltrb ? std::vector<float>{el, et, er, eb} : std::vector<float>{el, et, er - el, eb - et};
      EXPECT_EQ(std::vector<float>(out.begin() + 4 * k, out.begin() + 4 * k + 4), expected)
          << "mask " << mask << " box " << k;
    }
  }
}

TEST(BbFlip, MirrorsAKnownBox) {
  const float box[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  float out[4];
  bb_flip_cpu(out, box, 1, BbFlip{.ltrb = true, .horizontal = true, .vertical = true});
  EXPECT_FLOAT_EQ(out[0], 0.7f);
  EXPECT_FLOAT_EQ(out[1], 0.6f);
  EXPECT_FLOAT_EQ(out[2], 0.9f);
  EXPECT_FLOAT_EQ(out[3], 0.8f);
}

}  // namespace
}  // namespace stoker::kernels
