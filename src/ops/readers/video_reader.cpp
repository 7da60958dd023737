#include "stoker/ops/readers/video_reader.hpp"

#include <algorithm>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>

#include "stoker/codecs/video/nvdec_video.hpp"
#include "stoker/codecs/video/video_file.hpp"
#include "stoker/kernels/color/yuv_to_rgb.hpp"
#include "stoker/ops/decoders/video_frames.hpp"
#include "stoker/kernels/memory/fill_gpu.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/file_index.hpp"
#include "stoker/readers/video_index.hpp"

namespace stoker::ops {
namespace {

enum class FrameNumbers { kNone, kScalar, kSequence };

// Which outputs exist, by DALI's rules (video_reader_op.h): labels with file_root, file_list or
// filenames + labels; frame numbers and timestamps only with file_list or filenames + labels.
struct VideoOutputs {
  bool labels = false, timestamps = false;
  FrameNumbers frame_numbers = FrameNumbers::kNone;
};

VideoOutputs video_outputs(const OpSpec& spec) {
  const bool names = !spec.arg<std::vector<std::string>>("filenames").empty();
  const bool root = !spec.arg<std::string>("file_root").empty();
  const bool list = !spec.arg<std::string>("file_list").empty();
  STOKER_ENFORCE(int(names) + int(root) + int(list) == 1, ValueError,
                 "readers.video: give exactly one of `filenames`, `file_root` and `file_list`");
  const bool labels = spec.has_arg("labels");
  STOKER_ENFORCE(!labels || names, ValueError,
                 "readers.video: `labels` go with `filenames` (file_root and file_list give "
                 "their own)");
  VideoOutputs o;
  o.labels = labels || root || list;
  const auto mode = spec.arg<std::string>("enable_frame_num");
  if (mode == "scalar" || mode == "True") {
    o.frame_numbers = FrameNumbers::kScalar;
  } else if (mode == "sequence") {
    o.frame_numbers = FrameNumbers::kSequence;
  } else {
    STOKER_ENFORCE(mode == "none" || mode == "False", ValueError,
                   "readers.video: enable_frame_num must be 'none', 'scalar' or 'sequence' (or "
                   "False/True), got '",
                   mode, "'");
  }
  o.timestamps = spec.arg<bool>("enable_timestamps");
  const bool per_file = list || (names && labels);
  STOKER_ENFORCE(per_file || (o.frame_numbers == FrameNumbers::kNone && !o.timestamps),
                 ValueError,
                 "readers.video: frame numbers and timestamps need `file_list`, or `filenames` "
                 "with `labels` (as in DALI)");
  return o;
}

std::vector<std::string> video_output_names(const OpSpec& spec) {
  const auto o = video_outputs(spec);
  std::vector<std::string> names{"video"};
  if (o.labels) names.push_back("labels");
  if (o.frame_numbers != FrameNumbers::kNone) names.push_back("frame_num");
  if (o.timestamps) names.push_back("timestamps");
  return names;
}

// A decoder open on one file's bytes (libavcodec's, or NVDEC's for a gpu reader); the reader
// keeps a few idle ones so that consecutive sequences of a file continue where the last stopped.
struct OpenVideo {
  int32_t file = -1;
  readers::FileBytes bytes;
  std::optional<codecs::VideoFile> cpu;
  std::optional<codecs::NvdecVideo> gpu;
};

class VideoSource final : public ReaderSource {
 public:
  explicit VideoSource(const OpSpec& spec)
      : spec_(spec), out_(video_outputs(spec)), files_(file_options(spec)),
        gpu_(spec.backend == Backend::kGpu),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))),
        normalized_(spec.arg<bool>("normalized")), stride_(spec.arg<int64_t>("stride")),
        length_(spec.arg<int64_t>("sequence_length")),
        max_idle_(size_t(2 * spec.arg<int64_t>("num_io_threads") + 2)) {
    auto image_type = spec.arg<std::string>("image_type");
    std::transform(image_type.begin(), image_type.end(), image_type.begin(), ::toupper);
    STOKER_ENFORCE(image_type == "RGB" || image_type == "YCBCR", ValueError,
                   "readers.video: image_type must be RGB or YCbCr, got '",
                   spec.arg<std::string>("image_type"), "'");
    rgb_ = image_type == "RGB";
    STOKER_ENFORCE(dtype_ == DType::kU8 || dtype_ == DType::kF32, TypeError,
                   "readers.video: dtype must be uint8 or float32, got ", dtype_name(dtype_));
    STOKER_ENFORCE(!normalized_ || dtype_ == DType::kF32, ValueError,
                   "readers.video: normalized needs dtype=float32 (uint8 cannot hold 0-1)");
    STOKER_ENFORCE(spec.arg<int64_t>("channels") == 3, ValueError,
                   "readers.video: channels must be 3, got ", spec.arg<int64_t>("channels"));
    STOKER_ENFORCE(length_ >= 1, ValueError, "readers.video: sequence_length must be >= 1, got ",
                   length_);
  }

  std::vector<DType> output_dtypes() const override {
    std::vector<DType> d{dtype_};
    if (out_.labels) d.push_back(DType::kI32);
    if (out_.frame_numbers != FrameNumbers::kNone) d.push_back(DType::kI32);
    if (out_.timestamps) d.push_back(DType::kF64);
    return d;
  }
  TensorLayout output_layout(size_t k) const override {
    return k == 0 ? TensorLayout("FHWC") : TensorLayout();
  }
  bool preshuffles() const override { return true; }  // DALI shuffles its sequence list once
  std::string source_info(int64_t index) const override {
    const auto& s = sequences_[size_t(index)];
    const auto& f = files_list_[size_t(s.file)];
    if (!f.index) return f.path;  // an unreadable file's one sample
    return detail::concat(f.path, " frames ", s.first, "..", s.first + (s.frames - 1) * stride_,
                          " step ", stride_);
  }

  int64_t build_index() override;
  void start(const Workspace& ws) override;
  void load(readers::LoadedSample& s, MemoryPool& pool) const override;

 private:
  struct File {
    std::string path;
    int32_t label = 0;
    std::shared_ptr<const codecs::VideoIndex> index;  // null: the file could not be read
    std::string error;  // why not: a ValueError, or an IOError when `io`
    bool io = false;
  };
  [[noreturn]] static void fail(const File& f) {
    if (f.io) throw IOError(f.error);
    throw ValueError(f.error);
  }

  std::unique_ptr<OpenVideo> acquire(int32_t file) const;
  void release(std::unique_ptr<OpenVideo> open) const;
  // Decodes sequence `seq` into `out` (length_ frames: the missing ones of a padded sequence
  // left to the caller): on the CPU, or with NVDEC into device memory on `stream`.
  void decode_cpu(const readers::VideoSequence& seq, uint8_t* out) const;
  void decode_gpu(const readers::VideoSequence& seq, uint8_t* out, StreamHandle stream) const;
  // The small outputs (labels, frame numbers, timestamps) of sequence `seq`.
  void add_metadata(readers::LoadedSample& s, const readers::VideoSequence& seq, MemoryPool& pool,
                    StreamHandle stream) const;

  OpSpec spec_;
  VideoOutputs out_;
  readers::FileOptions files_;
  bool gpu_ = false;
  int device_ = 0;
  mutable MemoryPool bytes_pool_{make_host_allocator()};  // the files' bytes, on the host
  mutable std::mutex streams_mutex_;
  mutable std::vector<std::unique_ptr<CudaStream>> streams_;  // idle I/O-thread streams
  DType dtype_;
  bool rgb_ = true, normalized_ = false;
  int64_t stride_, length_;
  std::vector<File> files_list_;                   // built once, then read-only
  std::vector<readers::VideoSequence> sequences_;  // the dataset: one sample per sequence
  size_t max_idle_;
  mutable std::mutex idle_mutex_;
  mutable std::list<std::unique_ptr<OpenVideo>> idle_;  // most recently used first
};

