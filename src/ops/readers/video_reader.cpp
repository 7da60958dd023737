#include "stoker/ops/readers/video_reader.hpp"

#include "stoker/ops/readers/video_source.hpp"
#include "stoker/readers/file_index.hpp"

namespace stoker::ops {
namespace {

// Which outputs exist, by DALI's rules (video_reader_op.h): labels with file_root, file_list or
// filenames + labels; frame numbers and timestamps only with file_list or filenames + labels.
VideoSourceOptions legacy_options(const OpSpec& spec) {
  const std::string op = spec.schema->name;
  const bool names = !spec.arg<std::vector<std::string>>("filenames").empty();
  const bool root = !spec.arg<std::string>("file_root").empty();
  const bool list = !spec.arg<std::string>("file_list").empty();
  STOKER_ENFORCE(int(names) + int(root) + int(list) == 1, ValueError, op,
                 ": give exactly one of `filenames`, `file_root` and `file_list`");
  const bool labels = spec.has_arg("labels");
  STOKER_ENFORCE(!labels || names, ValueError, op,
                 ": `labels` go with `filenames` (file_root and file_list give their own)");
  VideoSourceOptions o;
  o.op = op;
  o.labels = labels || root || list;
  o.frame_numbers = parse_frame_numbers(op, spec.arg<std::string>("enable_frame_num"));
  o.timestamps = spec.arg<bool>("enable_timestamps");
  const bool per_file = list || (names && labels);
  STOKER_ENFORCE(per_file || (o.frame_numbers == FrameNumbers::kNone && !o.timestamps), ValueError,
                 op,
                 ": frame numbers and timestamps need `file_list`, or `filenames` with `labels` "
                 "(as in DALI)");
  o.rgb = parse_video_image_type(op, spec.arg<std::string>("image_type"));
  o.dtype = dtype_from_name(spec.arg<std::string>("dtype"));
  STOKER_ENFORCE(o.dtype == DType::kU8 || o.dtype == DType::kF32, TypeError, op,
                 ": dtype must be uint8 or float32, got ", dtype_name(o.dtype));
  o.normalized = spec.arg<bool>("normalized");
  STOKER_ENFORCE(!o.normalized || o.dtype == DType::kF32, ValueError, op,
                 ": normalized needs dtype=float32 (uint8 cannot hold 0-1)");
  STOKER_ENFORCE(spec.arg<int64_t>("channels") == 3, ValueError, op, ": channels must be 3, got ",
                 spec.arg<int64_t>("channels"));
  o.length = spec.arg<int64_t>("sequence_length");
  return o;  // padded frames are zero (DALI's)
}

// readers.video's dataset (DALI's legacy loader): sequences of whole frame steps, padded ones
// zero-filled with frame numbers and timestamps -1.
class LegacyVideoSource final : public VideoSource {
 public:
  explicit LegacyVideoSource(const OpSpec& spec)
      : VideoSource(spec, legacy_options(spec)),
        cut_{options().length, spec.arg<int64_t>("step"), spec.arg<int64_t>("stride"),
             spec.arg<bool>("pad_sequences")},
        range_{spec.arg<bool>("file_list_frame_num"),
               spec.arg<bool>("file_list_include_preceding_frame")},
        skip_vfr_check_(spec.arg<bool>("skip_vfr_check")) {}

 private:
  std::vector<readers::VideoEntry> entries() const override {
    const auto& spec = this->spec();
    std::vector<readers::VideoEntry> entries;
    if (const auto list = spec.arg<std::string>("file_list"); !list.empty())
      return readers::parse_video_file_list(list);
    if (const auto root = spec.arg<std::string>("file_root"); !root.empty()) {
      for (auto& f : readers::index_class_folders(root, {"*"}))
        entries.push_back({f.path, f.label});
      return entries;
    }
    const auto names = spec.arg<std::vector<std::string>>("filenames");
    const auto labels =
        spec.has_arg("labels") ? spec.arg<std::vector<int64_t>>("labels") : std::vector<int64_t>{};
    STOKER_ENFORCE(labels.empty() || labels.size() == names.size(), ValueError, options().op,
                   ": got ", labels.size(), " labels for ", names.size(), " files");
    for (size_t i = 0; i < names.size(); ++i)
      entries.push_back({names[i], int32_t(labels.empty() ? int64_t(i) : labels[i])});
    return entries;
  }

  void check_file(const readers::VideoEntry& e, const codecs::VideoFile& video) const override {
    STOKER_ENFORCE(skip_vfr_check_ || !video.info().variable_frame_rate, ValueError, options().op,
                   ": '", e.path,
                   "' has a variable frame rate (its frames' durations differ); DALI refuses "
                   "such files: set skip_vfr_check=True to read its frames in display order");
  }

  std::pair<int64_t, int64_t> frame_range(const readers::VideoEntry& e,
                                          const codecs::VideoIndex& index) const override {
    const auto& info = index.info;
    const double fps = double(info.fps_num) / double(info.fps_den);
    return readers::video_frame_range(e, info.frames, fps, range_);
  }

  void cut(int32_t file, std::vector<VideoClip>& out) const override {
    const auto& f = files()[size_t(file)];
    std::vector<readers::VideoSequence> sequences;
    readers::cut_sequences(file, f.first, f.end, cut_, sequences);
    for (const auto& s : sequences) out.push_back({s.file, s.frames, s.first});
  }

