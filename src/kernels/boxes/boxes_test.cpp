#include <gtest/gtest.h>

#include "stoker/kernels/boxes/boxes.hpp"

namespace stoker::kernels {
namespace {

BoxNd box2(float x0, float y0, float x1, float y1) { return {{x0, y0, 0.f}, {x1, y1, 0.f}}; }

TEST(Boxes, OverlapMeasuresOnWorkedCases) {
  const BoxNd a = box2(0, 0, 2, 2), b = box2(1, 1, 3, 3);
  EXPECT_FLOAT_EQ(box_volume(a, 2), 4.f);
  EXPECT_FLOAT_EQ(box_volume(box_intersection(a, b, 2), 2), 1.f);
  EXPECT_FLOAT_EQ(box_iou(a, b, 2), 1.f / 7.f);
  EXPECT_FLOAT_EQ(box_coverage(a, b, 2), 0.25f);  // a quarter of b lies in a
  EXPECT_FLOAT_EQ(box_iou(a, box2(5, 5, 6, 6), 2), 0.f);  // apart: no overlap
  EXPECT_FLOAT_EQ(box_iou(box2(1, 1, 1, 1), box2(1, 1, 1, 1), 2), 0.f);  // empty boxes
  const BoxNd c{{0, 0, 0}, {1, 1, 2}}, d{{0, 0, 1}, {1, 1, 3}};
  EXPECT_FLOAT_EQ(box_iou(c, d, 3), 1.f / 3.f);
}

}  // namespace
}  // namespace stoker::kernels