int64_t VideoSource::build_index() {
  STOKER_ENFORCE(codecs::VideoFile::available(), RuntimeError,
                 "readers.video: stoker was built without FFmpeg (libavformat, libavcodec, "
                 "libswscale): video cannot be read here");
  std::vector<readers::VideoEntry> entries;
  if (const auto list = spec_.arg<std::string>("file_list"); !list.empty()) {
    entries = readers::parse_video_file_list(list);
  } else if (const auto root = spec_.arg<std::string>("file_root"); !root.empty()) {
    for (auto& f : readers::index_class_folders(root, {"*"})) entries.push_back({f.path, f.label});
  } else {
    const auto names = spec_.arg<std::vector<std::string>>("filenames");
    const auto labels = spec_.has_arg("labels") ? spec_.arg<std::vector<int64_t>>("labels")
                                                : std::vector<int64_t>{};
    STOKER_ENFORCE(labels.empty() || labels.size() == names.size(), ValueError,
                   "readers.video: got ", labels.size(), " labels for ", names.size(), " files");
    for (size_t i = 0; i < names.size(); ++i)
      entries.push_back({names[i], int32_t(labels.empty() ? int64_t(i) : labels[i])});
  }
  readers::FrameRangeOptions range_options{spec_.arg<bool>("file_list_frame_num"),
                                           spec_.arg<bool>("file_list_include_preceding_frame")};
  readers::SequenceOptions cut{length_, spec_.arg<int64_t>("step"), stride_,
                               spec_.arg<bool>("pad_sequences")};
  const bool skip_vfr_check = spec_.arg<bool>("skip_vfr_check");
  int64_t unreadable = 0;
  for (const auto& e : entries) {
    const auto file = int32_t(files_list_.size());
    // A file that cannot be read (a data error) becomes one sample that fails when loaded, so
    // that the others are read: on_error="skip" skips it (counted and warned as every skipped
    // sample is); otherwise start() raises its error. The build cannot tell the two apart.
    std::shared_ptr<const codecs::VideoIndex> index;
    try {
      const auto bytes = readers::read_whole_file(e.path, files_, bytes_pool_);
      auto video = codecs::VideoFile::open(bytes.span(), e.path);
      STOKER_ENFORCE(skip_vfr_check || !video.info().variable_frame_rate, ValueError,
                     "readers.video: '", e.path,
                     "' has a variable frame rate (its frames' durations differ); DALI refuses "
                     "such files: set skip_vfr_check=True to read its frames in display order");
      index = video.index();
    } catch (const Error& err) {
      const bool io = dynamic_cast<const IOError*>(&err) != nullptr;
      if (!io && dynamic_cast<const ValueError*>(&err) == nullptr) throw;
      files_list_.push_back({e.path, e.label, nullptr, err.what(), io});
      sequences_.push_back({file, 0, 0});
      ++unreadable;
      continue;
    }
    const auto& info = index->info;
    const double fps = double(info.fps_num) / double(info.fps_den);
    const auto [first, end] = readers::video_frame_range(e, info.frames, fps, range_options);
    files_list_.push_back({e.path, e.label, std::move(index)});
    readers::cut_sequences(file, first, end, cut, sequences_);
  }
  // No file readable: the first one's error, at build.
  if (unreadable > 0 && unreadable == int64_t(files_list_.size())) fail(files_list_.front());
  STOKER_ENFORCE(int64_t(sequences_.size()) > unreadable, ValueError,
                 "readers.video: no sequence of ", length_, " frames (stride ", stride_,
                 ") fits in the ", int64_t(files_list_.size()) - unreadable,
                 " files given; shorten sequence_length or stride, or set pad_sequences");
  return int64_t(sequences_.size());
}

