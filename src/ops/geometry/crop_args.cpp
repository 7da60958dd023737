#include "stoker/ops/geometry/crop_args.hpp"

#include <algorithm>
#include <cmath>

#include "stoker/ops/arg_limits.hpp"

namespace stoker::ops {

CropWindow crop_window_arg(const Operator& op, const Workspace& ws, int i, int64_t in_h,
                           int64_t in_w) {
  const std::string& name = op.spec().schema->name;
  const auto rounding = op.spec().arg<std::string>("rounding");
  STOKER_ENFORCE(rounding == "round" || rounding == "truncate", ValueError, name,
                 ": rounding must be 'round' or 'truncate', got '", rounding, "'");
  STOKER_ENFORCE(op.spec().given("crop_h") == op.spec().given("crop_w"), ValueError, name,
                 ": crop_w and crop_h must be given together");
  auto crop = op.list_arg(ws, "crop", i);
  double ch = op.scalar_arg(ws, "crop_h", i), cw = op.scalar_arg(ws, "crop_w", i);
  if (!crop.empty()) {
    STOKER_ENFORCE(crop.size() == 1 || crop.size() == 2, ValueError, name,
                   ": crop must be [height, width] (or one value for a square), got ", crop.size(),
                   " values");
    STOKER_ENFORCE(ch == 0 && cw == 0, ValueError, name,
                   ": give either `crop` or `crop_h`/`crop_w`, not both");
    ch = crop[0];
    cw = crop.size() == 2 ? crop[1] : crop[0];
  }
  // DALI's CropAttr: an extent is its float32 value truncated toward zero (10.6 -> 10, and
  // 10.99999999 -> 11, which float32 rounds up first); one that truncates to 0 or less (also a
  // negative one) leaves its axis whole.
  const float th = std::trunc(float(ch)), tw = std::trunc(float(cw));
  const bool cut_h = th >= 1, cut_w = tw >= 1;
  // Padded (out_of_bounds_policy="pad"), the window is the output's size: bounded before it
  // is made an integer (1e30 would not fit), a whole axis counted as at least one pixel.
  check_arg_elements(name, "crop (crop_h, crop_w)",
                     std::vector<float>{cut_h ? th : std::max(float(in_h), 1.f),
                                        cut_w ? tw : std::max(float(in_w), 1.f)},
                     i, double(in_h) * double(in_w));
  CropWindow win{0, 0, cut_h ? int64_t(th) : in_h, cut_w ? int64_t(tw) : in_w};
  // The position as DALI reads it, a float32 (0.9 is 0.89999998), times the spare pixels in
  // double: 0.9 of 5 is 4.4999999, which rounds to 4. Rounded half away from zero, or truncated
  // toward zero; a window larger than the image has a negative anchor (-11.5 becomes -12).
  const float py = float(op.scalar_arg(ws, "crop_pos_y", i));
  const float px = float(op.scalar_arg(ws, "crop_pos_x", i));
  STOKER_ENFORCE(py >= 0 && py <= 1 && px >= 0 && px <= 1, ValueError, name,
                 ": crop_pos_x/crop_pos_y must be in [0, 1], got ", px, ", ", py, " (sample ", i,
                 ")");
  const auto anchor = [&](float pos, int64_t spare) {
    const double a = double(pos) * double(spare);
    return int64_t(rounding == "truncate" ? std::trunc(a) : std::round(a));
  };
  win.y = cut_h ? anchor(py, in_h - win.height) : 0;
  win.x = cut_w ? anchor(px, in_w - win.width) : 0;
  return win;
}

std::vector<ArgSchema> crop_arg_schemas() {
  return {
      {"crop", ArgType::kFloatList,
       "Window [height, width] (one value: square); each truncated to whole pixels, 0 or "
       "less: the whole axis.",
       std::vector<double>{}, true},
      {"crop_h", ArgType::kFloat, "Window height (with crop_w; 0: the whole height).", 0.0, true},
      {"crop_w", ArgType::kFloat, "Window width (with crop_h; 0: the whole width).", 0.0, true},
      {"crop_pos_x", ArgType::kFloat,
       "Horizontal position in [0, 1]: x = pos * (W - crop_w), made whole by `rounding`.", 0.5,
       true},
      {"crop_pos_y", ArgType::kFloat,
       "Vertical position in [0, 1]: y = pos * (H - crop_h), made whole by `rounding`.", 0.5, true},
      {"rounding", ArgType::kString,
       "How the window's position becomes whole pixels: 'round' (half away from zero) or "
       "'truncate' (toward zero).",
       std::string("round")}};
}

void check_window_inside(const CropWindow& w, int64_t in_h, int64_t in_w, const std::string& op) {
  STOKER_ENFORCE(w.y >= 0 && w.x >= 0 && w.y + w.height <= in_h && w.x + w.width <= in_w,
                 ValueError, op, ": crop window ", w.height, "x", w.width, " at (y=", w.y,
                 ", x=", w.x, ") exceeds the ", in_h, "x", in_w,
                 " image (out_of_bounds_policy='error'; use 'pad' or 'trim')");
}

}  // namespace stoker::ops
