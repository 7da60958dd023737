#include "stoker/ops/readers/experimental_video_reader.hpp"

#include <cmath>

#include "stoker/ops/readers/video_source.hpp"
#include "stoker/readers/file_index.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "experimental.readers.video";

bool has_labels(const OpSpec& spec) {
  return spec.has_arg("labels") || !spec.arg<std::string>("file_list").empty() ||
         !spec.arg<std::string>("file_root").empty();
}

VideoSourceOptions new_reader_options(const OpSpec& spec) {
  VideoSourceOptions o;
  o.op = kOp;
  o.labels = has_labels(spec);
  o.frame_numbers = parse_frame_numbers(kOp, spec.arg<std::string>("enable_frame_num"));
  o.timestamps = spec.arg<bool>("enable_timestamps");
  o.rgb = parse_video_image_type(kOp, spec.arg<std::string>("image_type"));
  o.length = spec.arg<int64_t>("sequence_length");
  o.fill.clear();
  for (int64_t v : spec.arg<std::vector<int64_t>>("fill_value")) {
    STOKER_ENFORCE(v >= 0 && v <= 255, ValueError, kOp, ": fill_value must be in [0, 255], got ",
                   v);
    o.fill.push_back(double(v));
  }
  STOKER_ENFORCE(!o.fill.empty(), ValueError, kOp, ": fill_value needs at least one value");
  return o;
}

// DALI 2.4's experimental.readers.video dataset (VideoLoaderDecoder): per file a range (the
// file list's), cut into clips of sequence_length frames `stride` apart starting every `step`
// frames while stride x sequence_length frames fit, then (with padding) one more clip from
// where the next would start; or, uniform_sample, one clip spread evenly over the range.
// Frames outside the range follow pad_mode twice, as DALI's: against the range (what
// frame_num says), then against the file (what is decoded).
class NewVideoSource final : public VideoSource {
 public:
  explicit NewVideoSource(const OpSpec& spec)
      : VideoSource(spec, new_reader_options(spec)),
        pad_(readers::parse_frame_padding(spec.arg<std::string>("pad_mode"))),
        stride_(spec.arg<int64_t>("stride")),
        step_(spec.arg<int64_t>("step")),
        uniform_(spec.arg<bool>("uniform_sample")) {
    STOKER_ENFORCE(stride_ >= 1 && stride_ <= INT32_MAX, ValueError, kOp,
                   ": stride must be in [1, 2147483647], got ", stride_);
    STOKER_ENFORCE(step_ <= INT32_MAX, ValueError, kOp, ": step must be at most 2147483647, got ",
                   step_);
    if (step_ <= 0) step_ = stride_ * options().length;  // DALI's default: clips do not overlap
    STOKER_ENFORCE(pad_ != readers::FramePadding::kConstant || options().fill.size() == 1 ||
                       options().fill.size() == 3,
                   ValueError, kOp, ": fill_value takes 1 value or 3 (one per channel), got ",
                   options().fill.size());
    if (!spec.arg<std::string>("file_list").empty())
      list_ = readers::parse_list_range_options(spec.arg<std::string>("file_list_format"),
                                                spec.arg<std::string>("file_list_rounding"),
                                                spec.arg<bool>("file_list_include_end"));
  }

 private:
  std::vector<readers::VideoEntry> entries() const override {
    const auto& spec = this->spec();
    const auto names = spec.arg<std::vector<std::string>>("filenames");
    const auto list = spec.arg<std::string>("file_list");
    const auto root = spec.arg<std::string>("file_root");
    STOKER_ENFORCE(int(!names.empty()) + int(!list.empty()) + int(!root.empty()) == 1, ValueError,
                   kOp, ": give exactly one of `filenames`, `file_root` and `file_list`");
    STOKER_ENFORCE(!spec.has_arg("labels") || !names.empty(), ValueError, kOp,
                   ": `labels` go with `filenames` (file_root and file_list give their own)");
    if (!list.empty()) return readers::parse_video_file_list(list);
    std::vector<readers::VideoEntry> entries;
    if (!root.empty()) {
      for (auto& f : readers::index_class_folders(root, {"*"}))
        entries.push_back({f.path, f.label});
      return entries;
    }
    const auto labels = spec.has_arg("labels") ? spec.arg<std::vector<int64_t>>("labels")
                                               : std::vector<int64_t>(names.size(), 0);
    STOKER_ENFORCE(labels.size() == names.size(), ValueError, kOp, ": got ", labels.size(),
                   " labels for ", names.size(), " files (one per file)");
    for (size_t i = 0; i < names.size(); ++i) entries.push_back({names[i], int32_t(labels[i])});
    return entries;
  }

  std::pair<int64_t, int64_t> frame_range(const readers::VideoEntry& e,
                                          const codecs::VideoIndex& index) const override {
    const auto& info = index.info;
    return readers::video_list_range(e, index.pts, info.time_base_num, info.time_base_den, list_);
  }

  void cut(int32_t file, std::vector<VideoClip>& out) const override {
    const auto& f = files()[size_t(file)];
    if (uniform_) {
      out.push_back({file, 0, f.first});
      return;
    }
    const int64_t span = stride_ * options().length;
    int64_t start = f.first;
    for (; start + span <= f.end; start += step_) out.push_back({file, 0, start});
    if (pad_ != readers::FramePadding::kNone && start < f.end) out.push_back({file, 0, start});
  }

