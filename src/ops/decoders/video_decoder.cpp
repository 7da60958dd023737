#include "stoker/ops/decoders/video_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "stoker/codecs/video/nvdec_video.hpp"
#include "stoker/codecs/video/video_file.hpp"
#include "stoker/kernels/color/yuv_to_rgb.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/decoders/video_frames.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/readers/video_index.hpp"

namespace stoker::ops {
namespace {

class VideoDecoder : public Operator {
 public:
  explicit VideoDecoder(const OpSpec& spec)
      : Operator(spec), pad_(readers::parse_frame_padding(spec.arg<std::string>("pad_mode"))) {
    const bool listed = spec.given("frames");
    STOKER_ENFORCE(!listed || (!spec.given("start_frame") && !spec.given("sequence_length") &&
                               !spec.given("stride") && !spec.given("end_frame")),
                   ValueError,
                   "decoders.video: `frames` cannot be given with start_frame, end_frame, "
                   "sequence_length or stride");
    STOKER_ENFORCE(!(spec.given("end_frame") && spec.given("sequence_length")), ValueError,
                   "decoders.video: give end_frame or sequence_length, not both");
    for (double v : spec.arg<std::vector<double>>("fill_value")) {
      STOKER_ENFORCE(v >= 0 && v <= 255, ValueError,
                     "decoders.video: fill_value must be in [0, 255], got ", v);
      fill_.push_back(uint8_t(v));
    }
    STOKER_ENFORCE(fill_.size() == 1 || fill_.size() == 3, ValueError,
                   "decoders.video: fill_value takes 1 or 3 values, got ", fill_.size());
  }

 protected:
  // Opens every sample's video and chooses its frames (host work for both backends).
  struct Sample {
    std::optional<codecs::VideoFile> video;
    std::vector<int64_t> frames;
  };
  std::vector<Sample> open(Workspace& ws) {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<Sample> samples{size_t(n)};
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError,
                   "decoders.video: expected encoded videos as uint8 bytes, got ",
                   dtype_name(in.dtype()));
    for_each_sample(ws, n, [&](int i, int) {
      STOKER_ENFORCE(in.shape(i).ndim() == 1, ValueError,
                     "decoders.video: expected 1-D encoded bytes, got ", in.shape(i).ndim(),
                     " dimensions");
      const auto* bytes = static_cast<const uint8_t*>(in.data(i));
      const std::string& source = in.source_info(i);
      auto& s = samples[size_t(i)];
      s.video.emplace(
          codecs::VideoFile::open({bytes, size_t(in.shape(i)[0])},
                                  source.empty() ? "sample " + std::to_string(i) : source));
      readers::FrameSelection sel;
      sel.pad = pad_;
      if (spec_.given("frames")) {
        sel.listed = true;
        for (double f : list_arg(ws, "frames", i)) sel.frames.push_back(int64_t(f));
      } else {
        if (spec_.given("start_frame")) sel.start = int64_t(scalar_arg(ws, "start_frame", i));
        if (spec_.given("end_frame")) sel.end = int64_t(scalar_arg(ws, "end_frame", i));
        if (spec_.given("sequence_length"))
          sel.length = int64_t(scalar_arg(ws, "sequence_length", i));
        if (spec_.given("stride")) sel.stride = int64_t(scalar_arg(ws, "stride", i));
      }
      // Padded, the selection sets the output's length: bounded before the frame list is made
      // (arg_limits.hpp).
      if (!sel.listed) {
        const double count = sel.length > 0        ? double(sel.length)
                             : sel.end > sel.start ? double(sel.end - sel.start) /
                                                         double(std::max<int64_t>(sel.stride, 1))
                                                   : 0.0;
        const auto& info = s.video->info();
        check_arg_elements("decoders.video", "sequence_length and end_frame",
                           std::vector<double>{count, double(info.height), double(info.width), 3},
                           i);
      }
      s.frames = readers::select_frames(sel, s.video->info().frames);
    });
    return samples;
  }
  // Samples open() did not reach (a failure skipped with on_error="skip", or the pipeline
  // closing) have no video: empty here, and for_each_sample passes them over later too.
  std::vector<TensorShape> shapes(const std::vector<Sample>& samples) const {
    std::vector<TensorShape> out;
    for (const auto& s : samples) {
      if (!s.video) {
        out.push_back({0, 0, 0, 3});
        continue;
      }
      out.push_back({int64_t(s.frames.size()), s.video->info().height, s.video->info().width, 3});
    }
    return out;
  }
  // Where each frame of the video first appears in the sample's output (-1: nowhere): it is
  // decoded there, and copied to its later places.
  static std::vector<int64_t> first_places(const Sample& s) {
    std::vector<int64_t> place(size_t(s.video->info().frames), -1);
    for (size_t k = 0; k < s.frames.size(); ++k)
      if (s.frames[k] >= 0 && place[size_t(s.frames[k])] < 0)
        place[size_t(s.frames[k])] = int64_t(k);
    return place;
  }
  // One padding frame of the constant (h x w x 3).
  std::vector<uint8_t> fill_frame(int64_t h, int64_t w) const {
    std::vector<uint8_t> f(size_t(h * w * 3));
    for (size_t k = 0; k < f.size(); ++k) f[k] = fill_[fill_.size() == 1 ? 0 : k % 3];
    return f;
  }

