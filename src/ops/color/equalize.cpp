#include "stoker/ops/color/equalize.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/kernels/color/equalize.hpp"
#include "stoker/kernels/color/equalize_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Equalize : public Operator {
 public:
  explicit Equalize(const OpSpec& spec) : Operator(spec) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string layout = checked_layout(in);
    Batch& out = add_output(ws, DType::kU8, in.shapes(), layout);
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::equalize_cpu(in.data_as<const uint8_t>(i), out.data_as<uint8_t>(i),
                            shape_of(in.shape(i), layout));
    });
  }

 protected:
  // The layout of the batch, checked (DALI's HW, HWC, CHW; sequences arrive frame by frame);
  // samples without one are HW or HWC by their rank, as DALI names its output then.
  static std::string checked_layout(const Batch& in) {
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, "equalize: expects uint8 samples, got ",
                   dtype_name(in.dtype()));
    std::string layout = in.layout().str();
    if (layout.empty() && in.size() > 0) {
      const int ndim = in.shape(0).ndim();
      STOKER_ENFORCE(ndim == 2 || ndim == 3, ValueError, "equalize: sample 0 has shape ",
                     in.shape(0).to_string(),
                     " and no layout; expected HW or HWC images (or give a layout)");
      layout = ndim == 2 ? "HW" : "HWC";
    }
    STOKER_ENFORCE(layout.empty() || layout == "HW" || layout == "HWC" || layout == "CHW",
                   ValueError,
                   "equalize: expects layout HW, HWC or CHW (FHW, FHWC or FCHW for sequences), "
                   "got '",
                   in.layout().str(), "'");
    for (int i = 0; i < in.size(); ++i)
      STOKER_ENFORCE(in.shape(i).ndim() == int(layout.size()), ValueError, "equalize: sample ", i,
                     " has shape ", in.shape(i).to_string(), ", which layout '", layout,
                     "' does not describe");
    return layout;
  }

  static kernels::EqualizeShape shape_of(const TensorShape& s, const std::string& layout) {
    kernels::EqualizeShape e;
    if (layout == "CHW") {
      e.planes = s[0], e.pixels = s[1] * s[2];
    } else {
      e.pixels = s[0] * s[1], e.channels = layout == "HWC" ? s[2] : 1;
    }
    return e;
  }
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: every sample's bins and tables in one device buffer, one descriptor array
// for the launches.
class EqualizeGpu final : public Equalize {
 public:
  using Equalize::Equalize;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string layout = checked_layout(in);
    Batch& out = add_output(ws, DType::kU8, in.shapes(), layout);
    const int n = in.size();
    if (n == 0) return;
    std::vector<kernels::EqualizeGpuSample> desc(static_cast<size_t>(n));
    int64_t groups = 0, max_values = 0, max_groups = 0, max_planes = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data_as<const uint8_t>(i), d.out = out.data_as<uint8_t>(i);
      d.shape = shape_of(in.shape(i), layout);
      const int64_t g = d.shape.planes * d.shape.channels;
      max_values = std::max(max_values, d.shape.pixels * d.shape.channels);
      max_groups = std::max(max_groups, g), max_planes = std::max(max_planes, d.shape.planes);
      groups += g;
    }
    const size_t hist_bytes = size_t(groups) * 256 * sizeof(uint32_t);
    auto work = ws.device_pool->acquire_on(std::max<size_t>(hist_bytes + size_t(groups) * 256, 1),
                                           ws.stream);
    auto* hist = static_cast<uint32_t*>(work->data());
    auto* lut = static_cast<uint8_t*>(work->data()) + hist_bytes;
    for (int i = 0, at = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.hist = hist + size_t(at) * 256, d.lut = lut + size_t(at) * 256;
      at += int(d.shape.planes * d.shape.channels);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::equalize_gpu(static_cast<const kernels::EqualizeGpuSample*>(device->data()),
                                     n, max_values, max_groups, max_planes, ws.stream),
               "equalize (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema equalize_schema() {
  return {
      .name = "equalize",
      .doc =
          "Histogram equalization of uint8 images (HW, HWC, CHW) and sequences (FHW, FHWC, "
          "FCHW), each channel (and frame) on its own, as DALI (OpenCV's equalizeHist): with h "
          "the channel's histogram, i its lowest value and N its pixels, value v becomes "
          "round(255 * (h[i+1] + ... + h[v]) / (N - h[i])) in float arithmetic, rounded half to "
          "even; a channel of one value is left as it is. Samples without a layout are HW or "
          "HWC by their rank.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Equalize>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<EqualizeGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{},
      .deprecated_names = {"experimental.equalize"},
  };
}

}  // namespace stoker::ops
