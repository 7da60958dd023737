#include "stoker/ops/color/clahe.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/kernels/color/clahe.hpp"
#include "stoker/kernels/color/clahe_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Clahe : public Operator {
 public:
  explicit Clahe(const OpSpec& spec) : Operator(spec) {
    tiles_x_ = spec.arg<int64_t>("tiles_x"), tiles_y_ = spec.arg<int64_t>("tiles_y");
    STOKER_ENFORCE(tiles_x_ >= 1 && tiles_y_ >= 1, ValueError,
                   "clahe: tiles_x and tiles_y must be positive, got ", tiles_x_, " and ",
                   tiles_y_);
    clip_limit_ = float(spec.arg<double>("clip_limit"));  // DALI reads it as float
    luma_only_ = spec.arg<bool>("luma_only");
    const int64_t bins = spec.arg<int64_t>("bins");
    STOKER_ENFORCE(bins >= 1 && bins <= 65536 && (bins & (bins - 1)) == 0, ValueError,
                   "clahe: bins must be a power of 2, got ", bins);
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<Sample> samples = checked(in);
    Batch& out = add_output(ws, DType::kU8, in.shapes(), in.layout());
    // Per-thread scratch (the tables, the L* plane), kept and grown to the largest need.
    const size_t threads = size_t(ws.pool ? ws.pool->num_threads() : 1);
    if (luts_.size() < threads) luts_.resize(threads), planes_.resize(threads);
    auto& luts = luts_;
    auto& planes = planes_;
    for_each_sample(ws, in.size(), [&](int i, int thread) {
      const Sample& s = samples[size_t(i)];
      auto& lut = luts[size_t(thread)];
      auto& plane = planes[size_t(thread)];
      lut.resize(std::max(lut.size(), size_t(tiles_x_ * tiles_y_ * 256)));
      if (s.luma) plane.resize(std::max(plane.size(), size_t(s.height * s.width)));
      kernels::clahe_cpu(in.data_as<const uint8_t>(i), out.data_as<uint8_t>(i), s.height, s.width,
                         s.channels, s.luma, geometry(s), lut.data(), plane.data());
    });
  }

 protected:
  struct Sample {
    int64_t height = 0, width = 0;
    int channels = 1;
    bool luma = false;
  };

  // Checks the batch: uint8 HW or HWC of 1 or 3 channels, at least one pixel per tile.
  std::vector<Sample> checked(const Batch& in) const {
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, "clahe: expects uint8 samples, got ",
                   dtype_name(in.dtype()));
    const std::string layout = in.layout().str();
    STOKER_ENFORCE(layout.empty() || layout == "HW" || layout == "HWC", ValueError,
                   "clahe: expects layout HWC (or HW), got '", layout, "'");
    std::vector<Sample> out;
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      const int c = s.ndim() == 3 ? int(s[2]) : 1;
      STOKER_ENFORCE((s.ndim() == 2 || s.ndim() == 3) && (c == 1 || c == 3), ValueError,
                     "clahe: sample ", i, " has shape ", s.to_string(),
                     "; expected an HWC image of 1 or 3 channels (or HW)");
      Sample x{s[0], s[1], c, luma_only_ && c == 3};
      // More tiles than pixels would make tables the image does not justify (OpenCV would
      // mirror the image into them): refused.
      STOKER_ENFORCE(x.height * x.width == 0 || (x.width >= tiles_x_ && x.height >= tiles_y_),
                     ValueError, "clahe: sample ", i, " has shape ", s.to_string(),
                     ", fewer pixels across than tiles_x (", tiles_x_, ") or down than tiles_y (",
                     tiles_y_, ")");
      out.push_back(x);
    }
    return out;
  }

  kernels::ClaheGeometry geometry(const Sample& s) const {
    if (s.height == 0 || s.width == 0) return {};
    return kernels::clahe_geometry(s.height, s.width, int(tiles_x_), int(tiles_y_), clip_limit_);
  }

  int64_t tiles_x_ = 8, tiles_y_ = 8;
  float clip_limit_ = 0;
  bool luma_only_ = true;
  std::vector<std::vector<uint8_t>> luts_, planes_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the tables and L* planes of the whole batch in one device buffer.
