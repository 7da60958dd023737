// Whole-pixel writes and the element gather on the CPU, against positions written out.
#include "stoker/kernels/geometry/fill_paste_cpu.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "stoker/kernels/tensor/gather_cpu.hpp"

namespace stoker::kernels {
namespace {

TEST(FillPasteCpu, FillRectWritesOnlyItsRectangle) {
  std::vector<uint16_t> img(4 * 5 * 2, 0);  // 4 x 5, 2 channels of uint16
  const uint16_t pixel[2] = {7, 9};
  fill_rect_cpu(img.data(), 5, sizeof pixel, 1, 3, 2, 5, pixel);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x)
      for (int c = 0; c < 2; ++c) {
        const bool in = y >= 1 && y < 3 && x >= 2;
        EXPECT_EQ(img[size_t((y * 5 + x) * 2 + c)], in ? pixel[c] : 0) << y << "," << x;
      }
}

TEST(FillPasteCpu, PastePlacesTheImageOnAFilledCanvas) {
  std::vector<uint8_t> src(2 * 3);  // 2 x 3, one channel
  std::iota(src.begin(), src.end(), uint8_t(1));
  std::vector<uint8_t> canvas(4 * 5, 0);
  const uint8_t fill = 200;
  paste_cpu(canvas.data(), 4, 5, src.data(), 2, 3, 1, 1, 2, &fill);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) {
      const bool in = y >= 1 && y < 3 && x >= 2;
      EXPECT_EQ(canvas[size_t(y * 5 + x)], in ? src[size_t((y - 1) * 3 + x - 2)] : fill);
    }
}

TEST(GatherCpu, EachComponentReadsItsOffsetPositionInItsOwnChannel) {
  const int64_t h = 3, w = 4, c = 2;
  std::vector<int32_t> in(size_t(h * w * c));
  std::iota(in.begin(), in.end(), 0);
  std::vector<int8_t> off(size_t(2 * h * w * c));
  for (int64_t k = 0; k < h * w * c; ++k) {  // move right where possible, else up
    const int64_t p = k / c, x = p % w, y = p / w;
    off[size_t(2 * k)] = int8_t(x + 1 < w ? 0 : (y > 0 ? -1 : 0));
    off[size_t(2 * k + 1)] = int8_t(x + 1 < w ? 1 : 0);
  }
  std::vector<int32_t> out(in.size());
  gather_elements_cpu(in.data(), out.data(), h, w, c, off.data(), sizeof(int32_t));
  for (int64_t k = 0; k < h * w * c; ++k) {
    const int64_t p = k / c, ch = k % c;
    const int64_t y = p / w + off[size_t(2 * k)], x = p % w + off[size_t(2 * k + 1)];
    EXPECT_EQ(out[size_t(k)], in[size_t((y * w + x) * c + ch)]);
  }
}

}  // namespace
}  // namespace stoker::kernels
