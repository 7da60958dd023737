#include "stoker/ops/boxes/bbox_rotate.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stoker/kernels/boxes/bbox_rotate.hpp"
#include "stoker/ops/geometry/warp.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::BboxRotate;

std::vector<std::string> output_names(const OpSpec& spec) {
  if (spec.inputs.size() > 1) return {"boxes", "labels"};
  return {"boxes"};
}

class BboxRotateOp final : public Operator {
 public:
  explicit BboxRotateOp(const OpSpec& spec) : Operator(spec) {
    const auto layout = spec.arg<std::string>("bbox_layout");
    STOKER_ENFORCE(layout == "xyXY" || layout == "xyWH", ValueError,
                   "bbox_rotate: bbox_layout must be 'xyXY' or 'xyWH', got '", layout, "'");
    ltrb_ = layout == "xyXY";
    const auto mode = spec.arg<std::string>("mode");
    STOKER_ENFORCE(mode == "expand" || mode == "fixed" || mode == "halfway", ValueError,
                   "bbox_rotate: mode must be 'expand', 'fixed' or 'halfway', got '", mode, "'");
    mode_ = mode == "expand"  ? BboxRotate::Mode::kExpand
            : mode == "fixed" ? BboxRotate::Mode::kFixed
                              : BboxRotate::Mode::kHalfway;
    const auto shape_layout = spec.arg<std::string>("shape_layout");
    h_at_ = shape_layout.find('H'), w_at_ = shape_layout.find('W');
    STOKER_ENFORCE(h_at_ != std::string::npos && w_at_ != std::string::npos, ValueError,
                   "bbox_rotate: shape_layout must name H and W, got '", shape_layout, "'");
    STOKER_ENFORCE(!(spec.arg<bool>("keep_size") && spec.given("size")), ValueError,
                   "bbox_rotate: keep_size and size cannot be given together");
  }

  void run(Workspace& ws) override {
    const Batch& boxes = ws.input(0);
    STOKER_ENFORCE(boxes.dtype() == DType::kF32, TypeError,
                   "bbox_rotate: the boxes must be float32, got ", dtype_name(boxes.dtype()));
    const Batch* labels = ws.inputs.size() > 1 ? &ws.input(1) : nullptr;
    const int n = boxes.size();
    std::vector<std::vector<float>> rotated(static_cast<size_t>(n));
    std::vector<std::vector<int64_t>> kept(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = boxes.shape(i);
      STOKER_ENFORCE(s.volume() % 4 == 0, ValueError,
                     "bbox_rotate: the boxes must be [N, 4], "
                     "got ",
                     s.to_string());
      const int64_t count = s.volume() / 4;
      if (labels) {
        const auto& ls = labels->shape(i);
        STOKER_ENFORCE((ls.ndim() == 1 || (ls.ndim() == 2 && ls[1] == 1)) && ls[0] == count,
                       ValueError, "bbox_rotate: labels must be [N] or [N, 1] for the ", count,
                       " boxes, got ", ls.to_string());
      }
      const BboxRotate p = params(ws, i);
      rotated[size_t(i)].resize(size_t(4 * count));
      kept[size_t(i)] = kernels::bbox_rotate_cpu(
          rotated[size_t(i)].data(), static_cast<const float*>(boxes.data(i)), count, p);
    });
    std::vector<TensorShape> shapes;
    for (const auto& k : kept) shapes.push_back(TensorShape{int64_t(k.size()), 4});
    Batch& out = add_output(ws, DType::kF32, shapes, boxes.layout());
    for (int i = 0; i < n; ++i) {
      std::copy_n(rotated[size_t(i)].begin(), kept[size_t(i)].size() * 4,
                  static_cast<float*>(out.data(i)));
    }
    if (!labels) return;
    STOKER_ENFORCE(labels->dtype() == DType::kI32, TypeError,
                   "bbox_rotate: the labels must be int32, got ", dtype_name(labels->dtype()));
    std::vector<TensorShape> label_shapes;
    for (int i = 0; i < n; ++i) {
      const int64_t k = int64_t(kept[size_t(i)].size());
      label_shapes.push_back(labels->shape(i).ndim() == 2 ? TensorShape{k, 1} : TensorShape{k});
    }
    Batch& out_labels = add_output(ws, DType::kI32, label_shapes, labels->layout());
    for (int i = 0; i < n; ++i) {
      const auto* src = static_cast<const int32_t*>(labels->data(i));
      auto* dst = static_cast<int32_t*>(out_labels.data(i));
      for (size_t k = 0; k < kept[size_t(i)].size(); ++k) dst[k] = src[kept[size_t(i)][k]];
    }
  }

 private:
  BboxRotate params(const Workspace& ws, int i) const {
    BboxRotate p;
    p.ltrb = ltrb_, p.mode = mode_, p.normalized = spec_.arg<bool>("bbox_normalized");
    p.remove_threshold = float(spec_.arg<double>("remove_threshold"));
    const float angle = float(scalar_arg(ws, "angle", i)) * float(M_PI / 180);
    p.cos_a = std::cos(angle), p.sin_a = std::sin(angle);
    const auto shape = list_arg(ws, "input_shape", i);
    STOKER_ENFORCE(shape.size() > std::max(h_at_, w_at_), ValueError, "bbox_rotate: input_shape ",
                   "has ", shape.size(), " values, fewer than shape_layout '",
                   spec_.arg<std::string>("shape_layout"), "' needs");
    const double h = shape[h_at_], w = shape[w_at_];
    STOKER_ENFORCE(h > 0 && w > 0, ValueError, "bbox_rotate: the image must not be empty, got ", h,
                   " x ", w);
    p.in_w = float(w), p.in_h = float(h);
    if (spec_.arg<bool>("keep_size")) {
      p.out_w = p.in_w, p.out_h = p.in_h;
    } else if (spec_.given("size")) {
      const auto size = list_arg(ws, "size", i);
      STOKER_ENFORCE(size.size() == 2 && size[0] > 0 && size[1] > 0, ValueError,
                     "bbox_rotate: size must be [height, width] of positive values");
      p.out_h = std::floor(float(size[0])), p.out_w = std::floor(float(size[1]));
    } else {
      int64_t oh = 0, ow = 0;  // rotate's own canvas for this angle
      rotated_canvas(scalar_arg(ws, "angle", i), int64_t(h), int64_t(w), oh, ow);
      p.out_h = float(oh), p.out_w = float(ow);
    }
    return p;
  }

  bool ltrb_ = true;
  BboxRotate::Mode mode_ = BboxRotate::Mode::kExpand;
  size_t h_at_ = 0, w_at_ = 1;
};

}  // namespace

