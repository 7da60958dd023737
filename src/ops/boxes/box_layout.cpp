#include "stoker/ops/boxes/box_layout.hpp"

#include <algorithm>

#include "stoker/core/error.hpp"

namespace stoker::ops {

BoxLayout parse_box_layout(const std::string& text, int64_t coords, const std::string& op) {
  STOKER_ENFORCE(coords == 4 || coords == 6, ValueError, op,
                 ": boxes have 4 (2-D) or 6 (3-D) coordinates, got ", coords);
  BoxLayout l;
  l.ndim = int(coords / 2);
  l.text = text.empty() ? (l.ndim == 2 ? "xyXY" : "xyzXYZ") : text;
  const std::string starts = "xyz", ends = "XYZ", extents = "WHD";
  auto sorted = [](std::string s) {
    std::sort(s.begin(), s.end());
    return s;
  };
  const std::string corners = starts.substr(0, size_t(l.ndim)) + ends.substr(0, size_t(l.ndim));
  const std::string spans = starts.substr(0, size_t(l.ndim)) + extents.substr(0, size_t(l.ndim));
  STOKER_ENFORCE(sorted(l.text) == sorted(corners) || sorted(l.text) == sorted(spans), ValueError,
                 op, ": bbox_layout '", l.text, "' is not a permutation of '", corners, "' or '",
                 spans, "' (boxes of ", coords, " coordinates)");
  for (size_t k = 0; k < l.text.size(); ++k) {
    const char c = l.text[k];
    size_t at = starts.find(c);
    if (at != std::string::npos) {
      l.axis[k] = int8_t(at), l.role[k] = BoxLayout::kStart;
    } else if ((at = ends.find(c)) != std::string::npos) {
      l.axis[k] = int8_t(at), l.role[k] = BoxLayout::kEnd;
    } else {
      l.axis[k] = int8_t(extents.find(c)), l.role[k] = BoxLayout::kExtent;
    }
  }
  return l;
}

kernels::BoxNd read_box(const float* values, const BoxLayout& layout) {
  kernels::BoxNd b;
  float extent[3] = {0.f, 0.f, 0.f};
  bool has_extent = false;
  for (int k = 0; k < layout.coords(); ++k) {
    const int a = layout.axis[k];
    switch (layout.role[k]) {
      case BoxLayout::kStart: b.lo[a] = values[k]; break;
      case BoxLayout::kEnd: b.hi[a] = values[k]; break;
      case BoxLayout::kExtent: extent[a] = values[k], has_extent = true; break;
    }
  }
  if (has_extent) {
    for (int a = 0; a < layout.ndim; ++a) b.hi[a] = b.lo[a] + extent[a];
  }
  return b;
}

void write_box(float* values, const kernels::BoxNd& box, const BoxLayout& layout) {
  for (int k = 0; k < layout.coords(); ++k) {
    const int a = layout.axis[k];
    switch (layout.role[k]) {
      case BoxLayout::kStart: values[k] = box.lo[a]; break;
      case BoxLayout::kEnd: values[k] = box.hi[a]; break;
      case BoxLayout::kExtent: values[k] = box.hi[a] - box.lo[a]; break;
    }
  }
}

}  // namespace stoker::ops