class ClaheGpu final : public Clahe {
 public:
  using Clahe::Clahe;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<Sample> samples = checked(in);
    Batch& out = add_output(ws, DType::kU8, in.shapes(), in.layout());
    const int n = in.size();
    if (n == 0) return;
    STOKER_ENFORCE(n <= 65535, ValueError, "clahe (gpu): batches of at most 65535 samples");
    const int64_t tiles = tiles_x_ * tiles_y_;
    size_t bytes = 0;
    int64_t most = 0;
    for (const Sample& s : samples) {
      if (s.height * s.width == 0) continue;
      bytes += size_t((s.luma ? 1 : s.channels) * tiles * 256);
      if (s.luma) bytes += size_t(s.height * s.width);
      most = std::max(most, s.height * s.width);
    }
    if (most == 0) return;
    auto work = ws.device_pool->acquire_on(bytes, ws.stream);
    auto* at = static_cast<uint8_t*>(work->data());
    // The Lab tables (6.6 KB), for luma samples.
    auto tables = upload_bytes(ws, &kernels::lab_tables(), sizeof(kernels::LabTables));
    const auto* lab = static_cast<const kernels::LabTables*>(tables->data());
    std::vector<kernels::ClaheGpuSample> desc(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Sample& s = samples[size_t(i)];
      auto& d = desc[size_t(i)];
      d.in = in.data_as<const uint8_t>(i), d.out = out.data_as<uint8_t>(i);
      d.height = s.height, d.width = s.width, d.channels = s.channels, d.luma = s.luma;
      d.geometry = geometry(s);
      d.lab = lab;
      if (s.height * s.width == 0) continue;
      d.luts = at, at += (s.luma ? 1 : s.channels) * tiles * 256;
      if (s.luma) d.plane = at, at += s.height * s.width;
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::clahe_gpu(static_cast<const kernels::ClaheGpuSample*>(device->data()), n,
                                  most, tiles, ws.stream),
               "clahe (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema clahe_schema() {
  return {
      .name = "clahe",
      .doc =
          "Contrast-limited adaptive histogram equalization of uint8 images (HWC of 1 or 3 "
          "channels, or HW), as DALI's CPU operator (OpenCV's CLAHE): the image is cut into "
          "tiles_x x tiles_y tiles, each tile's 256-bin histogram is clipped at clip_limit * "
          "area / 256 (at least 1), the excess spread over the bins, and every pixel blends "
          "the equalization tables of its four nearest tiles bilinearly. Grayscale images and "
          "RGB with luma_only=False: exactly as DALI; RGB with luma_only (the default): on "
          "CIE L* (OpenCV's 8-bit Lab in its fixed point, exact), converted back to RGB in "
          "float (a level from DALI's now and then). Every sample needs at least tiles_x pixels "
          "across and "
          "tiles_y down.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"tiles_x", ArgType::kInt, "Tiles across the image (positive).", std::nullopt},
               {"tiles_y", ArgType::kInt, "Tiles down the image (positive).", std::nullopt},
               {"clip_limit", ArgType::kFloat,
                "Relative clip limit: a tile's bins are clipped at clip_limit * area / 256 (at "
                "least 1); 0 or less: no clipping.",
                std::nullopt},
               {"luma_only", ArgType::kBool,
                "RGB images: equalize L* only (True) or every channel on its own (False).", true},
               {"bins", ArgType::kInt,
                "A power of 2, checked; the histograms have 256 bins whatever it is, as DALI's CPU "
                "operator (OpenCV) has.",
                int64_t{256}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Clahe>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<ClaheGpu>(s); },
#endif
      .example =
          OpExample{.args = {{"tiles_x", int64_t{1}}, {"tiles_y", int64_t{1}}, {"clip_limit", 2.0}},
                    .dtype = "uint8",
                    .layout = "HWC"},
  };
}

}  // namespace stoker::ops