  void frames(const VideoClip& clip, std::vector<ClipFrame>& out) const override {
    const auto& f = files()[size_t(clip.file)];
    const int64_t length = options().length, count = f.index->info.frames;
    out.clear();
    for (int64_t i = 0; i < length; ++i) {
      int64_t number = 0;
      if (uniform_) {
        // DALI's: linspace(first, end - 1, length) rounded half away from zero.
        const double t = length > 1 ? double(i) / double(length - 1) : 0.0;
        number = f.first + int64_t(std::round(t * double(f.end - f.first - 1)));
      } else {
        number = bound(clip.start + i * stride_, f.first, f.end, clip);
      }
      const int64_t decode = number < 0 && pad_ == readers::FramePadding::kConstant
                                 ? -1
                                 : bound(number, 0, count, clip);
      out.push_back({decode, number});
    }
  }

  int64_t bound(int64_t frame, int64_t lo, int64_t end, const VideoClip& clip) const {
    try {
      return readers::bound_frame(frame, lo, end, pad_);
    } catch (const ValueError& e) {
      throw ValueError(detail::concat(kOp, ": '", files()[size_t(clip.file)].path, "': ", e.what(),
                                      " (its file_list range ends past its frames: "
                                      "file_list_include_end=False)"));
    }
  }

  std::string no_clips_error(int64_t readable) const override {
    return detail::concat(kOp, ": no sequence of ", options().length, " frames (stride ", stride_,
                          ") fits in the ", readable,
                          " files given (or their file_list ranges are empty); shorten "
                          "sequence_length or stride, or set pad_mode");
  }

  readers::FramePadding pad_;
  int64_t stride_, step_;
  bool uniform_;
  readers::ListRangeOptions list_;
};

std::vector<std::string> output_names(const OpSpec& spec) {
  return video_output_names(has_labels(spec),
                            parse_frame_numbers(kOp, spec.arg<std::string>("enable_frame_num")),
                            spec.arg<bool>("enable_timestamps"));
}

// The reader's arguments (add_video_loader_args adds the loader's).
std::vector<ArgSchema> reader_args() {
  auto args = video_file_args(
      "Labels of `filenames`, one per file; left out, no labels output.",
      "A text file of '<path> <label> [<start> [<end>]]' lines (paths as given: relative to the "
      "current folder, as in DALI).");
  args.insert(args.end(),
              {{"file_list_format", ArgType::kString,
                "'timestamps' (start and end in seconds, found among the frames' timestamps; a "
                "time past the last frame's reads as frame 0, as in DALI) or 'frames' (frame "
                "numbers, negative ones from the end).",
                std::string("timestamps")},
               {"file_list_rounding", ArgType::kString,
                "Between frames: 'start_down_end_up', 'start_up_end_down', 'all_up' or "
                "'all_down'.",
                std::string("start_down_end_up")},
               {"file_list_include_end", ArgType::kBool,
                "Clamp the end to the file's frames (DALI's meaning; the end frame stays "
                "excluded). False: an end past the file reads padding, or fails with pad_mode "
                "'none'.",
                true},
               {"sequence_length", ArgType::kInt, "Frames per clip.", std::nullopt},
               {"step", ArgType::kInt,
                "Frames between the starts of consecutive clips; <= 0: stride x "
                "sequence_length.",
                int64_t{-1}},
               {"stride", ArgType::kInt, "Frames between the frames of a clip.", int64_t{1}},
               {"uniform_sample", ArgType::kBool,
                "One clip per file: frames round(linspace(start, end - 1, sequence_length)) "
                "(halves away from zero), repeated where the file is shorter; stride, step and "
                "pad_mode do not apply.",
                false},
               {"pad_mode", ArgType::kString,
                "Frames past the range: 'none' (no clip reaches them), 'constant' (fill_value), "
                "'edge'/'repeat' (the last frame), 'reflect_1001'/'symmetric' or "
                "'reflect_101'/'reflect' (mirrored at the end).",
                std::string("none")},
               {"fill_value", ArgType::kIntList,
                "The constant padding: one value, or one per channel, in [0, 255].",
                std::vector<int64_t>{0}}});
  for (auto& a : video_metadata_args()) args.push_back(a);
  args.push_back({"image_type", ArgType::kString, "RGB or YCbCr.", std::string("RGB")});
  return args;
}

}  // namespace

OpSchema experimental_video_reader_schema() {
  OpSchema schema{
      .name = kOp,
      .doc =
          "Reads clips of frames from video files (DALI 2.4's new video reader). FFmpeg "
          "demuxes them; device='cpu' decodes with FFmpeg's libavcodec (every codec it has: "
          "H.264 and HEVC too, which DALI's CPU backend lacks), device='gpu' with NVDEC into "
          "GPU memory, equal frame for frame. Each file (or its file_list range) is cut into "
          "clips of sequence_length frames `stride` apart, one every `step` frames while "
          "stride x sequence_length frames fit; with pad_mode other than 'none' one more clip "
          "starts where the next would, its frames past the range padded. uniform_sample takes "
          "one clip per file instead, spread evenly over it. Outputs: `video` (F x H x W x 3 "
          "uint8, FHWC, RGB or YCbCr converted as readers.video's), `labels` (int32 (1,); with "
          "labels, file_root or file_list), `frame_num` (int32: the first frame (1,), or every "
          "frame (F,), -1 for constant padding) and `timestamps` (float64 seconds from the "
          "stream's first frame, -1 for constant padding), where asked. Empty file_list ranges "
          "are skipped, as DALI skips them.",
      .outputs = {"video"},
      .output_names = output_names,
      .args = reader_args(),
      .make_cpu = [](const OpSpec& s) { return make_reader<NewVideoSource>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return make_reader<NewVideoSource>(s); },
#endif
  };
  add_video_loader_args(schema);
  return schema;
}

}  // namespace stoker::ops