std::unique_ptr<OpenVideo> VideoSource::acquire(int32_t file) const {
  {
    std::lock_guard lock(idle_mutex_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if ((*it)->file == file) {
        auto open = std::move(*it);
        idle_.erase(it);
        return open;
      }
    }
  }
  const File& f = files_list_[size_t(file)];
  auto open = std::make_unique<OpenVideo>();
  open->file = file;
  open->bytes = readers::read_whole_file(f.path, files_, bytes_pool_);
  auto video = codecs::VideoFile::open(open->bytes.span(), f.path, f.index);
  if (gpu_) {
    open->gpu.emplace(std::move(video), device_);
  } else {
    open->cpu.emplace(std::move(video));
  }
  return open;
}

void VideoSource::start(const Workspace& ws) {
  // Unreadable files: errors now, unless on_error="skip" (ws.failures) skips their samples.
  if (!ws.failures)
    for (const auto& f : files_list_)
      if (!f.index) fail(f);
  if (!gpu_) return;
  device_ = ws.device_id;
  for (const auto& f : files_list_) {
    if (!f.index) continue;
    const auto why = codecs::nvdec_unavailable(device_, f.index->info);
    STOKER_ENFORCE(why.empty(), RuntimeError, "readers.video (gpu): '", f.path, "': ", why);
  }
}

