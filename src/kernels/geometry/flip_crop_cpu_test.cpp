#include <gtest/gtest.h>

#include "stoker/kernels/geometry/crop_cpu.hpp"
#include "stoker/kernels/geometry/flip_cpu.hpp"
#include "stoker/testing/image_reference.hpp"

namespace stoker::kernels {
namespace {

TEST(Flip, EveryCombinationMatchesIndexReference) {
  const int64_t H = 7, W = 9, C = 3;
  auto src = testing::random_image_u8(H, W, C, 5);
  for (bool h : {false, true})
    for (bool v : {false, true}) {
      std::vector<uint8_t> out(src.size(), 0);
      flip_cpu<uint8_t>(dense_image(out.data(), H, W, C),
                        dense_image<const uint8_t>(src.data(), H, W, C), h, v);
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          for (int64_t c = 0; c < C; ++c) {
            int64_t sy = v ? H - 1 - y : y, sx = h ? W - 1 - x : x;
            ASSERT_EQ(out[size_t((y * W + x) * C + c)], src[size_t((sy * W + sx) * C + c)]);
          }
    }
}

TEST(Crop, InsideAndPaddedWindows) {
  const int64_t H = 6, W = 8, C = 2;
  auto src = testing::random_image_u8(H, W, C, 9);
  struct Case {
    int64_t y0, x0, h, w;
  };
  for (auto k : {Case{1, 2, 3, 4}, Case{-2, -3, 5, 6}, Case{4, 6, 5, 5}, Case{-1, -1, 8, 10},
                 Case{10, 0, 2, 2}}) {
    std::vector<uint8_t> out(size_t(k.h * k.w * C), 0);
    crop_cpu<uint8_t>(dense_image(out.data(), k.h, k.w, C),
                      dense_image<const uint8_t>(src.data(), H, W, C), k.y0, k.x0, {7, 9});
    for (int64_t y = 0; y < k.h; ++y)
      for (int64_t x = 0; x < k.w; ++x)
        for (int64_t c = 0; c < C; ++c) {
          int64_t sy = k.y0 + y, sx = k.x0 + x;
          bool in = sy >= 0 && sy < H && sx >= 0 && sx < W;
          uint8_t expect = in ? src[size_t((sy * W + sx) * C + c)] : uint8_t(c ? 9 : 7);
          ASSERT_EQ(out[size_t((y * k.w + x) * C + c)], expect);
        }
  }
}

}  // namespace
}  // namespace stoker::kernels
