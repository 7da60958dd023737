#include "stoker/kernels/geometry/slice_cpu.hpp"

#include <gtest/gtest.h>

#include <random>

namespace stoker::kernels {
namespace {

// Element by element, from the definition.
std::vector<int32_t> reference(const std::vector<int32_t>& in, const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& start,
                               const std::vector<int64_t>& out_shape, int32_t fill) {
  int64_t volume = 1;
  for (auto d : out_shape) volume *= d;
  std::vector<int32_t> out;
  for (int64_t flat = 0; flat < volume; ++flat) {
    int64_t rest = flat, in_index = 0, stride = 1;
    bool inside = true;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t x = start[d] + rest % out_shape[d];
      rest /= out_shape[d];
      inside &= x >= 0 && x < shape[d];
      in_index += x * stride;
      stride *= shape[d];
    }
    out.push_back(inside ? in[size_t(in_index)] : fill);
  }
  return out;
}

TEST(SliceCpu, MatchesTheElementwiseReferenceInsideAndOutside) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t nd = 1 + rng() % 4;
    std::vector<int64_t> shape(nd), start(nd), out_shape(nd);
    int64_t volume = 1;
    for (size_t d = 0; d < nd; ++d) {
      shape[d] = 1 + int64_t(rng() % 6);
      start[d] = int64_t(rng() % 9) - 3;  // before, inside and past the input
      out_shape[d] = int64_t(rng() % 7);
      volume *= shape[d];
    }
    std::vector<int32_t> in(static_cast<size_t>(volume));
    for (auto& v : in) v = int32_t(rng());
    const int32_t fill = -7;
    auto expected = reference(in, shape, start, out_shape, fill);
    std::vector<int32_t> got(expected.size(), 12345);
    slice_cpu(reinterpret_cast<const uint8_t*>(in.data()), shape, 4, start, out_shape,
              reinterpret_cast<const uint8_t*>(&fill), reinterpret_cast<uint8_t*>(got.data()));
    ASSERT_EQ(got, expected) << "trial " << trial;
  }
}

}  // namespace
}  // namespace stoker::kernels
