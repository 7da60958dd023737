#include "stoker/ops/boxes/box_encoder.hpp"

#include <algorithm>
#include <vector>

#include "stoker/kernels/boxes/box_encoder.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class BoxEncoder : public Operator {
 public:
  explicit BoxEncoder(const OpSpec& spec) : Operator(spec) {
    for (double v : spec.arg<std::vector<double>>("anchors")) anchors_.push_back(float(v));
    STOKER_ENFORCE(!anchors_.empty() && anchors_.size() % 4 == 0, ValueError,
                   "box_encoder: anchors must be [l, t, r, b] rows, a multiple of 4 values; got ",
                   anchors_.size());
    p_.criteria = float(spec.arg<double>("criteria"));
    STOKER_ENFORCE(p_.criteria >= 0.f && p_.criteria <= 1.f, ValueError,
                   "box_encoder: criteria must be in [0, 1], got ", p_.criteria);
    p_.offset = spec.arg<bool>("offset");
    p_.scale = float(spec.arg<double>("scale"));
    const auto means = spec.arg<std::vector<double>>("means");
    const auto stds = spec.arg<std::vector<double>>("stds");
    STOKER_ENFORCE(means.size() == 4 && stds.size() == 4, ValueError,
                   "box_encoder: means and stds need 4 values each ([x, y, w, h])");
    for (int k = 0; k < 4; ++k) {
      STOKER_ENFORCE(stds[size_t(k)] != 0.0, ValueError, "box_encoder: stds must not be 0");
      p_.means[k] = float(means[size_t(k)]), p_.stds[k] = float(stds[size_t(k)]);
    }
  }

  void run(Workspace& ws) override {
    const Batch& boxes = ws.input(0);
    const Batch& labels = ws.input(1);
    const int64_t a = int64_t(anchors_.size() / 4);
    // Plain variables, not a structured binding: the lambda captures them, which clang before
    // 16 refuses for bindings (the fuzz build uses clang 14).
    const auto outs = outputs(ws);
    Batch* out_boxes = outs.first;
    Batch* out_labels = outs.second;
    for_each_sample(ws, boxes.size(), [&](int i, int) {
      const int64_t n = boxes.shape(i)[0];
      std::vector<int64_t> best(static_cast<size_t>(n));
      kernels::box_encode_cpu(static_cast<const float*>(boxes.data(i)),
                              static_cast<const int32_t*>(labels.data(i)), n, anchors_.data(), a,
                              p_, static_cast<float*>(out_boxes->data(i)),
                              static_cast<int32_t*>(out_labels->data(i)), best.data());
    });
  }

 protected:
  // Checks the inputs and adds the outputs: per anchor a box ([A, 4]) and a label ([A]).
  std::pair<Batch*, Batch*> outputs(Workspace& ws) {
    check(ws);
    const int64_t a = int64_t(anchors_.size() / 4);
    const auto n = static_cast<size_t>(ws.input(0).size());
    Batch& boxes = add_output(ws, DType::kF32, std::vector<TensorShape>(n, TensorShape{a, 4}),
                              TensorLayout());
    Batch& labels = add_output(ws, DType::kI32, std::vector<TensorShape>(n, TensorShape{a}),
                               TensorLayout());
    return {&boxes, &labels};
  }

  void check(const Workspace& ws) const {
    const Batch& boxes = ws.input(0);
    const Batch& labels = ws.input(1);
    STOKER_ENFORCE(boxes.dtype() == DType::kF32, TypeError,
                   "box_encoder: the boxes must be float32, got ", dtype_name(boxes.dtype()));
    STOKER_ENFORCE(labels.dtype() == DType::kI32, TypeError,
                   "box_encoder: the labels must be int32, got ", dtype_name(labels.dtype()));
    for (int i = 0; i < boxes.size(); ++i) {
      const auto& s = boxes.shape(i);
      STOKER_ENFORCE(s.ndim() == 2 && s[1] == 4, ValueError, "box_encoder: sample ", i, " is ",
                     s.to_string(), "; boxes are [boxes, 4] as [l, t, r, b]");
      STOKER_ENFORCE(labels.shape(i).volume() == s[0], ValueError, "box_encoder: sample ", i,
                     " has ", s[0], " boxes and ", labels.shape(i).volume(), " labels");
    }
  }

  std::vector<float> anchors_;
  kernels::BoxEncoderParams p_;
};

