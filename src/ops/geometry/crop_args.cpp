#include "stoker/ops/geometry/crop_args.hpp"

#include <cmath>

#include "stoker/ops/arg_limits.hpp"

namespace stoker::ops {

std::optional<CropWindow> crop_window_arg(const Operator& op, const Workspace& ws, int i,
                                          int64_t in_h, int64_t in_w) {
  auto crop = op.list_arg(ws, "crop", i);
  double ch = op.scalar_arg(ws, "crop_h", i), cw = op.scalar_arg(ws, "crop_w", i);
  if (!crop.empty()) {
    STOKER_ENFORCE(crop.size() == 1 || crop.size() == 2, ValueError,
                   "crop must be [height, width] (or one value for a square), got ", crop.size(),
                   " values");
    STOKER_ENFORCE(ch == 0 && cw == 0, ValueError,
                   "give either `crop` or `crop_h`/`crop_w`, not both");
    ch = crop[0];
    cw = crop.size() == 2 ? crop[1] : crop[0];
  }
  if (ch == 0 && cw == 0) return std::nullopt;
  STOKER_ENFORCE(ch > 0 && cw > 0, ValueError, "crop extents must be positive, got ", ch, "x", cw);
  // Padded (out_of_bounds_policy="pad"), the window is the output's size: bounded before it
  // is rounded to integers (1e30 would not fit).
  check_arg_elements(op.spec().schema->name, "crop (crop_h, crop_w)", std::vector<double>{ch, cw},
                     i, double(in_h) * double(in_w));
  CropWindow w;
  w.height = int64_t(std::floor(ch + 0.5));
  w.width = int64_t(std::floor(cw + 0.5));
  double py = op.scalar_arg(ws, "crop_pos_y", i), px = op.scalar_arg(ws, "crop_pos_x", i);
  STOKER_ENFORCE(py >= 0 && py <= 1 && px >= 0 && px <= 1, ValueError,
                 "crop_pos_x/crop_pos_y must be in [0, 1], got ", px, ", ", py);
  // Rounded half away from zero, as DALI rounds (a window larger than the image has a
  // negative anchor: -11.5 becomes -12).
  w.y = int64_t(std::round(py * double(in_h - w.height)));
  w.x = int64_t(std::round(px * double(in_w - w.width)));
  return w;
}

std::vector<ArgSchema> crop_arg_schemas() {
  return {{"crop", ArgType::kFloatList, "Window [height, width] (one value: square).",
           std::vector<double>{}, true},
          {"crop_h", ArgType::kFloat, "Window height (with crop_w).", 0.0, true},
          {"crop_w", ArgType::kFloat, "Window width (with crop_h).", 0.0, true},
          {"crop_pos_x", ArgType::kFloat,
           "Horizontal position in [0, 1]: x = round(pos * (W - crop_w)), halves away from 0.", 0.5,
           true},
          {"crop_pos_y", ArgType::kFloat,
           "Vertical position in [0, 1]: y = round(pos * (H - crop_h)), halves away from 0.", 0.5,
           true}};
}

void check_window_inside(const CropWindow& w, int64_t in_h, int64_t in_w, const std::string& op) {
  STOKER_ENFORCE(w.y >= 0 && w.x >= 0 && w.y + w.height <= in_h && w.x + w.width <= in_w,
                 ValueError, op, ": crop window ", w.height, "x", w.width, " at (y=", w.y,
                 ", x=", w.x, ") exceeds the ", in_h, "x", in_w,
                 " image (out_of_bounds_policy='error'; use 'pad' or 'trim')");
}

}  // namespace stoker::ops