  readers::FramePadding pad_;
  std::vector<uint8_t> fill_;
};

class VideoDecoderCpu final : public VideoDecoder {
 public:
  using VideoDecoder::VideoDecoder;
  void run(Workspace& ws) override {
    auto samples = open(ws);
    Batch& out = add_output(ws, DType::kU8, shapes(samples), TensorLayout("FHWC"));
    for_each_sample(ws, int(samples.size()), [&](int i, int) {
      auto& s = samples[size_t(i)];
      const int64_t frame = s.video->info().height * s.video->info().width * 3;
      auto* dst = static_cast<uint8_t*>(out.data(i));
      // Each distinct frame decoded once, into its first place; repeats copied from there.
      const auto place = first_places(s);
      for (const FrameRun& r : frame_runs(s.frames)) {
        s.video->decode(r.first, r.count, r.stride, [&](int64_t k, const codecs::VideoPlanes& p) {
          const int64_t at = place[size_t(r.first + k * r.stride)];
          kernels::yuv_to_rgb_cpu(yuv_planes(p), true, false, dst + at * frame);
        });
      }
      const auto fill = fill_frame(s.video->info().height, s.video->info().width);
      for (size_t k = 0; k < s.frames.size(); ++k) {
        uint8_t* to = dst + int64_t(k) * frame;
        const int64_t f = s.frames[k];
        if (f < 0) {
          std::memcpy(to, fill.data(), fill.size());
        } else if (place[size_t(f)] != int64_t(k)) {
          std::memcpy(to, dst + place[size_t(f)] * frame, size_t(frame));
        }
      }
    });
  }
};

#ifdef STOKER_HAVE_CUDA
// NVDEC: each sample on a pool thread with its own decoder and stream, into the batch's device
// memory (allocated on the stage's stream, which is waited for first).
class VideoDecoderMixed final : public VideoDecoder {
 public:
  using VideoDecoder::VideoDecoder;
  void run(Workspace& ws) override {
    auto samples = open(ws);
    for (auto& s : samples) {
      if (!s.video) continue;
      const auto why = codecs::nvdec_unavailable(ws.device_id, s.video->info());
      STOKER_ENFORCE(why.empty(), RuntimeError, "decoders.video (mixed): '", s.video->name(),
                     "': ", why);
    }
    Batch& out = add_output(ws, DType::kU8, shapes(samples), TensorLayout("FHWC"));
    synchronize_stream(ws.stream);  // the memory's earlier users on the stage's stream
    for_each_sample(ws, int(samples.size()), [&](int i, int) {
      DeviceGuard device(ws.device_id);
      CudaStream stream(ws.device_id);
      auto& s = samples[size_t(i)];
      const int64_t frame = s.video->info().height * s.video->info().width * 3;
      auto* dst = static_cast<uint8_t*>(out.data(i));
      const auto place = first_places(s);
      codecs::NvdecVideo nvdec(std::move(*s.video), ws.device_id);
      for (const FrameRun& r : frame_runs(s.frames)) {
        nvdec.decode(r.first, r.count, r.stride, stream.get(),
                     [&](int64_t k, const codecs::VideoPlanes& p) {
                       const int64_t at = place[size_t(r.first + k * r.stride)];
                       cuda_check(kernels::yuv_to_rgb_gpu(yuv_planes(p), true, false, DType::kU8,
                                                          dst + at * frame, stream.get()),
                                  "decoders.video (mixed): converting a frame");
                     });
      }
      const auto fill = fill_frame(nvdec.file().info().height, nvdec.file().info().width);
      for (size_t k = 0; k < s.frames.size(); ++k) {
        uint8_t* to = dst + int64_t(k) * frame;
        const int64_t f = s.frames[k];
        if (f < 0) {
          copy_to_device_async(to, fill.data(), fill.size(), stream.get());
        } else if (place[size_t(f)] != int64_t(k)) {
          copy_device_async(to, dst + place[size_t(f)] * frame, size_t(frame), stream.get());
        }
      }
      stream.synchronize();  // `fill` goes with this call; the batch is complete on return
    });
  }
};
#endif

}  // namespace