#ifdef STOKER_HAVE_CUDA
class BoxEncoderGpu final : public BoxEncoder {
 public:
  using BoxEncoder::BoxEncoder;
  void run(Workspace& ws) override {
    const Batch& boxes = ws.input(0);
    const Batch& labels = ws.input(1);
    const int64_t a = int64_t(anchors_.size() / 4);
    auto [out_boxes, out_labels] = outputs(ws);
    if (boxes.size() == 0) return;
    int64_t total = 0, most = 0;
    for (int i = 0; i < boxes.size(); ++i) {
      total += boxes.shape(i)[0];
      most = std::max(most, boxes.shape(i)[0]);
    }
    auto scratch = ws.device_pool->acquire_on(size_t(std::max<int64_t>(total, 1)) * sizeof(int64_t),
                                              ws.stream);
    auto* best = static_cast<int64_t*>(scratch->data());
    std::vector<kernels::BoxEncoderGpuSample> desc;
    for (int i = 0; i < boxes.size(); ++i) {
      const int64_t n = boxes.shape(i)[0];
      desc.push_back({static_cast<const float*>(boxes.data(i)),
                      static_cast<const int32_t*>(labels.data(i)), n,
                      static_cast<float*>(out_boxes->data(i)),
                      static_cast<int32_t*>(out_labels->data(i)), best});
      best += n;
    }
    auto device_desc = upload(ws, desc);
    auto device_anchors = upload(ws, anchors_);
    cuda_check(kernels::box_encode_gpu(
                   static_cast<const kernels::BoxEncoderGpuSample*>(device_desc->data()),
                   int(desc.size()), most, static_cast<const float*>(device_anchors->data()), a,
                   p_, ws.stream),
               "box_encoder (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema box_encoder_schema() {
  return {
      .name = "box_encoder",
      .doc =
          "SSD's box encoding (as DALI's box_encoder): matches each sample's boxes ([boxes, 4] "
          "as [l, t, r, b], normalised) and labels to `anchors`. Each box claims its best anchor "
          "(highest IoU); each anchor takes its best box when the IoU exceeds `criteria` (a "
          "claim always does). Outputs per anchor: the matched box as [cx, cy, w, h] and its "
          "label, or the anchor itself and label 0; with `offset`, SSD's regression targets "
          "((box - anchor) centres / anchor sizes, log of size ratios, after `scale`, minus "
          "`means`, over `stds`) and zeros for unmatched anchors.",
      .inputs = {"boxes", "labels"},
      .outputs = {"boxes", "labels"},
      .args = {{"anchors", ArgType::kFloatList, "The anchors, [l, t, r, b] each, flattened."},
               {"criteria", ArgType::kFloat, "IoU an anchor needs to take a box.", 0.5},
               {"offset", ArgType::kBool, "Output regression targets.", false},
               {"scale", ArgType::kFloat, "Boxes and anchors are multiplied by this first.", 1.0},
               {"means", ArgType::kFloatList, "[x, y, w, h] means of the targets.",
                std::vector<double>{0.0, 0.0, 0.0, 0.0}},
               {"stds", ArgType::kFloatList, "[x, y, w, h] deviations of the targets.",
                std::vector<double>{1.0, 1.0, 1.0, 1.0}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<BoxEncoder>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<BoxEncoderGpu>(s); },
#endif
      .example = OpExample{.args = {{"anchors", std::vector<double>{0.0, 0.0, 0.5, 0.5}}},
                           .dtype = "float32",
                           .layout = "",
                           .input_dtypes = {{1, "int32"}}},
  };
}

}  // namespace stoker::ops