OpSchema bbox_rotate_schema() {
  return {
      .name = "bbox_rotate",
      .doc =
          "Turns bounding boxes with their image (as DALI's bbox_rotate): give the same `angle`, "
          "`keep_size` and `size` as to `rotate`, and the image's `input_shape` before it turns. "
          "Each box's corners turn about the image's centre (counter-clockwise as displayed) "
          "onto rotate's canvas and are enclosed (mode 'expand'); 'fixed' keeps the box's own "
          "extents about the enclosure's centre, 'halfway' goes half that way. Boxes are clipped "
          "to the canvas and dropped, with their labels, when less than `remove_threshold` of "
          "their area remains. Boxes: float32 [N, 4], normalised or in pixels; labels: int32 [N] "
          "or [N, 1].",
      .inputs = {"boxes", "labels"},
      .optional_inputs = 1,
      .outputs = {"boxes", "labels"},
      .output_names = output_names,
      .args =
          {
              {"angle", ArgType::kFloat, "Degrees, counter-clockwise (as rotate's).", std::nullopt,
               true},
              {"input_shape", ArgType::kIntList, "The image's shape, in shape_layout order.",
               std::nullopt, true},
              {"shape_layout", ArgType::kString, "The axes of input_shape (H and W are read).",
               std::string("HW")},
              {"bbox_layout", ArgType::kString, "'xyXY' or 'xyWH'.", std::string("xyXY")},
              {"bbox_normalized", ArgType::kBool, "Boxes are in [0, 1] (else pixels).", true},
              {"keep_size", ArgType::kBool, "rotate keeps the image's size.", false},
              optional_arg("size", ArgType::kFloatList, "rotate's output [height, width]."),
              {"mode", ArgType::kString, "'expand', 'fixed' or 'halfway'.", std::string("expand")},
              {"remove_threshold", ArgType::kFloat,
               "Drop a box keeping less than this fraction of its area.", 0.1},
          },
      .make_cpu = [](const OpSpec& s) { return std::make_unique<BboxRotateOp>(s); },
      .example = OpExample{.args = {{"angle", 30.0}, {"input_shape", std::vector<int64_t>{4, 4}}},
                           .dtype = "float32",
                           .layout = ""},
  };
}

}  // namespace stoker::ops
