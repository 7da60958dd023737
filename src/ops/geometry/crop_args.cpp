#include "stoker/ops/geometry/crop_args.hpp"

#include <algorithm>
#include <cmath>

#include "stoker/ops/arg_limits.hpp"

namespace stoker::ops {

CropBox crop_box_arg(const Operator& op, const Workspace& ws, int i, int64_t in_d, int64_t in_h,
                     int64_t in_w) {
  const std::string& name = op.spec().schema->name;
  const auto rounding = op.spec().arg<std::string>("rounding");
  STOKER_ENFORCE(rounding == "round" || rounding == "truncate", ValueError, name,
                 ": rounding must be 'round' or 'truncate', got '", rounding, "'");
  const bool given_h = op.spec().given("crop_h"), given_w = op.spec().given("crop_w");
  STOKER_ENFORCE(given_h == given_w, ValueError, name, ": crop_w and crop_h must be given together");
  STOKER_ENFORCE(!op.spec().given("crop_d") || given_h, ValueError, name,
                 ": crop_d must be given with crop_h and crop_w");
  auto crop = op.list_arg(ws, "crop", i);
  double cd = op.spec().given("crop_d") ? op.scalar_arg(ws, "crop_d", i) : 0;
  double ch = op.scalar_arg(ws, "crop_h", i), cw = op.scalar_arg(ws, "crop_w", i);
  if (!crop.empty()) {
    STOKER_ENFORCE(crop.size() <= 3, ValueError, name,
                   ": crop must be [height, width] or [depth, height, width] (or one value for a "
                   "square), got ",
                   crop.size(), " values");
    STOKER_ENFORCE(ch == 0 && cw == 0 && cd == 0, ValueError, name,
                   ": give either `crop` or `crop_d`/`crop_h`/`crop_w`, not both");
    const size_t k = crop.size() == 3 ? 1 : 0;
    if (k) cd = crop[0];
    ch = crop[k];
    cw = crop.size() == 1 ? crop[0] : crop[k + 1];
  }
  // DALI's CropAttr: an extent is its float32 value truncated toward zero (10.6 -> 10, and
  // 10.99999999 -> 11, which float32 rounds up first); one that truncates to 0 or less (also a
  // negative one) leaves its axis whole. An image has no depth to cut.
  const bool volume = in_d >= 0;
  const std::array<int64_t, 3> in{volume ? in_d : 1, in_h, in_w};
  const std::array<float, 3> t{volume ? std::trunc(float(cd)) : 0.f, std::trunc(float(ch)),
                               std::trunc(float(cw))};
  std::array<bool, 3> cut{};
  std::vector<float> padded;  // the window's extents, bounded before they become integers
  double volume_of_input = 1;
  for (int a = 0; a < 3; ++a) {
    cut[size_t(a)] = t[size_t(a)] >= 1;
    // Padded (out_of_bounds_policy="pad"), the window is the output's size: 1e30 would not fit
    // an integer; a whole axis counted as at least one element.
    if (a > 0 || volume)
      padded.push_back(cut[size_t(a)] ? t[size_t(a)] : std::max(float(in[size_t(a)]), 1.f));
    volume_of_input *= double(in[size_t(a)]);
  }
  check_arg_elements(name, volume ? "crop (crop_d, crop_h, crop_w)" : "crop (crop_h, crop_w)",
                     padded, i, volume_of_input);
  // The position as DALI reads it, a float32 (0.9 is 0.89999998), times the spare elements in
  // double: 0.9 of 5 is 4.4999999, which rounds to 4. Rounded half away from zero, or truncated
  // toward zero; a window larger than the input has a negative anchor (-11.5 becomes -12). Only
  // the positions of the axes cut are checked (DALI's).
  const char* pos_args[3] = {"crop_pos_z", "crop_pos_y", "crop_pos_x"};
  CropBox box;
  for (int a = 0; a < 3; ++a) {
    const size_t k = size_t(a);
    box.extent[k] = cut[k] ? int64_t(t[k]) : in[k];
    if (!cut[k]) continue;
    const float pos = float(op.scalar_arg(ws, pos_args[k], i));
    STOKER_ENFORCE(pos >= 0 && pos <= 1, ValueError, name, ": ", pos_args[k],
                   " must be in [0, 1], got ", pos, " (sample ", i, ")");
    const double anchor = double(pos) * double(in[k] - box.extent[k]);
    box.anchor[k] = int64_t(rounding == "truncate" ? std::trunc(anchor) : std::round(anchor));
  }
  return box;
}

CropWindow crop_window_arg(const Operator& op, const Workspace& ws, int i, int64_t in_h,
                           int64_t in_w) {
  const CropBox b = crop_box_arg(op, ws, i, -1, in_h, in_w);
  return {b.anchor[1], b.anchor[2], b.extent[1], b.extent[2]};
}

std::vector<ArgSchema> crop_arg_schemas() {
  return {
      {"crop", ArgType::kFloatList,
       "Window [height, width], or [depth, height, width] for volumes (one value: square); each "
       "truncated to whole elements, 0 or less: the whole axis. Images ignore the depth.",
       std::vector<double>{}, true},
      {"crop_d", ArgType::kFloat,
       "Window depth of volumes (with crop_h and crop_w; 0: the whole depth); images ignore it.",
       0.0, true},
      {"crop_h", ArgType::kFloat, "Window height (with crop_w; 0: the whole height).", 0.0, true},
      {"crop_w", ArgType::kFloat, "Window width (with crop_h; 0: the whole width).", 0.0, true},
      {"crop_pos_x", ArgType::kFloat,
       "Horizontal position in [0, 1]: x = pos * (W - crop_w), made whole by `rounding`.", 0.5,
       true},
      {"crop_pos_y", ArgType::kFloat,
       "Vertical position in [0, 1]: y = pos * (H - crop_h), made whole by `rounding`.", 0.5, true},
      {"crop_pos_z", ArgType::kFloat,
       "Depth position of volumes in [0, 1]: z = pos * (D - crop_d), made whole by `rounding`.",
       0.5, true},
      {"rounding", ArgType::kString,
       "How the window's position becomes whole elements: 'round' (half away from zero) or "
       "'truncate' (toward zero).",
       std::string("round")}};
}

void bound_box(CropBox& box, const std::array<int64_t, 3>& in_extent, const std::string& policy,
               const std::string& op) {
  for (size_t k = 0; k < 3; ++k) {
    const int64_t lo = box.anchor[k], hi = lo + box.extent[k], n = in_extent[k];
    if (policy == "error")
      STOKER_ENFORCE(lo >= 0 && hi <= n, ValueError, op, ": the window [", lo, ", ", hi,
                     ") on axis ", "DHW"[k], " leaves the input's extent ", n,
                     " (out_of_bounds_policy='error'; 'pad' or 'trim_to_shape' allow it)");
    if (policy == "trim_to_shape") {
      box.anchor[k] = std::clamp<int64_t>(lo, 0, n);
      box.extent[k] = std::clamp<int64_t>(hi, 0, n) - box.anchor[k];
    }
  }
}

void check_window_inside(const CropWindow& w, int64_t in_h, int64_t in_w, const std::string& op) {
  STOKER_ENFORCE(w.y >= 0 && w.x >= 0 && w.y + w.height <= in_h && w.x + w.width <= in_w,
                 ValueError, op, ": crop window ", w.height, "x", w.width, " at (y=", w.y,
                 ", x=", w.x, ") exceeds the ", in_h, "x", in_w,
                 " image (out_of_bounds_policy='error'; use 'pad' or 'trim_to_shape')");
}

}  // namespace stoker::ops
