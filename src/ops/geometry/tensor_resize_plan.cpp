#include "stoker/ops/geometry/tensor_resize_plan.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "stoker/core/error.hpp"
#include "stoker/ops/arg_limits.hpp"

namespace stoker::ops {

ResizeMode parse_resize_mode(const std::string& op, const std::string& mode) {
  if (mode == "default") return ResizeMode::kDefault;
  if (mode == "stretch") return ResizeMode::kStretch;
  if (mode == "not_larger") return ResizeMode::kNotLarger;
  if (mode == "not_smaller") return ResizeMode::kNotSmaller;
  throw ValueError(op + ": unknown mode '" + mode +
                   "'; expected default, stretch, not_larger or not_smaller");
}

SizeRounding parse_size_rounding(const std::string& op, const std::string& rounding) {
  if (rounding == "round") return SizeRounding::kRound;
  if (rounding == "truncate") return SizeRounding::kTruncate;
  if (rounding == "ceil") return SizeRounding::kCeil;
  throw ValueError(op + ": size_rounding must be 'round', 'truncate' or 'ceil', got '" + rounding +
                   "'");
}

void axis_region(AxisRequest& a, int64_t extent, bool has_roi, double start, double end,
                 bool relative) {
  if (!has_roi || extent <= 0) {
    a.lo = 0, a.hi = float(extent);
    return;
  }
  // DALI's arguments are float32; the arithmetic is double, the result float again.
  double lo = float(start), hi = float(end);
  if (relative) lo *= double(extent), hi *= double(extent);
  constexpr float kMinSize = 1e-3f;  // a degenerate region samples one point, not nothing
  if (std::fabs(hi - lo) < kMinSize) {
    const float offset = lo <= hi ? 0.5f * kMinSize : -0.5f * kMinSize;
    lo -= offset, hi += offset;
  }
  a.lo = float(lo), a.hi = float(hi);
}

namespace {

// DALI's AdjustOutputSize: derived extents and the mode's rule, then max_size.
void adjust_output_size(std::vector<float>& out, const std::vector<float>& in, ResizeMode mode,
                        const std::vector<AxisRequest>& axes) {
  const size_t n = out.size();
  std::vector<double> scale(n, 1.0);
  std::vector<bool> mask(n);
  size_t provided = 0;
  for (size_t d = 0; d < n; ++d) {
    mask[d] = out[d] != 0 && in[d] != 0;
    scale[d] = in[d] != 0 ? double(out[d] / in[d]) : 1.0;
    provided += mask[d];
  }
  if (provided == 0) {  // nothing to go by: the input's extents
    out = in;
    return;
  }
  const auto cap = [&] {
    for (size_t d = 0; d < n; ++d) {
      const float m = axes[d].max_size;
      if (m > 0 && std::fabs(out[d]) > m) out[d] = std::copysign(m, out[d]);
    }
  };
  if (mode == ResizeMode::kDefault) {
    if (provided < n) {  // the missing extents take the geometric mean of the given scales
      double avg = 1;
      for (size_t d = 0; d < n; ++d)
        if (mask[d]) avg *= std::abs(scale[d]);
      if (provided > 1) avg = std::pow(avg, 1.0 / double(provided));
      for (size_t d = 0; d < n; ++d)
        if (!mask[d]) out[d] = float(double(in[d]) * avg);
    }
    cap();
  } else if (mode == ResizeMode::kStretch) {
    for (size_t d = 0; d < n; ++d)
      if (!mask[d]) out[d] = in[d];
    cap();
  } else {  // one scale for all: the smallest (not_larger) or largest (not_smaller) given
    double final_scale = 0;
    bool first = true;
    for (size_t d = 0; d < n; ++d) {
      if (!mask[d]) continue;
      const float s = float(std::abs(scale[d]));
      if (first || (mode == ResizeMode::kNotSmaller && s > final_scale) ||
          (mode == ResizeMode::kNotLarger && s < final_scale))
        final_scale = s;
      first = false;
    }
    for (size_t d = 0; d < n; ++d) {
      if (axes[d].max_size > 0) {
        const double s = double(axes[d].max_size) / double(in[d]);
        if (s < final_scale) final_scale = s;
      }
    }
    for (size_t d = 0; d < n; ++d) {
      if (!mask[d] || std::abs(scale[d]) != final_scale)
        out[d] = float(double(in[d]) * std::copysign(final_scale, scale[d]));
    }
  }
}

int64_t round_size(float v, SizeRounding r) {
  switch (r) {
    case SizeRounding::kTruncate:
      return int64_t(v);
    case SizeRounding::kCeil:
      return int64_t(std::ceil(v));
    case SizeRounding::kRound:
      break;
  }
  return int64_t(std::round(v));
}

}  // namespace

std::vector<AxisResize> resize_axes(const std::string& op, int sample,
                                    std::vector<AxisRequest> axes, bool empty, bool subpixel_scale,
                                    ResizeMode mode, SizeRounding rounding, double in_elements,
                                    std::string_view size_args) {
  const size_t n = axes.size();
  std::vector<float> size(n), in(n);
  for (size_t d = 0; d < n; ++d) {
    auto& a = axes[d];
    size[d] = a.size;
    float extent = a.hi - a.lo;
    if (extent < 0) {  // a flipped region: the same extent, the flip moves to the size
      std::swap(a.lo, a.hi);
      size[d] = -size[d];
      extent = -extent;
    }
    in[d] = extent;
  }
  adjust_output_size(size, in, mode, axes);
  const int64_t min_size = empty ? 0 : 1;
  std::vector<double> extents(n);
  for (size_t d = 0; d < n; ++d) {
    STOKER_ENFORCE(std::isfinite(size[d]), ValueError, op, ": sample ", sample, ": axis ", d,
                   " has a size that is not a number");
    extents[d] = std::max(1.0, double(std::fabs(size[d])));
  }
  // Bounded before the sizes become integers (arg_limits.hpp).
  check_arg_elements(op, size_args, extents, sample, in_elements);
  std::vector<AxisResize> out(n);
  for (size_t d = 0; d < n; ++d) {
    auto& o = out[d];
    const float want = std::fabs(size[d]);
    o.out = std::max(min_size, round_size(want, rounding));
    o.lo = axes[d].lo, o.hi = axes[d].hi;
    if (size[d] < 0) std::swap(o.lo, o.hi);
    if (subpixel_scale && float(o.out) != want) {
      // The rounded extent keeps the requested scale: the region grows or shrinks about the
      // aligned point (at most 10x: a request for a tenth of a pixel is the user's to fix).
      const double k = std::clamp(double(o.out) / double(want), -10.0, 10.0);
      const double a = axes[d].alignment;
      const double c = (1.0 - a) * double(o.lo) + a * double(o.hi);
      o.lo = float(std::clamp(c + (double(o.lo) - c) * k, -1e9, 1e9));
      o.hi = float(std::clamp(c + (double(o.hi) - c) * k, -1e9, 1e9));
    }
    STOKER_ENFORCE(std::isfinite(o.lo) && std::isfinite(o.hi), ValueError, op, ": sample ", sample,
                   ": axis ", d,
                   " has a region of interest (or alignment) that is not a "
                   "finite number");
  }
  return out;
}

ResizeBlock resize_block(const std::vector<std::vector<int64_t>>& in_shapes,
                         const std::vector<std::vector<AxisResize>>& plans, int ndim) {
  const auto unchanged = [&](int d) {
    for (size_t i = 0; i < plans.size(); ++i) {
      const int64_t extent = in_shapes[i][size_t(d)];
      const auto& a = plans[i][size_t(d)];
      // DALI compares the region's ends truncated to integers.
      if (a.out != extent || int64_t(a.lo) != 0 || int64_t(a.hi) != extent) return false;
    }
    return true;
  };
  int first = 0, end = ndim, trim = std::max(0, ndim - 2);
  while (trim > 0 && unchanged(first)) ++first, --trim;
  while (trim > 0 && end - 1 > first && unchanged(end - 1)) --end, --trim;
  return {first, end - first};
}

}  // namespace stoker::ops
