// DALI's bounding-box layouts: a permutation of "xyXY" or "xyWH" (2-D), "xyzXYZ" or "xyzWHD"
// (3-D): x, y, z the start corner, X, Y, Z the end corner, W, H, D the extents.
#pragma once

#include <string>

#include "stoker/kernels/boxes/boxes.hpp"

namespace stoker::ops {

struct BoxLayout {
  int ndim = 2;
  std::string text;
  // For each coordinate of a stored box: its axis (0-2) and whether it is the start, the end
  // or the extent.
  enum Role : int8_t { kStart, kEnd, kExtent };
  int8_t axis[6] = {};
  Role role[6] = {};
  int coords() const { return 2 * ndim; }
};

// The layout `text` for boxes of `coords` values ("" : "xyXY" or "xyzXYZ" by coords). Throws
// ValueError naming `op` for anything else.
BoxLayout parse_box_layout(const std::string& text, int64_t coords, const std::string& op);

kernels::BoxNd read_box(const float* values, const BoxLayout& layout);
void write_box(float* values, const kernels::BoxNd& box, const BoxLayout& layout);

}  // namespace stoker::ops
