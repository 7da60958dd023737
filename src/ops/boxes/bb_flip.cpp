#include "stoker/ops/boxes/bb_flip.hpp"

#include <algorithm>
#include <vector>

#include "stoker/kernels/boxes/bb_flip.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class BbFlip : public Operator {
 public:
  explicit BbFlip(const OpSpec& spec) : Operator(spec), ltrb_(spec.arg<bool>("ltrb")) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    const auto params = plan(ws, in);
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::bb_flip_cpu(static_cast<float*>(out.data(i)),
                           static_cast<const float*>(in.data(i)), in.shape(i).volume() / 4,
                           params[size_t(i)]);
    });
  }

 protected:
  // Checks the input (float32, a multiple of 4 values a sample: [boxes, 4] or flat, as DALI
  // takes them) and reads each sample's flips.
  std::vector<kernels::BbFlip> plan(const Workspace& ws, const Batch& in) const {
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError,
                   "bb_flip: the boxes must be float32, got ", dtype_name(in.dtype()));
    std::vector<kernels::BbFlip> out(size_t(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).volume() % 4 == 0, ValueError, "bb_flip: sample ", i, " is ",
                     in.shape(i).to_string(), ": boxes are 4 coordinates each, [boxes, 4]");
      out[size_t(i)] = {.ltrb = ltrb_, .horizontal = scalar_arg(ws, "horizontal", i) != 0,
                        .vertical = scalar_arg(ws, "vertical", i) != 0};
    }
    return out;
  }

 private:
  bool ltrb_;
};

#ifdef STOKER_HAVE_CUDA
class BbFlipGpu final : public BbFlip {
 public:
  using BbFlip::BbFlip;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const auto params = plan(ws, in);
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    std::vector<kernels::BbFlipGpuSample> desc;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      const int64_t boxes = in.shape(i).volume() / 4;
      if (boxes == 0) continue;
      desc.push_back({static_cast<const float*>(in.data(i)), static_cast<float*>(out.data(i)),
                      boxes, params[size_t(i)]});
      most = std::max(most, boxes);
    }
    if (desc.empty()) return;
    auto device = upload(ws, desc);
    cuda_check(kernels::bb_flip_gpu(static_cast<const kernels::BbFlipGpuSample*>(device->data()),
                                    int(desc.size()), most, ws.stream),
               "bb_flip (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema bb_flip_schema() {
  return {
      .name = "bb_flip",
      .doc =
          "Mirrors bounding boxes given in normalised coordinates (0-1), as DALI: [x, y, w, h] "
          "boxes (or [l, t, r, b] with `ltrb`), float32, 4 values each ([boxes, 4]). A "
          "horizontal flip maps [l, r] to [1 - r, 1 - l], a vertical one [t, b] to [1 - b, "
          "1 - t]; [x, y, w, h] boxes are computed through [l, t, r, b], as DALI does (an "
          "unflipped width can move by a rounding). Use the flip decision given to `flip` for "
          "the image, so that boxes follow it.",
      .inputs = {"boxes"},
      .outputs = {"boxes"},
      .args = {{"ltrb", ArgType::kBool, "Boxes are [left, top, right, bottom].", false},
               {"horizontal", ArgType::kInt, "Flip horizontally when non-zero.", int64_t{1}, true},
               {"vertical", ArgType::kInt, "Flip vertically when non-zero.", int64_t{0}, true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<BbFlip>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<BbFlipGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
