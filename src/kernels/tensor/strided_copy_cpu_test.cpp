#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "stoker/kernels/geometry/slice_cpu.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"

namespace stoker::kernels {
namespace {

// A window [start, start + n) of "abc" read with `border`, as a string ('.' is the fill).
std::string window(Border border, int64_t start, int64_t n) {
  const std::string in = "abc";
  std::string out(size_t(n), '?');
  StridedCopy c;
  c.in = in.data(), c.out = out.data(), c.ndim = 1, c.count = n, c.shape[0] = n;
  c.out_stride[0] = c.in_stride[0] = 1, c.in_start[0] = start, c.in_shape[0] = 3;
  c.border[0] = border, c.fill = '.';
  strided_copy_cpu(c, 1);
  return out;
}

// numpy.pad's modes: constant, edge, symmetric (reflect_1001), reflect (reflect_101), wrap.
TEST(StridedCopy, BordersReadAsNumpyPads) {
  EXPECT_EQ(window(Border::kFill, -4, 11), "....abc....");
  EXPECT_EQ(window(Border::kClamp, -4, 11), "aaaaabccccc");
  EXPECT_EQ(window(Border::kReflect1001, -4, 11), "ccbaabccbaa");
  EXPECT_EQ(window(Border::kReflect101, -4, 11), "abcbabcbabc");
  EXPECT_EQ(window(Border::kWrap, -4, 11), "cabcabcabca");
  EXPECT_EQ(window(Border::kReflect1001, 1, 2), "bc");  // inside: a plain copy
}

// Fill borders on random 3-D windows equal the row-copying slice kernel.
TEST(StridedCopy, FillEqualsTheSliceKernel) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int64_t> extent(1, 6), offset(-4, 4);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<int64_t> in_shape{extent(rng), extent(rng), extent(rng)};
    const std::vector<int64_t> start{offset(rng), offset(rng), offset(rng)};
    const std::vector<int64_t> out_shape{extent(rng), extent(rng), extent(rng)};
    std::vector<uint16_t> in(size_t(in_shape[0] * in_shape[1] * in_shape[2]));
    std::iota(in.begin(), in.end(), uint16_t(1));
    const size_t volume = size_t(out_shape[0] * out_shape[1] * out_shape[2]);
    std::vector<uint16_t> expected(volume), got(volume);
    const uint16_t fill = 999;
    slice_cpu(reinterpret_cast<const uint8_t*>(in.data()), in_shape, 2, start, out_shape,
              reinterpret_cast<const uint8_t*>(&fill), reinterpret_cast<uint8_t*>(expected.data()));
    StridedCopy c;
    c.in = in.data(), c.out = got.data(), c.ndim = 3, c.count = int64_t(volume), c.fill = fill;
    for (int k = 0; k < 3; ++k) {
      c.shape[k] = out_shape[size_t(k)], c.in_start[k] = start[size_t(k)];
      c.in_shape[k] = in_shape[size_t(k)];
    }
    c.in_stride[2] = c.out_stride[2] = 1;
    c.in_stride[1] = in_shape[2], c.in_stride[0] = in_shape[1] * in_shape[2];
    c.out_stride[1] = out_shape[2], c.out_stride[0] = out_shape[1] * out_shape[2];
    strided_copy_cpu(c, 2);
    ASSERT_EQ(got, expected) << "trial " << trial;
  }
}

}  // namespace
}  // namespace stoker::kernels
