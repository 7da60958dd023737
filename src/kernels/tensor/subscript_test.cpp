#include "stoker/kernels/tensor/subscript.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "stoker/kernels/tensor/strided_copy_cpu.hpp"

namespace stoker::kernels {
namespace {

constexpr std::optional<int64_t> kNone = std::nullopt;

// Cases of CPython's slice(lo, hi, step).indices(n): the first element and the count of
// range(*indices) (the first is -1 where nothing is picked).
TEST(Subscript, SlicesPickWhatPythonPicks) {
  struct Case {
    int64_t n;
    std::optional<int64_t> lo, hi;
    int64_t step, first, count;
  };
  const Case cases[] = {
      {5, 0, kNone, -3, 0, 1},      {5, -1, kNone, -3, 4, 2},    {5, -1, 3, -3, 4, 1},
      {3, 2, 0, -3, 2, 1},          {5, kNone, -2, -3, 4, 1},    {5, -7, kNone, 1, 0, 5},
      {5, 6, kNone, -1, 4, 5},      {3, 2, -6, -1, 2, 3},        {5, kNone, kNone, 1, 0, 5},
      {1, 0, -2, -3, 0, 1},         {5, kNone, 3, 1, 0, 3},      {5, 6, 0, -1, 4, 4},
      {3, -1, 3, 2, 2, 1},          {1, 0, 9, 1, 0, 1},          {3, kNone, -2, 1, 0, 1},
      {3, kNone, 0, -3, 2, 1},      {5, 0, -2, 1, 0, 3},         {1, -1, kNone, -1, 0, 1},
      {3, kNone, kNone, -1, 2, 3},  {5, 0, -6, -3, 0, 1},        {5, -1, -2, -3, 4, 1},
      {5, kNone, 3, 2, 0, 2},       {5, 0, 3, 1, 0, 3},          {5, -1, 9, 2, 4, 1},
      {0, kNone, kNone, 1, -1, 0},  {0, kNone, kNone, 2, -1, 0}, {0, kNone, kNone, -1, -1, 0},
      {0, kNone, kNone, -3, -1, 0}, {0, kNone, -6, 1, -1, 0},    {0, kNone, -6, 2, -1, 0},
  };
  for (const auto& c : cases) {
    const AxisPick p = slice_pick(c.n, c.lo, c.hi, c.step);
    SCOPED_TRACE(::testing::Message() << "n " << c.n << " lo " << c.lo.value_or(-999) << " hi "
                                      << c.hi.value_or(-999) << " step " << c.step);
    EXPECT_EQ(p.count, c.count);
    if (c.count > 0) {
      EXPECT_EQ(p.start, c.first);
    }
    EXPECT_EQ(p.step, c.step);
  }
  // Extreme bounds and steps do not overflow.
  EXPECT_EQ(slice_pick(5, INT64_MIN, INT64_MAX, 1).count, 5);
  EXPECT_EQ(slice_pick(5, INT64_MAX, INT64_MIN, -1).count, 5);
  EXPECT_EQ(slice_pick(5, kNone, kNone, INT64_MAX).count, 1);
  EXPECT_EQ(slice_pick(5, kNone, kNone, INT64_MIN).count, 1);
}

// The definition: output element (i_0, ..., i_n) is input element (start_k + i_k * step_k)_k.
std::vector<int32_t> reference(const std::vector<int32_t>& in, const std::vector<int64_t>& shape,
                               const std::vector<AxisPick>& picks) {
  std::vector<int32_t> out;
  const size_t n = shape.size();
  int64_t volume = 1;
  for (const auto& p : picks) volume *= p.count;
  std::vector<int64_t> pos(n, 0);
  for (int64_t e = 0; e < volume; ++e) {
    int64_t flat = 0;
    for (size_t k = 0; k < n; ++k) flat = flat * shape[k] + picks[k].start + pos[k] * picks[k].step;
    out.push_back(in[size_t(flat)]);
    for (size_t k = n; k-- > 0;) {
      if (++pos[k] < picks[k].count) break;
      pos[k] = 0;
    }
  }
  return out;
}

std::vector<int32_t> through_copies(const std::vector<int32_t>& in,
                                    const std::vector<int64_t>& shape,
                                    const std::vector<AxisPick>& picks, bool* view) {
  const SubscriptPlan plan = plan_subscript(shape, picks);
  std::vector<int32_t> out(size_t(plan.volume), -1);
  for (const auto& c : subscript_copies(plan, in.data(), out.data(), sizeof(int32_t)))
    strided_copy_cpu(c, sizeof(int32_t));
  *view = plan.contiguous();
  if (*view && plan.volume > 0) {  // a view must read the same elements in place
    const std::vector<int32_t> in_place(in.begin() + plan.offset,
                                        in.begin() + plan.offset + plan.volume);
    EXPECT_EQ(in_place, out);
  }
  return out;
}

// Random indices, ranges and steps (both directions) on tensors of up to 9 axes: more axes
// than one copy takes (kCopyMaxDims) when nothing merges.
TEST(Subscript, CopiesEqualTheDefinition) {
  std::mt19937 rng(7);
  int views = 0, copies = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int ndim = 1 + int(rng() % 9);
    std::vector<int64_t> shape;
    int64_t volume = 1;
    for (int k = 0; k < ndim; ++k) {
      // Mostly non-empty: an empty axis empties the whole tensor.
      shape.push_back(rng() % 16 == 0 ? 0 : 1 + int64_t(rng() % (ndim > 6 ? 3 : 4)));
      volume *= shape.back();
    }
    std::vector<int32_t> in(static_cast<size_t>(volume));
    std::iota(in.begin(), in.end(), 0);
    std::vector<AxisPick> picks;
    for (int k = 0; k < ndim; ++k) {
      const int64_t n = shape[size_t(k)];
      switch (rng() % 4) {
        case 0:  // an index
          picks.push_back(n > 0 ? AxisPick{int64_t(rng() % uint64_t(n)), 1, 1} : AxisPick{0, 0, 1});
          break;
        case 1:  // the whole axis
          picks.push_back(slice_pick(n, kNone, kNone, 1));
          break;
        default: {
          const int64_t steps[] = {1, 1, 2, 3, -1, -1, -2};
          const auto bound = [&]() -> std::optional<int64_t> {
            if (rng() % 3 == 0) return kNone;
            return int64_t(rng() % 11) - 5;
          };
          const auto lo = bound(), hi = bound();
          picks.push_back(slice_pick(n, lo, hi, steps[rng() % 7]));
        }
      }
    }
    bool view = false;
    SCOPED_TRACE(trial);
    EXPECT_EQ(through_copies(in, shape, picks, &view), reference(in, shape, picks));
    (view ? views : copies) += 1;
  }
  EXPECT_GT(views, 40);  // both kinds of result are exercised
  EXPECT_GT(copies, 40);
}

// Axes merge where one stride covers them: x[1], x[2:4] and a full reversal are views or one
// axis; x[:, ::2] is not.
TEST(Subscript, PlansMergeAxes) {
  const std::vector<int64_t> shape{4, 3, 2};
  auto plan = plan_subscript(shape, {{1, 1, 1}, {0, 3, 1}, {0, 2, 1}});
  EXPECT_TRUE(plan.contiguous());
  EXPECT_EQ(plan.offset, 6);
  plan = plan_subscript(shape, {{2, 2, 1}, {0, 3, 1}, {0, 2, 1}});
  EXPECT_TRUE(plan.contiguous());
  EXPECT_EQ(plan.offset, 12);
  plan = plan_subscript(shape, {{3, 4, -1}, {2, 3, -1}, {1, 2, -1}});
  ASSERT_EQ(plan.axes.size(), 1u);
  EXPECT_EQ(plan.axes[0].count, 24);
  EXPECT_EQ(plan.axes[0].in_stride, -1);
  EXPECT_EQ(plan.offset, 23);
  EXPECT_FALSE(plan.contiguous());
  plan = plan_subscript(shape, {{0, 4, 1}, {0, 2, 2}, {0, 2, 1}});
  EXPECT_FALSE(plan.contiguous());
  EXPECT_EQ(plan.axes.size(), 3u);  // strides 6, 4, 1: nothing merges
  plan = plan_subscript(shape, {{0, 4, 1}, {0, 0, 1}, {0, 2, 1}});
  EXPECT_EQ(plan.volume, 0);
  EXPECT_TRUE(subscript_copies(plan, nullptr, nullptr, 4).empty());
}

}  // namespace
}  // namespace stoker::kernels
