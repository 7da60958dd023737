// experimental.remap (CPU and GPU): every output pixel samples the input at the point its maps
// give (kernels/geometry/remap.hpp: NPP's rules, which DALI's GPU-only operator calls); one
// kernel per image on the CPU, one launch per batch on the GPU.
#include "stoker/ops/geometry/remap.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "stoker/kernels/geometry/remap_cpu.hpp"
#include "stoker/kernels/geometry/remap_gpu.hpp"
#include "stoker/ops/geometry/warp_args.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::RemapInterp;
using kernels::RemapSample;

constexpr const char* kName = "experimental.remap";

// DALI's names (types.INTERP_*, as strings) of the interpolations NPP's remap offers.
RemapInterp parse_interp(const std::string& s) {
  std::string n;
  for (char ch : s) n += char(std::tolower(static_cast<unsigned char>(ch)));
  if (n.rfind("interp_", 0) == 0) n = n.substr(7);
  return parse_choice<RemapInterp>(
      kName, "interp", s, n,
      {{"nn", RemapInterp::kNearest},
       {"linear", RemapInterp::kLinear},
       {"cubic", RemapInterp::kCubic}},
      "INTERP_NN, INTERP_LINEAR or INTERP_CUBIC (the interpolations of NPP's remap, which DALI "
      "calls)");
}

class Remap : public Operator {
 public:
  explicit Remap(const OpSpec& spec)
      : Operator(spec),
        interp_(parse_interp(spec.arg<std::string>("interp"))),
        // Added to the map values: DALI moves 'corner' maps by half a pixel to NPP's convention.
        shift_(parse_pixel_origin_center(kName, spec.arg<std::string>("pixel_origin")) ? 0.f
                                                                                       : -0.5f) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto desc = plan(ws);
    Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      RemapSample s = desc[size_t(i)];
      s.out = out.data(i);
      switch (in.dtype()) {
        case DType::kU8:
          kernels::remap_cpu<uint8_t>(s, interp_, shift_);
          break;
        case DType::kU16:
          kernels::remap_cpu<uint16_t>(s, interp_, shift_);
          break;
        case DType::kI16:
          kernels::remap_cpu<int16_t>(s, interp_, shift_);
          break;
        default:
          kernels::remap_cpu<float>(s, interp_, shift_);
          break;
      }
    });
  }

 protected:
  // Checks the image and both maps of every sample; the descriptors, output pointers unset.
  std::vector<RemapSample> plan(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    const DType t = in.dtype();
    STOKER_ENFORCE(t == DType::kU8 || t == DType::kU16 || t == DType::kI16 || t == DType::kF32,
                   TypeError, kName, ": expected uint8, uint16, int16 or float32 images, got ",
                   dtype_name(t));
    const std::string layout = in.layout().str();
    const int n = in.size();
    const Batch* maps[2] = {&ws.input(1), &ws.input(2)};
    const char* map_names[2] = {"mapx", "mapy"};
    for (int m = 0; m < 2; ++m) {
      STOKER_ENFORCE(maps[m]->dtype() == DType::kF32, TypeError, kName, ": ", map_names[m],
                     " must be float32, got ", dtype_name(maps[m]->dtype()));
      STOKER_ENFORCE(maps[m]->size() == n, ValueError, kName, ": ", map_names[m], " has ",
                     maps[m]->size(), " samples, the input ", n);
    }
    std::vector<RemapSample> desc(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 3 && (layout.empty() || layout == "HWC"), ValueError, kName,
                     ": sample ", i, ": expected an HWC image (sequences: FHWC), got shape ",
                     s.to_string(), " and layout '", layout, "'");
      STOKER_ENFORCE(s[2] == 1 || s[2] == 3, ValueError, kName, ": sample ", i, " has ", s[2],
                     " channels: 1 or 3 (as DALI's, which NPP's remap limits)");
      for (int m = 0; m < 2; ++m) {
        const auto& ms = maps[m]->shape(i);
        const bool hw = ms.ndim() == 2 || (ms.ndim() == 3 && ms[2] == 1);
        STOKER_ENFORCE(hw && ms[0] == s[0] && ms[1] == s[1], ValueError, kName, ": sample ", i,
                       ": ", map_names[m], " has shape ", ms.to_string(), "; the image is ", s[0],
                       "x", s[1], ", so the maps must be ", s[0], "x", s[1],
                       " (one source point per output pixel; HW or HWC with 1 channel)");
      }
      auto& d = desc[size_t(i)];
      d.in = in.data(i);
      d.mapx = static_cast<const float*>(maps[0]->data(i));
      d.mapy = static_cast<const float*>(maps[1]->data(i));
      d.h = s[0], d.w = s[1], d.c = s[2];
    }
    return desc;
  }

  RemapInterp interp_;
  float shift_;
};

#ifdef STOKER_HAVE_CUDA
class RemapGpu final : public Remap {
 public:
  using Remap::Remap;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    auto desc = plan(ws);
    Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
    if (n == 0) return;
    int64_t sum_h = 0, sum_w = 0;
    for (int i = 0; i < n; ++i) {
      desc[size_t(i)].out = out.data(i);
      sum_h += desc[size_t(i)].h, sum_w += desc[size_t(i)].w;
    }
    auto device = upload(ws, desc);
    cuda_check(
        kernels::remap_gpu(static_cast<const RemapSample*>(device->data()), n, (sum_h + n - 1) / n,
                           (sum_w + n - 1) / n, interp_, shift_, in.dtype(), ws.stream),
        std::string(kName) + " (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema remap_schema() {
  return OpSchema{
      .name = kName,
      .doc =
          "Remaps HWC images (1 or 3 channels; sequences of them) as DALI's (GPU-only there, "
          "NPP's remap): output pixel (x, y) is the input sampled at (mapx[y, x], mapy[y, x]). "
          "The maps are float32, one value per output pixel (HW, or HWC with 1 channel; per "
          "frame for sequences, or one pair for all frames), and the output has the input's "
          "shape. pixel_origin 'corner' (default) puts (0, 0) at the top-left pixel's corner, "
          "'center' at its centre (OpenCV's convention): DALI moves 'corner' maps by half a "
          "pixel. Points outside the image (x < 0, x >= width, y < 0, y >= height) give 0, the "
          "constant border DALI documents. Nearest takes the pixel at the rounded point (halves "
          "up); linear weighs the 2x2 pixels from the point's integer part; cubic is NPP's (and "
          "IPP's) cubic: the polynomial through 4x4 pixels. Taps past the last row or column "
          "take the edge pixel. uint8, uint16 and int16 results are rounded to nearest and "
          "saturated. uint8, uint16, int16 and float32.",
      .inputs = {"input", "mapx", "mapy"},
      .outputs = {"output"},
      .args = {{"interp", ArgType::kString, "INTERP_NN, INTERP_LINEAR or INTERP_CUBIC.",
                std::string("linear")},
               {"pixel_origin", ArgType::kString, "'corner' or 'center'.", std::string("corner")}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Remap>(sp); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) { return std::make_unique<RemapGpu>(sp); },
#endif
      .sequences = true,
      .example = OpExample{.input_dtypes = {{1, "float32"}, {2, "float32"}}},
  };
}

}  // namespace stoker::ops
