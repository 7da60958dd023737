#include "stoker/kernels/segmentation/blobs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// The slow reference: a breadth-first flood fill from each unvisited element in raster order.
Blobs flood_fill(const std::vector<int>& data, const std::vector<int64_t>& shape, int background) {
  const int ndim = int(shape.size());
  std::vector<int64_t> stride(size_t(ndim), 1);
  for (int d = ndim - 2; d >= 0; --d)
    stride[size_t(d)] = stride[size_t(d + 1)] * shape[size_t(d + 1)];
  auto coord = [&](int64_t i, int d) { return (i / stride[size_t(d)]) % shape[size_t(d)]; };
  Blobs out;
  out.ndim = ndim;
  std::vector<bool> seen(data.size(), false);
  for (int64_t s = 0; s < int64_t(data.size()); ++s) {
    if (seen[size_t(s)] || data[size_t(s)] == background) continue;
    std::vector<int64_t> lo(static_cast<size_t>(ndim)), hi(static_cast<size_t>(ndim));
    for (int d = 0; d < ndim; ++d) lo[size_t(d)] = coord(s, d), hi[size_t(d)] = coord(s, d) + 1;
    std::deque<int64_t> todo{s};
    seen[size_t(s)] = true;
    while (!todo.empty()) {
      const int64_t i = todo.front();
      todo.pop_front();
      for (int d = 0; d < ndim; ++d) {
        const int64_t c = coord(i, d);
        lo[size_t(d)] = std::min(lo[size_t(d)], c), hi[size_t(d)] = std::max(hi[size_t(d)], c + 1);
        for (int step : {-1, 1}) {
          if (c + step < 0 || c + step >= shape[size_t(d)]) continue;
          const int64_t j = i + step * stride[size_t(d)];
          if (seen[size_t(j)] || data[size_t(j)] != data[size_t(s)]) continue;
          seen[size_t(j)] = true;
          todo.push_back(j);
        }
      }
    }
    out.values.push_back(data[size_t(s)]);
    out.boxes.insert(out.boxes.end(), lo.begin(), lo.end());
    out.boxes.insert(out.boxes.end(), hi.begin(), hi.end());
  }
  return out;
}

TEST(FindBlobs, MatchesAFloodFillOnRandomLabelMaps) {
  std::mt19937 rng(5);
  const std::vector<std::vector<int64_t>> shapes = {{1},       {17},         {9, 13}, {1, 40},
                                                    {6, 7, 5}, {3, 4, 2, 5}, {0, 4},  {31, 29}};
  for (const auto& shape : shapes) {
    for (int labels : {2, 3, 6}) {
      int64_t volume = 1;
      for (int64_t s : shape) volume *= s;
      std::vector<int> data(static_cast<size_t>(volume));
      // Runs of equal values, so that blobs are larger than single elements.
      std::uniform_int_distribution<int> value(0, labels - 1), run(1, 6);
      for (size_t i = 0; i < data.size();) {
        const int v = value(rng);
        for (int r = run(rng); r > 0 && i < data.size(); --r) data[i++] = v;
      }
      for (int background : {0, 1, -7}) {
        const Blobs got = find_blobs<int>(data.data(), shape, background);
        const Blobs want = flood_fill(data, shape, background);
        EXPECT_EQ(got.values, want.values) << shape.size() << "-D, " << labels << " labels";
        EXPECT_EQ(got.boxes, want.boxes) << shape.size() << "-D, " << labels << " labels";
      }
    }
  }
}

TEST(FindBlobs, DiagonalNeighboursAreSeparateAndAUShapeIsOne) {
  // 1 . . 1       the U's arms have different roots until the bottom row joins them
  // . 1 . 1
  // . 1 1 1
  const std::vector<uint8_t> m = {1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1};
  const std::vector<int64_t> shape = {3, 4};
  const Blobs b = find_blobs<uint8_t>(m.data(), shape, 0);
  ASSERT_EQ(b.count(), 2);
  EXPECT_EQ(std::vector<int64_t>(b.lo(0), b.hi(0) + 2), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(std::vector<int64_t>(b.lo(1), b.hi(1) + 2), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(b.box_volume(1), 9);
}

TEST(FindBlobs, EqualNeighboursOfDifferentValuesStaySeparate) {
  const std::vector<int16_t> m = {2, 2, 3, 3, 2};
  const std::vector<int64_t> shape = {5};
  const Blobs b = find_blobs<int16_t>(m.data(), shape, 0);
  EXPECT_EQ(b.values, (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(b.boxes, (std::vector<int64_t>{0, 2, 2, 4, 4, 5}));
  const Blobs none = find_blobs<int16_t>(m.data(), shape, 2);  // 2 is the background now
  EXPECT_EQ(none.values, (std::vector<int64_t>{3}));
  const Blobs all = find_blobs<int16_t>(m.data(), shape, std::nullopt);  // no background
  EXPECT_EQ(all.values, (std::vector<int64_t>{2, 3, 2}));
}

TEST(FindBlobs, BoolMasks) {
  const bool m[6] = {true, true, false, false, true, true};
  const std::vector<int64_t> shape = {2, 3};
  const Blobs b = find_blobs<bool>(m, shape, false);
  ASSERT_EQ(b.count(), 1);  // (0,1) and (1,1) are face neighbours: one blob
  EXPECT_EQ(b.values[0], 1);
  EXPECT_EQ(b.boxes, (std::vector<int64_t>{0, 0, 2, 3}));
}

}  // namespace
}  // namespace stoker::kernels
