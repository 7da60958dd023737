#include "stoker/ops/color/debayer.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "stoker/kernels/color/debayer.hpp"
#include "stoker/kernels/color/debayer_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::DebayerAlgorithm;

class Debayer : public Operator {
 public:
  Debayer(const OpSpec& spec, bool gpu) : Operator(spec) {
    std::string name = spec.has_arg("algorithm") ? spec.arg<std::string>("algorithm") : "default";
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    // DALI's GPU default is NPP's interpolation, which stoker approximates with OpenCV's
    // bilinear one (docs/dali_differences.md); on the CPU DALI refuses default_npp.
    if (name == "default" || name == "bilinear_ocv" || (gpu && name == "default_npp")) {
      alg_ = DebayerAlgorithm::kBilinear;
    } else if (name == "gray_ocv") {
      alg_ = DebayerAlgorithm::kGray;
    } else if (name == "default_npp") {
      throw ValueError(
          "debayer: algorithm 'default_npp' is not supported on the CPU "
          "(default, bilinear_ocv, gray_ocv are)");
    } else if (name == "edgeaware_ocv" || name == "vng_ocv") {
      throw ValueError("debayer: algorithm '" + name +
                       "' is not implemented by stoker (default, bilinear_ocv, gray_ocv are)");
    } else {
      throw ValueError("debayer: unknown algorithm '" + name +
                       "' (default, bilinear_ocv, gray_ocv, default_npp on the GPU)");
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), shapes(in), "HWC");
    const std::vector<int> patterns = sample_patterns(ws, in.size());
    for_each_sample(ws, in.size(), [&](int i, int) {
      const kernels::DebayerShape s{in.shape(i)[0], in.shape(i)[1]};
      if (in.dtype() == DType::kU8)
        kernels::debayer_cpu(in.data_as<const uint8_t>(i), out.data_as<uint8_t>(i), s,
                             patterns[size_t(i)], alg_);
      else
        kernels::debayer_cpu(in.data_as<const uint16_t>(i), out.data_as<uint16_t>(i), s,
                             patterns[size_t(i)], alg_);
    });
  }

 protected:
  // Checks the batch (uint8 or uint16 HW images, or HWC of one channel, of even sides) and
  // gives the output shapes, H x W x 3 (or x 1 for gray).
  std::vector<TensorShape> shapes(const Batch& in) const {
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kU16, TypeError,
                   "debayer: expects uint8 or uint16 samples, got ", dtype_name(in.dtype()));
    const std::string layout = in.layout().str();
    STOKER_ENFORCE(layout.empty() || layout == "HW" || layout == "HWC", ValueError,
                   "debayer: expects layout HW or HWC (FHW or FHWC for sequences), got '", layout,
                   "'");
    std::vector<TensorShape> out;
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 2 || (s.ndim() == 3 && s[2] == 1), ValueError, "debayer: sample ",
                     i, " has shape ", s.to_string(),
                     "; expected a single-channel sensor image (HW, or HWC with 1 channel)");
      STOKER_ENFORCE(s[0] % 2 == 0 && s[1] % 2 == 0, ValueError, "debayer: sample ", i,
                     " has shape ", s.to_string(), "; its height and width must be even");
      out.push_back(TensorShape{s[0], s[1], alg_ == DebayerAlgorithm::kGray ? 1 : 3});
    }
    return out;
  }

  // Every sample's pattern from blue_position: [y, x], each 0 or 1 (one value: both).
  std::vector<int> sample_patterns(const Workspace& ws, int n) const {
    std::vector<int> out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      std::vector<double> p = list_arg(ws, "blue_position", i);
      if (p.size() == 1) p.push_back(p[0]);
      STOKER_ENFORCE(p.size() == 2, ValueError, "debayer: blue_position of sample ", i, " has ",
                     p.size(), " values; expected 2 (a position in the 2x2 tile)");
      for (double v : p)
        STOKER_ENFORCE(v == 0 || v == 1, ValueError, "debayer: blue_position of sample ", i,
                       " is [", p[0], ", ", p[1], "]; each coordinate must be 0 or 1");
      out[size_t(i)] = int(2 * p[0] + p[1]);
    }
    return out;
  }

  DebayerAlgorithm alg_ = DebayerAlgorithm::kBilinear;
};

#ifdef STOKER_HAVE_CUDA
class DebayerGpu final : public Debayer {
 public:
  explicit DebayerGpu(const OpSpec& spec) : Debayer(spec, true) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), shapes(in), "HWC");
    const int n = in.size();
    if (n == 0) return;
    STOKER_ENFORCE(n <= 65535, ValueError, "debayer (gpu): batches of at most 65535 samples");
    const std::vector<int> patterns = sample_patterns(ws, n);
    std::vector<kernels::DebayerGpuSample> desc(static_cast<size_t>(n));
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i);
      d.shape = {in.shape(i)[0], in.shape(i)[1]};
      d.pattern = patterns[size_t(i)];
      most = std::max(most, d.shape.height * d.shape.width);
    }
    if (most == 0) return;
    auto device = upload(ws, desc);
    cuda_check(kernels::debayer_gpu(static_cast<const kernels::DebayerGpuSample*>(device->data()),
                                    n, most, in.dtype(), alg_, ws.stream),
               "debayer (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema debayer_schema() {
  ArgSchema blue{"blue_position", ArgType::kIntList,
                 "[y, x] of the blue pixel in the 2x2 tile that starts at the sensor's second row "
                 "and column (OpenCV's convention): [0, 0] BG(GR), [0, 1] GB(RG), [1, 0] GR(BG), "
                 "[1, 1] RG(GB); one value stands for both. Per sample or per frame.",
                 std::nullopt};
  blue.per_sample = true;
  ArgSchema alg = optional_arg(
      "algorithm", ArgType::kString,
      "default (bilinear_ocv), bilinear_ocv (each missing colour the rounded mean of its "
      "neighbours in the 3x3 window, as OpenCV), gray_ocv (the luma of those means: one "
      "channel); default_npp on the GPU: bilinear_ocv (DALI's NPP interpolation differs). "
      "edgeaware_ocv and vng_ocv are not implemented. Case-insensitive.",
      false);
  return {
      .name = "debayer",
      .doc =
          "Demosaics single-channel Bayer-pattern sensor images (uint8 or uint16; HW, HWC of "
          "one channel, FHW or FHWC sequences; even height and width) into HWC RGB images of "
          "the same type, as DALI's CPU operator (OpenCV's demosaicing): inner pixels from "
          "their 3x3 neighbourhood, the border rows and columns copied from their inner "
          "neighbours; images 2 pixels high or wide come out black.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {std::move(blue), std::move(alg)},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Debayer>(s, false); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<DebayerGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"blue_position", std::vector<int64_t>{0, 0}}},
                           .dtype = "uint8",
                           .layout = "HW"},
      .deprecated_names = {"experimental.debayer"},
  };
}

}  // namespace stoker::ops