void VideoSource::release(std::unique_ptr<OpenVideo> open) const {
  std::lock_guard lock(idle_mutex_);
  idle_.push_front(std::move(open));
  if (idle_.size() > max_idle_) idle_.pop_back();
}

void VideoSource::decode_cpu(const readers::VideoSequence& seq, uint8_t* out) const {
  const auto& info = files_list_[size_t(seq.file)].index->info;
  const int64_t frame = info.height * info.width * 3;
  auto open = acquire(seq.file);
  // A decoder that failed is dropped, not kept: its state is unknown.
  open->cpu->decode(seq.first, seq.frames, stride_, [&](int64_t k, const codecs::VideoPlanes& p) {
    if (dtype_ == DType::kU8) {
      kernels::yuv_to_rgb_cpu(yuv_planes(p), rgb_, false, out + k * frame);
    } else {
      kernels::yuv_to_rgb_cpu(yuv_planes(p), rgb_, normalized_,
                              reinterpret_cast<float*>(out) + k * frame);
    }
  });
  release(std::move(open));
}

void VideoSource::decode_gpu(const readers::VideoSequence& seq, uint8_t* out,
                             StreamHandle stream) const {
#ifndef STOKER_HAVE_CUDA
  // (Only the gpu reader calls it, and a build without CUDA registers none.)
  (void)seq, (void)out, (void)stream;
  throw RuntimeError("readers.video (gpu): stoker was built without CUDA");
#else
  const auto& info = files_list_[size_t(seq.file)].index->info;
  const int64_t frame_bytes = info.height * info.width * 3 * int64_t(dtype_size(dtype_));
  auto open = acquire(seq.file);
  open->gpu->decode(seq.first, seq.frames, stride_, stream,
                    [&](int64_t k, const codecs::VideoPlanes& p) {
                      cuda_check(kernels::yuv_to_rgb_gpu(yuv_planes(p), rgb_, normalized_, dtype_,
                                                         out + k * frame_bytes, stream),
                                 "readers.video (gpu): converting a frame");
                    });
  release(std::move(open));
#endif
}

void VideoSource::add_metadata(readers::LoadedSample& s, const readers::VideoSequence& seq,
                               MemoryPool& pool, StreamHandle stream) const {
  const File& file = files_list_[size_t(seq.file)];
  auto add = [&](auto values) {  // a host vector, copied to the device by a gpu reader
    using T = typename decltype(values)::value_type;
    const size_t bytes = values.size() * sizeof(T);
    auto b = pool.acquire(std::max<size_t>(bytes, 1));
    if (gpu_) {
      copy_to_device_async(b->data(), values.data(), bytes, stream);
      synchronize_stream(stream);  // `values` goes when this returns
    } else if (bytes > 0) {  // memcpy may not be given null, even for 0 bytes
      std::memcpy(b->data(), values.data(), bytes);
    }
    const void* data = b->data();
    s.outputs.push_back({std::move(b), data, TensorShape{int64_t(values.size())}});
  };
  if (out_.labels) add(std::vector<int32_t>{file.label});
  if (out_.frame_numbers == FrameNumbers::kScalar) {
    add(std::vector<int32_t>{int32_t(seq.first)});
  } else if (out_.frame_numbers == FrameNumbers::kSequence) {
    std::vector<int32_t> v(size_t(length_), -1);  // -1: padding (DALI's)
    for (int64_t k = 0; k < seq.frames; ++k) v[size_t(k)] = int32_t(seq.first + k * stride_);
    add(v);
  }
  if (out_.timestamps) {
    // Seconds from the stream's first frame; -1 for padding (DALI's).
    const auto& info = file.index->info;
    const double base = double(info.time_base_num) / double(info.time_base_den);
    const auto& pts = file.index->pts;
    std::vector<double> t(size_t(length_), -1.0);
    for (int64_t k = 0; k < seq.frames; ++k)
      t[size_t(k)] = double(pts[size_t(seq.first + k * stride_)] - pts[0]) * base;
    add(t);
  }
}