OpSchema video_decoder_schema() {
  return {
      .name = "decoders.video",
      .doc =
          "Decodes videos given as bytes (a whole file per sample: webdataset, external_source) "
          "into F x H x W x 3 RGB uint8 sequences (layout FHWC; DALI's decoders.video). "
          "device='cpu' decodes with FFmpeg's libavcodec, 'mixed' with NVDEC into GPU memory "
          "(8-bit 4:2:0), equal frame for frame. Frames: every frame by default; `frames` (a "
          "list, any order, repeats allowed), or start_frame with end_frame or "
          "sequence_length, and stride. Frames past the end follow pad_mode. Each distinct "
          "frame is decoded once, in order, seeking only to the key frames needed.",
      .inputs = {"encoded"},
      .outputs = {"video"},
      .args =
          {
              optional_arg("frames", ArgType::kIntList,
                           "Frame numbers to output, in order (per sample allowed)."),
              optional_arg("start_frame", ArgType::kInt, "First frame (default 0)."),
              optional_arg("end_frame", ArgType::kInt,
                           "End of the range (exclusive; default: the video's end)."),
              optional_arg("sequence_length", ArgType::kInt,
                           "Frames to output (instead of end_frame)."),
              optional_arg("stride", ArgType::kInt, "Step between frames (default 1)."),
              {"pad_mode", ArgType::kString,
               "Frames past the end: 'none' (the sequence ends there; a listed frame there is "
               "an error), 'constant' (fill_value), 'edge'/'repeat' (the last frame), "
               "'reflect_1001'/'symmetric' or 'reflect_101'/'reflect' (frame numbers mirrored "
               "at the end).",
               std::string("constant")},
              {"fill_value", ArgType::kFloatList,
               "The constant padding: one value, or one per channel, in [0, 255].",
               std::vector<double>{0.0}},
              {"build_index", ArgType::kBool,
               "DALI's switch; stoker always indexes (frames are found by number).", true},
              {"affine", ArgType::kBool, "DALI's thread pinning; accepted, no effect.", true},
          },
      .make_cpu = [](const OpSpec& s) { return std::make_unique<VideoDecoderCpu>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_mixed = [](const OpSpec& s) { return std::make_unique<VideoDecoderMixed>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = ""},
      .deprecated_names = {"experimental.decoders.video"},
  };
}

}  // namespace stoker::ops