  void frames(const VideoClip& clip, std::vector<ClipFrame>& out) const override {
    out.assign(size_t(options().length), ClipFrame{});  // -1: padding, zero frames (DALI's)
    for (int64_t k = 0; k < clip.count; ++k) {
      const int64_t f = clip.start + k * cut_.stride;
      out[size_t(k)] = {f, f};
    }
  }

  std::string no_clips_error(int64_t readable) const override {
    return detail::concat(options().op, ": no sequence of ", options().length, " frames (stride ",
                          cut_.stride, ") fits in the ", readable,
                          " files given; shorten sequence_length or stride, or set "
                          "pad_sequences");
  }

  readers::SequenceOptions cut_;
  readers::FrameRangeOptions range_;
  bool skip_vfr_check_;
};

}  // namespace

std::vector<std::string> video_reader_output_names(const OpSpec& spec) {
  const auto o = legacy_options(spec);
  return video_output_names(o.labels, o.frame_numbers, o.timestamps);
}

std::unique_ptr<ReaderSource> make_video_reader_source(const OpSpec& spec) {
  return std::make_unique<LegacyVideoSource>(spec);
}

std::vector<ArgSchema> video_reader_args() {
  auto args = video_file_args(
      "Labels of `filenames`, one per file; [] numbers the files 0, 1, ...; left out, no labels "
      "output.",
      "A text file of '<path> <label> [<start> [<end>]]' lines: start and end in seconds (or "
      "frame numbers, file_list_frame_num), negative ones from the end; paths as given "
      "(relative to the current folder, as in DALI).");
  args.insert(args.end(),
              {{"sequence_length", ArgType::kInt, "Frames per sequence.", std::nullopt},
               {"step", ArgType::kInt,
                "Frames between the starts of consecutive sequences; < 0: sequence_length x "
                "stride (DALI's loader: sequences do not overlap).",
                int64_t{-1}},
               {"stride", ArgType::kInt, "Frames between the frames of a sequence.", int64_t{1}},
               {"pad_sequences", ArgType::kBool,
                "Also cut sequences that run past the end of a file: their missing frames are "
                "zero, their frame numbers and timestamps -1.",
                false},
               {"skip_vfr_check", ArgType::kBool,
                "Read files with a variable frame rate too (DALI refuses them; stoker reads their "
                "frames in display order, and their timestamps are the real ones).",
                false}});
  for (auto& a : video_metadata_args()) args.push_back(a);
  args.insert(args.end(),
              {{"file_list_frame_num", ArgType::kBool,
                "file_list's start and end are frame numbers (fractions truncated, as DALI "
                "does), not seconds.",
                false},
               {"file_list_include_preceding_frame", ArgType::kBool,
                "file_list's times become frames floor(start x fps) and ceil(end x fps) instead "
                "of ceil and floor.",
                false},
               {"image_type", ArgType::kString, "RGB or YCbCr.", std::string("RGB")},
               {"dtype", ArgType::kDType,
                "uint8 (0-255, rounded and saturated) or float32 (not clamped: colours outside "
                "the RGB cube keep values below 0 or above 255, as in DALI).",
                std::string("uint8")},
               {"normalized", ArgType::kBool, "float32 outputs in 0-1 instead of 0-255.", false},
               {"channels", ArgType::kInt, "Channels of the output (3).", int64_t{3}},
               {"additional_decode_surfaces", ArgType::kInt,
                "DALI's NVDEC setting; accepted, no effect on the CPU decoder.", int64_t{2}}});
  return args;
}

OpSchema video_reader_schema() {
  OpSchema schema{
      .name = "readers.video",
      .doc =
          "Reads sequences of frames from video files (DALI's readers.video). FFmpeg demuxes "
          "them; device='cpu' decodes with FFmpeg's libavcodec, device='gpu' with the GPU's "
          "NVDEC engines (8-bit 4:2:0 H.264, HEVC, VP8, VP9, MPEG-4, AV1 where the GPU has "
          "it), into GPU memory; both on the reader's I/O threads (num_io_threads) and equal "
          "frame for frame. Every sequence of every file is a sample; an epoch "
          "reads each once. Output `video` is F x H x W x 3 (layout FHWC; files may differ in "
          "size), uint8 or float32, RGB or YCbCr: the frame's Y'CbCr planes converted with the "
          "stream's matrix (BT.601 unless it says BT.709) and range, chroma upsampled "
          "bilinearly (kernels/color/yuv_to_rgb.hpp; the same definition as the GPU "
          "decoder's). Frames are numbered in display order from 0. Then `labels` (int32, "
          "(1,)), `frame_num` (int32: the first frame, (1,), or every frame, (F,), -1 for "
          "padding) and `timestamps` (float64 seconds from the stream's first frame, (F,), -1 "
          "for padding), where DALI has them.",
      .outputs = {"video"},
      .output_names = video_reader_output_names,
      .args = video_reader_args(),
      .make_cpu =
          [](const OpSpec& s) {
            return std::make_unique<ReaderOperator>(s, make_video_reader_source(s));
          },
#ifdef STOKER_HAVE_CUDA
      .make_gpu =
          [](const OpSpec& s) {
            return std::make_unique<ReaderOperator>(s, make_video_reader_source(s));
          },
#endif
      .deprecated_names = {"video_reader"},
  };
  add_video_loader_args(schema);
  return schema;
}

}  // namespace stoker::ops