void VideoSource::load(readers::LoadedSample& s, MemoryPool& pool) const {
  const auto& seq = sequences_[size_t(s.index)];
  if (!files_list_[size_t(seq.file)].index) fail(files_list_[size_t(seq.file)]);
  const auto& info = files_list_[size_t(seq.file)].index->info;
  const int64_t frame_bytes = info.height * info.width * 3 * int64_t(dtype_size(dtype_));
  auto buffer = pool.acquire(size_t(length_ * frame_bytes));
  auto* out = static_cast<uint8_t*>(buffer->data());
  const int64_t used = seq.frames * frame_bytes, padding = (length_ - seq.frames) * frame_bytes;
  s.outputs.clear();
  if (!gpu_) {
    decode_cpu(seq, out);
    std::memset(out + used, 0, size_t(padding));  // padded sequences: zero frames (DALI's)
    s.outputs.push_back({std::move(buffer), out, TensorShape{length_, info.height, info.width, 3}});
    add_metadata(s, seq, pool, nullptr);
    return;
  }
  // The reader's I/O threads take a stream each from the idle ones for the sequence.
  DeviceGuard device(device_);
  std::unique_ptr<CudaStream> stream;
  {
    std::lock_guard lock(streams_mutex_);
    if (!streams_.empty()) stream = std::move(streams_.back()), streams_.pop_back();
  }
  if (!stream) stream = std::make_unique<CudaStream>(device_);
  decode_gpu(seq, out, stream->get());
  if (padding > 0)
    cuda_check(kernels::fill_bytes_gpu(out + used, size_t(padding), 0, stream->get()),
               "readers.video (gpu): zeroing padded frames");
  s.outputs.push_back({std::move(buffer), out, TensorShape{length_, info.height, info.width, 3}});
  add_metadata(s, seq, pool, stream->get());  // synchronises the stream
  std::lock_guard lock(streams_mutex_);
  streams_.push_back(std::move(stream));
}

}  // namespace

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
      .output_names = video_output_names,
      .args =
          {
              {"filenames", ArgType::kStringList, "Video files to read.",
               std::vector<std::string>{}},
              optional_arg("labels", ArgType::kIntList,
                           "Labels of `filenames`, one per file; [] numbers the files 0, 1, ...; "
                           "left out, no labels output.",
                           false),
              {"file_root", ArgType::kString,
               "A folder of class sub-folders of videos (classes sorted by name, labelled 0, "
               "1, ...; files sorted).",
               std::string()},
              {"file_list", ArgType::kString,
               "A text file of '<path> <label> [<start> [<end>]]' lines: start and end in "
               "seconds (or frame numbers, file_list_frame_num), negative ones from the end; "
               "paths as given (relative to the current folder, as in DALI).",
               std::string()},
              {"sequence_length", ArgType::kInt, "Frames per sequence.", std::nullopt},
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
               false},
              {"enable_frame_num", ArgType::kString,
               "'none' (or False), 'scalar' (or True: the first frame's number, shape (1,)) or "
               "'sequence' (every frame's number, shape (F,)).",
               std::string("none"), false, false, false, /*bool_as_string=*/true},
              {"enable_timestamps", ArgType::kBool,
               "Output each frame's timestamp in seconds.", false},
              {"file_list_frame_num", ArgType::kBool,
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
               "DALI's NVDEC setting; accepted, no effect on the CPU decoder.", int64_t{2}},
          },
      .make_cpu = [](const OpSpec& s) { return make_reader<VideoSource>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return make_reader<VideoSource>(s); },
#endif
      .deprecated_names = {"video_reader"},
  };
  for (auto& a : loader_arg_schemas()) {
    // Decoding runs on the I/O threads: more of them than the file readers need.
    if (a.name == "num_io_threads") a.default_value = int64_t{4};
    schema.args.push_back(a);
  }
  return schema;
}

}  // namespace stoker::ops
