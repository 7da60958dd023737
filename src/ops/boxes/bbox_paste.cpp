#include "stoker/ops/boxes/bbox_paste.hpp"

#include "stoker/kernels/boxes/bbox_paste.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class BboxPaste final : public Operator {
 public:
  explicit BboxPaste(const OpSpec& spec) : Operator(spec), ltrb_(spec.arg<bool>("ltrb")) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError,
                   "bbox_paste: the boxes must be float32, got ", dtype_name(in.dtype()));
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      STOKER_ENFORCE(in.shape(i).volume() % 4 == 0, ValueError, "bbox_paste: sample ", i, " is ",
                     in.shape(i).to_string(), ": boxes are 4 coordinates each, [boxes, 4]");
      const float ratio = float(scalar_arg(ws, "ratio", i));
      STOKER_ENFORCE(ratio >= 1.f, ValueError, "bbox_paste: sample ", i,
                     ": ratio (canvas / image) must be at least 1, got ", ratio);
      const auto p = kernels::bbox_paste_params(ratio, float(scalar_arg(ws, "paste_x", i)),
                                                float(scalar_arg(ws, "paste_y", i)), ltrb_);
      kernels::bbox_paste_cpu(static_cast<float*>(out.data(i)),
                              static_cast<const float*>(in.data(i)), in.shape(i).volume() / 4, p);
    });
  }

 private:
  bool ltrb_;
};

}  // namespace

OpSchema bbox_paste_schema() {
  return {
      .name = "bbox_paste",
      .doc =
          "Moves boxes with their image when `paste` puts it on a canvas `ratio` times larger "
          "at (paste_x, paste_y) (as DALI's bbox_paste): in normalised coordinates, corners "
          "become c / ratio + paste * (ratio - 1) / ratio and extents e / ratio, so that boxes "
          "in [0, 1] stay in [0, 1]. Boxes are [x, y, w, h], or [l, t, r, b] with `ltrb`.",
      .inputs = {"boxes"},
      .outputs = {"boxes"},
      .args = {{"ratio", ArgType::kFloat, "Canvas size over image size (>= 1).", std::nullopt, true},
               {"paste_x", ArgType::kFloat, "Horizontal place of the paste (0-1).", 0.5, true},
               {"paste_y", ArgType::kFloat, "Vertical place of the paste (0-1).", 0.5, true},
               {"ltrb", ArgType::kBool, "Boxes are [left, top, right, bottom].", false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<BboxPaste>(s); },
      .example = OpExample{.args = {{"ratio", 2.0}}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
