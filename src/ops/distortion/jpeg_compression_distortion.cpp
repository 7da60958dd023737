#include "stoker/ops/distortion/jpeg_compression_distortion.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/codecs/jpeg/jpeg_decoder.hpp"
#include "stoker/codecs/jpeg/jpeg_encoder.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/kernels/color/jpeg_distortion_gpu.hpp"
#endif
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// DALI clamps the quality to 1..100 (its documentation's word).
int quality_of(const Operator& op, const Workspace& ws, int i) {
  return int(std::clamp<double>(std::round(op.scalar_arg(ws, "quality", i)), 1.0, 100.0));
}

// uint8 RGB images, HWC (FHWC sequences come as their frames), on either backend.
const Batch& checked_input(const Workspace& ws) {
  const Batch& in = ws.input(0);
  STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError,
                 "jpeg_compression_distortion: expects uint8 images, got ", dtype_name(in.dtype()));
  const std::string layout = in.layout().str();
  STOKER_ENFORCE(layout.empty() || layout == "HWC", ValueError,
                 "jpeg_compression_distortion: expects HWC images (FHWC sequences), got layout '",
                 layout, "'");
  for (int i = 0; i < in.size(); ++i) {
    const auto& s = in.shape(i);
    STOKER_ENFORCE(s.ndim() == 3 && s[2] == 3, ValueError, "jpeg_compression_distortion: sample ",
                   i, " has shape ", s.to_string(), "; expected RGB images (H, W, 3)");
  }
  return in;
}

// The CPU backend is DALI 2.4's exactly: libjpeg-turbo encodes as Pillow does (baseline 4:2:0,
// the IJG tables at `quality`) and decodes with the islow IDCT and fancy upsampling.
class JpegCompressionDistortion final : public Operator {
 public:
  explicit JpegCompressionDistortion(const OpSpec& spec) : Operator(spec) {}

  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    {
      std::lock_guard lock(mutex_);
      while (int(threads_.size()) < ws.pool->num_threads()) threads_.emplace_back();
    }
    Batch& out = add_output(ws, DType::kU8, in.shapes(), "HWC");
    for_each_sample(ws, in.size(), [&](int i, int thread) {
      const auto& s = in.shape(i);
      if (s[0] == 0 || s[1] == 0) return;
      const int quality = quality_of(*this, ws, i);
      auto& t = threads_[size_t(thread)];
      t.encoder.encode(in.data_as<const uint8_t>(i), s[0], s[1], 3, s[1] * 3, quality, t.encoded);
      codecs::JpegLimits limits;
      limits.max_pixels = s[0] * s[1];
      t.decoder.decode(t.encoded.data(), t.encoded.size(), codecs::ColorFormat::kRGB,
                       out.data_as<uint8_t>(i), s[1] * 3, limits);
    });
  }

 private:
  struct Thread {
    codecs::JpegEncoder encoder;
    codecs::JpegDecoder decoder;
    std::vector<uint8_t> encoded;
  };
  std::mutex mutex_;
  std::deque<Thread> threads_;  // one per pool thread (a deque: entries never move)
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend is DALI 2.4's: no entropy coding, each 16x16 block transformed, quantised
// and transformed back by one kernel (kernels/color/jpeg_distortion.hpp) — not the same pixels
// as the CPU backend's libjpeg-turbo round trip, as in DALI.
class JpegCompressionDistortionGpu final : public Operator {
 public:
  explicit JpegCompressionDistortionGpu(const OpSpec& spec) : Operator(spec) {}

  void run(Workspace& ws) override {
    const Batch& in = checked_input(ws);
    Batch& out = add_output(ws, DType::kU8, in.shapes(), "HWC");
    const int n = in.size();
    std::vector<kernels::JpegDistortionGpuSample> desc;
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      if (s[0] == 0 || s[1] == 0) continue;
      kernels::JpegDistortionGpuSample d;
      d.in = in.data_as<const uint8_t>(i), d.out = out.data_as<uint8_t>(i);
      d.h = s[0], d.w = s[1];
      d.tables = kernels::jpeg_distortion_tables(quality_of(*this, ws, i));
      desc.push_back(d);
      most = std::max(most, ((d.h + 15) / 16) * ((d.w + 15) / 16));
    }
    if (desc.empty()) return;
    auto device = upload(ws, desc);
    cuda_check(kernels::jpeg_distortion_gpu(
                   static_cast<const kernels::JpegDistortionGpuSample*>(device->data()),
                   int(desc.size()), most, ws.stream),
               "jpeg_compression_distortion (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema jpeg_compression_distortion_schema() {
  return {
      .name = "jpeg_compression_distortion",
      .doc =
          "Introduces JPEG compression artefacts: each RGB image (HWC uint8; FHWC sequences "
          "frame by frame) is encoded as a baseline JPEG with 4:2:0 chroma subsampling and "
          "the IJG quantisation tables scaled to `quality`, as Pillow and libjpeg's cjpeg "
          "encode, and decoded again (islow IDCT, fancy upsampling): the same pixels as DALI's "
          "CPU backend. The gpu backend is DALI's GPU algorithm, without entropy coding: each "
          "16x16 block (4:2:0, chroma from the 2x2 pixel means) through the DCT, quantised with "
          "the standard tables scaled to `quality` as DALI's GPU scales them, and back, chroma "
          "repeated over its 2x2 pixels; its pixels differ from the CPU backend's by a few "
          "levels, as DALI's backends differ.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"quality", ArgType::kInt,
                "JPEG compression quality from 1 (lowest) to 100 (highest); values outside are "
                "clamped.",
                int64_t{50}, true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<JpegCompressionDistortion>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<JpegCompressionDistortionGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
