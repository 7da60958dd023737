#include "stoker/ops/flow/optical_flow.hpp"

#include <algorithm>
#include <memory>
#include <numeric>

#include "stoker/kernels/flow/nvof_engine.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// Used by the CUDA build only (the operator without CUDA says it needs a GPU).
[[maybe_unused]] int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Arguments, checked where the spec is made (no GPU needed).
[[maybe_unused]] kernels::OpticalFlowParams flow_params(const OpSpec& spec, bool& bgr) {
  kernels::OpticalFlowParams p;
  const double preset = spec.arg<double>("preset");
  STOKER_ENFORCE(preset >= 0 && preset <= 1, ValueError,
                 "optical_flow: preset must be in [0, 1] (0 slow and best, 0.5 medium, 1 fast), "
                 "got ",
                 preset);
  p.preset = float(preset);
  p.output_grid = int(spec.arg<int64_t>("output_grid"));
  STOKER_ENFORCE(p.output_grid == 1 || p.output_grid == 2 || p.output_grid == 4, ValueError,
                 "optical_flow: output_grid must be 1, 2 or 4, got ", p.output_grid);
  p.hint_grid = int(spec.arg<int64_t>("hint_grid"));
  STOKER_ENFORCE(p.hint_grid == 1 || p.hint_grid == 2 || p.hint_grid == 4 || p.hint_grid == 8,
                 ValueError, "optical_flow: hint_grid must be 1, 2, 4 or 8, got ", p.hint_grid);
  p.temporal_hints = spec.arg<bool>("enable_temporal_hints");
  p.external_hints = spec.arg<bool>("enable_external_hints");
  STOKER_ENFORCE(!p.external_hints || p.hint_grid >= p.output_grid, ValueError,
                 "optical_flow: hint_grid (", p.hint_grid, ") must be at least output_grid (",
                 p.output_grid, "): the engine takes hints no finer than its output");
  const bool hints_given = spec.inputs.size() == 2;
  STOKER_ENFORCE(hints_given == p.external_hints, ValueError, "optical_flow: ",
                 p.external_hints ? "enable_external_hints needs the hints as a second input"
                                  : "a second input (hints) needs enable_external_hints=True");
  const auto type = spec.arg<std::string>("image_type");
  STOKER_ENFORCE(type == "RGB" || type == "BGR" || type == "GRAY", ValueError,
                 "optical_flow: image_type must be RGB, BGR or GRAY, got '", type, "'");
  p.gray = type == "GRAY";
  bgr = type == "BGR";
  return p;
}

#ifdef STOKER_HAVE_CUDA
class OpticalFlowGpu final : public Operator {
 public:
  explicit OpticalFlowGpu(const OpSpec& spec) : Operator(spec) {
    params_ = flow_params(spec, bgr_);
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const int64_t channels = params_.gray ? 1 : 3;
    const std::string layout = in.layout().str();
    STOKER_ENFORCE(layout.empty() || layout == "FHWC", ValueError,
                   "optical_flow: expected sequences in FHWC layout, got '", layout, "'");
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, "optical_flow: frames must be uint8, got ",
                   dtype_name(in.dtype()));
    const int g = params_.output_grid, hg = params_.hint_grid;
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 4 && s[3] == channels, ValueError, "optical_flow: sample ", i,
                     " has shape ", s.to_string(), "; expected frames x height x width x ",
                     channels, " (image_type ",
                     params_.gray ? "GRAY"
                     : bgr_       ? "BGR"
                                  : "RGB",
                     ")");
      STOKER_ENFORCE(s[0] >= 2, ValueError, "optical_flow: sample ", i, " has ", s[0],
                     " frame(s); optical flow needs at least 2");
      shapes.push_back(TensorShape{s[0] - 1, ceil_div(s[1], g), ceil_div(s[2], g), 2});
    }
    const Batch* hints = params_.external_hints ? &ws.input(1) : nullptr;
    if (hints) {
      STOKER_ENFORCE(hints->dtype() == DType::kF32 && hints->size() == n, ValueError,
                     "optical_flow: the hints must be float32, one per sample (got ",
                     dtype_name(hints->dtype()), ", ", hints->size(), " for ", n, ")");
      for (int i = 0; i < n; ++i) {
        const auto& s = in.shape(i);
        const auto& h = hints->shape(i);
        STOKER_ENFORCE(h.ndim() == 4 && (h[0] == s[0] - 1 || h[0] == s[0]) &&
                           h[1] == ceil_div(s[1], hg) && h[2] == ceil_div(s[2], hg) && h[3] == 2,
                       ValueError, "optical_flow: sample ", i, ": hints of shape ", h.to_string(),
                       " for frames of shape ", s.to_string(), "; expected (", s[0] - 1, " or ",
                       s[0], ", ", ceil_div(s[1], hg), ", ", ceil_div(s[2], hg), ", 2)");
      }
    }
    Batch& out = add_output(ws, DType::kF32, shapes, "FHWC");
    if (n == 0) return;
    if (!engine_) engine_ = std::make_unique<kernels::NvofEngine>(ws.device_id, params_);
    // Samples by frame size, so that the engine's session is reopened as rarely as possible.
    std::vector<int> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return std::pair(in.shape(a)[1], in.shape(a)[2]) < std::pair(in.shape(b)[1], in.shape(b)[2]);
    });
    for (int i : order) {
      const auto& s = in.shape(i);
      try {
        engine_->prepare(s[2], s[1]);
      } catch (const ValueError& e) {
        throw ValueError("sample " + std::to_string(i) + ": " + e.what());
      }
      const int64_t frame = s[1] * s[2] * s[3];
      const int64_t flow = shapes[size_t(i)].volume() / (s[0] - 1);
      const auto* frames = in.data_as<const uint8_t>(i);
      float* result = out.data_as<float>(i);
      // Frame f goes to slot f % 2: each pair packs only its new frame.
      engine_->pack(0, frames, int(channels), bgr_, ws.stream);
      for (int64_t f = 1; f < s[0]; ++f) {
        const int slot = int(f % 2);
        engine_->pack(slot, frames + f * frame, int(channels), bgr_, ws.stream);
        const float* hint = nullptr;
        if (hints) {
          const auto& h = hints->shape(i);
          const int64_t per = h[1] * h[2] * 2;
          hint = hints->data_as<const float>(i) + (h[0] == s[0] ? f : f - 1) * per;
        }
        engine_->run(slot, 1 - slot, result + (f - 1) * flow, hint, ws.stream);
      }
    }
  }

 private:
  kernels::OpticalFlowParams params_;
  bool bgr_ = false;
  std::unique_ptr<kernels::NvofEngine> engine_;  // made on first use, on the stage's device
};
#endif

}  // namespace

OpSchema optical_flow_schema() {
  return {
      .name = "optical_flow",
      .doc =
          "Optical flow between consecutive frames of sequences, computed by the GPU's "
          "optical-flow engine (NVOFA, as DALI's optical_flow). Input: FHWC uint8 "
          "sequences of at least 2 frames. Output, per sequence of F frames: F-1 flow "
          "fields (FHWC float32, (F-1, ceil(H/output_grid), ceil(W/output_grid), 2)); field "
          "k holds, for each output_grid block of frame k+1, where its content lies in frame "
          "k relative to the block, in pixels (x, y). With enable_external_hints, the second "
          "input holds hints in the same form on the hint_grid, one field per pair (F-1, or "
          "F with the first unused, as DALI lays them out). GPUs without the engine (or "
          "drivers without libnvidia-opticalflow) are refused with the reason.",
      .inputs = {"frames", "hints"},
      .optional_inputs = 1,
      .outputs = {"flow"},
      .args = {{"preset", ArgType::kFloat,
                "Speed against quality: 0 slow and best, 0.5 medium, 1 fast (below 0.375: "
                "slow; below 0.75: medium; else fast).",
                0.0},
               {"output_grid", ArgType::kInt,
                "Pixels per flow vector along each axis: 1, 2 or 4 (as the engine offers: "
                "Turing only 4).",
                int64_t{4}},
               {"hint_grid", ArgType::kInt,
                "Pixels per external hint vector along each axis: 1, 2, 4 or 8, at least "
                "output_grid.",
                int64_t{4}},
               {"enable_temporal_hints", ArgType::kBool,
                "Use each pair's flow as hints for the next pair of the sequence (better on "
                "continuous video, worse across cuts).",
                false},
               {"enable_external_hints", ArgType::kBool,
                "Take hints as the second input (see above).", false},
               {"image_type", ArgType::kString, "The frames' colours: RGB, BGR or GRAY.",
                std::string("RGB")}},
      .make_gpu = STOKER_GPU_FACTORY(OpticalFlowGpu),
      .example = OpExample{.layout = "FHWC"},
  };
}

}  // namespace stoker::ops
