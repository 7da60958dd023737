#include "stoker/ops/readers/video_source.hpp"

#include <algorithm>
#include <cstring>

#include "stoker/kernels/color/yuv_to_rgb.hpp"
#include "stoker/kernels/memory/fill_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/decoders/video_frames.hpp"

namespace stoker::ops {

FrameNumbers parse_frame_numbers(const std::string& op, const std::string& mode) {
  if (mode == "scalar" || mode == "True") return FrameNumbers::kScalar;
  if (mode == "sequence") return FrameNumbers::kSequence;
  STOKER_ENFORCE(mode == "none" || mode == "False", ValueError, op,
                 ": enable_frame_num must be 'none', 'scalar' or 'sequence' (or False/True), got '",
                 mode, "'");
  return FrameNumbers::kNone;
}

std::vector<std::string> video_output_names(bool labels, FrameNumbers frame_numbers,
                                            bool timestamps) {
  std::vector<std::string> names{"video"};
  if (labels) names.emplace_back("labels");
  if (frame_numbers != FrameNumbers::kNone) names.emplace_back("frame_num");
  if (timestamps) names.emplace_back("timestamps");
  return names;
}

bool parse_video_image_type(const std::string& op, const std::string& value) {
  auto upper = value;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  STOKER_ENFORCE(upper == "RGB" || upper == "YCBCR", ValueError, op,
                 ": image_type must be RGB or YCbCr, got '", value, "'");
  return upper == "RGB";
}

std::vector<ArgSchema> video_file_args(std::string labels_doc, std::string file_list_doc) {
  return {
      {"filenames", ArgType::kStringList, "Video files to read.", std::vector<std::string>{}},
      optional_arg("labels", ArgType::kIntList, std::move(labels_doc), false),
      {"file_root", ArgType::kString,
       "A folder of class sub-folders of videos (classes sorted by name, labelled 0, "
       "1, ...; files sorted).",
       std::string()},
      {"file_list", ArgType::kString, std::move(file_list_doc), std::string()},
  };
}

std::vector<ArgSchema> video_metadata_args() {
  return {
      {"enable_frame_num", ArgType::kString,
       "'none' (or False), 'scalar' (or True: the first frame's number, shape (1,)) or "
       "'sequence' (every frame's number, shape (F,)).",
       std::string("none"), false, false, false, /*bool_as_string=*/true},
      {"enable_timestamps", ArgType::kBool, "Output each frame's timestamp in seconds.", false},
  };
}

void add_video_loader_args(OpSchema& schema) {
  for (auto& a : loader_arg_schemas()) {
    // Decoding runs on the I/O threads: more of them than the file readers need.
    if (a.name == "num_io_threads") a.default_value = int64_t{4};
    schema.args.push_back(a);
  }
}

// A decoder open on one file's bytes (libavcodec's, or NVDEC's for a gpu reader); the reader
// keeps a few idle ones so that consecutive clips of a file continue where the last stopped.
struct VideoSource::OpenVideo {
  int32_t file = -1;
  readers::FileBytes bytes;
  std::optional<codecs::VideoFile> cpu;
  std::optional<codecs::NvdecVideo> gpu;
};

namespace {

// Where each distinct frame a clip decodes first appears in it: the frame is decoded there and
// copied to its later places.
class FramePlaces {
 public:
  explicit FramePlaces(const std::vector<ClipFrame>& frames) {
    for (size_t k = 0; k < frames.size(); ++k)
      if (frames[k].decode >= 0) at_.emplace_back(frames[k].decode, int64_t(k));
    std::stable_sort(at_.begin(), at_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    at_.erase(std::unique(at_.begin(), at_.end(),
                          [](const auto& a, const auto& b) { return a.first == b.first; }),
              at_.end());
  }
  int64_t operator[](int64_t frame) const {
    auto it = std::lower_bound(at_.begin(), at_.end(), std::pair<int64_t, int64_t>{frame, -1});
    return it->second;
  }
  std::vector<FrameRun> runs() const {
    std::vector<int64_t> frames;
    for (const auto& p : at_) frames.push_back(p.first);
    return frame_runs(std::move(frames));
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> at_;  // (frame, first place), by frame
};

}  // namespace

VideoSource::VideoSource(const OpSpec& spec, VideoSourceOptions options)
    : spec_(spec),
      options_(std::move(options)),
      file_options_(file_options(spec)),
      gpu_(spec.backend == Backend::kGpu),
      max_idle_(size_t(2 * spec.arg<int64_t>("num_io_threads") + 2)) {
  STOKER_ENFORCE(options_.length >= 1, ValueError, options_.op,
                 ": sequence_length must be >= 1, got ", options_.length);
}

VideoSource::~VideoSource() = default;

void VideoSource::fail(const File& f) {
  if (f.io) throw IOError(f.error);
  throw ValueError(f.error);
}

std::vector<DType> VideoSource::output_dtypes() const {
  std::vector<DType> d{options_.dtype};
  if (options_.labels) d.push_back(DType::kI32);
  if (options_.frame_numbers != FrameNumbers::kNone) d.push_back(DType::kI32);
  if (options_.timestamps) d.push_back(DType::kF64);
  return d;
}

int64_t VideoSource::build_index() {
  STOKER_ENFORCE(codecs::VideoFile::available(), RuntimeError, options_.op,
                 ": stoker was built without FFmpeg (libavformat, libavcodec, libswscale): video "
                 "cannot be read here");
  int64_t unreadable = 0, readable = 0;
  for (const auto& e : entries()) {
    const auto file = int32_t(files_.size());
    // A file that cannot be read (a data error) becomes one sample that fails when loaded, so
    // that the others are read: on_error="skip" skips it (counted and warned as every skipped
    // sample is); otherwise start() raises its error. The build cannot tell the two apart.
    std::shared_ptr<const codecs::VideoIndex> index;
    try {
      const auto bytes = readers::read_whole_file(e.path, file_options_, bytes_pool_);
      auto video = codecs::VideoFile::open(bytes.span(), e.path);
      check_file(e, video);
      index = video.index();
    } catch (const Error& err) {
      const bool io = dynamic_cast<const IOError*>(&err) != nullptr;
      if (!io && dynamic_cast<const ValueError*>(&err) == nullptr) throw;
      files_.push_back({e.path, e.label, nullptr, err.what(), io});
      clips_.push_back({file, 0, 0});
      ++unreadable;
      continue;
    }
    const auto [first, end] = frame_range(e, *index);
    const auto& info = index->info;
    files_.push_back({e.path, e.label, index, {}, false, first, end});
    ++readable;
    if (first >= end) continue;  // an empty range: DALI skips the entry
    const size_t before = clips_.size();
    cut(file, clips_);
    // Padding makes a clip sequence_length frames whatever the file holds: bounded before any
    // is allocated (arg_limits.hpp).
    if (clips_.size() > before)
      check_arg_elements(options_.op, "sequence_length",
                         std::vector<double>{double(options_.length), double(info.height),
                                             double(info.width), 3.0});
  }
  // No file readable: the first one's error, at build.
  if (unreadable > 0 && readable == 0) fail(files_.front());
  STOKER_ENFORCE(int64_t(clips_.size()) > unreadable, ValueError, no_clips_error(readable));
  return int64_t(clips_.size());
}

std::string VideoSource::source_info(int64_t index) const {
  const auto& clip = clips_[size_t(index)];
  const auto& f = files_[size_t(clip.file)];
  if (!f.index) return f.path;  // an unreadable file's one sample
  std::vector<ClipFrame> frames;
  try {
    this->frames(clip, frames);
  } catch (const ValueError&) {
    return f.path;  // load() raises the error, naming this
  }
  std::vector<int64_t> used;
  for (const auto& c : frames)
    if (c.decode >= 0) used.push_back(c.decode);
  if (used.empty()) return f.path + " (padding only)";
  // A progression reads "a..b step s"; others list their frames.
  const int64_t step = used.size() > 1 ? used[1] - used[0] : 1;
  bool progression = step > 0;
  for (size_t k = 1; k < used.size(); ++k) progression &= used[k] - used[k - 1] == step;
  if (progression)
    return detail::concat(f.path, " frames ", used.front(), "..", used.back(), " step ", step);
  std::string list;
  for (int64_t u : used) list += (list.empty() ? "" : ", ") + std::to_string(u);
  return detail::concat(f.path, " frames ", list);
}

std::unique_ptr<VideoSource::OpenVideo> VideoSource::acquire(int32_t file) const {
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
  const File& f = files_[size_t(file)];
  auto open = std::make_unique<OpenVideo>();
  open->file = file;
  open->bytes = readers::read_whole_file(f.path, file_options_, bytes_pool_);
  auto video = codecs::VideoFile::open(open->bytes.span(), f.path, f.index);
  if (gpu_) {
    open->gpu.emplace(std::move(video), device_);
  } else {
    open->cpu.emplace(std::move(video));
  }
  return open;
}

void VideoSource::release(std::unique_ptr<OpenVideo> open) const {
  std::lock_guard lock(idle_mutex_);
  idle_.push_front(std::move(open));
  if (idle_.size() > max_idle_) idle_.pop_back();
}

void VideoSource::start(const Workspace& ws) {
  // Unreadable files: errors now, unless on_error="skip" (ws.failures) skips their samples.
  if (!ws.failures)
    for (const auto& f : files_)
      if (!f.index) fail(f);
  if (!gpu_) return;
  device_ = ws.device_id;
  for (const auto& f : files_) {
    if (!f.index) continue;
    const auto why = codecs::nvdec_unavailable(device_, f.index->info);
    STOKER_ENFORCE(why.empty(), RuntimeError, options_.op, " (gpu): '", f.path, "': ", why);
  }
}

std::vector<uint8_t> VideoSource::fill_frame(int64_t h, int64_t w) const {
  const size_t values = size_t(h * w * 3), size = dtype_size(options_.dtype);
  std::vector<uint8_t> frame(values * size);
  const auto& fill = options_.fill;
  for (size_t k = 0; k < values; ++k) {
    const double v = fill[fill.size() == 1 ? 0 : k % 3];
    if (options_.dtype == DType::kU8) {
      frame[k] = uint8_t(v);
    } else {
      const auto f = float(v);
      std::memcpy(frame.data() + k * size, &f, size);
    }
  }
  return frame;
}

void VideoSource::decode_cpu(const VideoClip& clip, const std::vector<ClipFrame>& frames,
                             uint8_t* out, int64_t bytes) const {
  const FramePlaces places(frames);
  auto open = acquire(clip.file);
  // A decoder that failed is dropped, not kept: its state is unknown.
  for (const FrameRun& r : places.runs()) {
    open->cpu->decode(r.first, r.count, r.stride, [&](int64_t j, const codecs::VideoPlanes& p) {
      uint8_t* to = out + places[r.first + j * r.stride] * bytes;
      if (options_.dtype == DType::kU8) {
        kernels::yuv_to_rgb_cpu(yuv_planes(p), options_.rgb, false, to);
      } else {
        kernels::yuv_to_rgb_cpu(yuv_planes(p), options_.rgb, options_.normalized,
                                reinterpret_cast<float*>(to));
      }
    });
  }
  release(std::move(open));
  const auto& info = files_[size_t(clip.file)].index->info;
  std::vector<uint8_t> fill;
  for (size_t k = 0; k < frames.size(); ++k) {
    uint8_t* to = out + int64_t(k) * bytes;
    const int64_t f = frames[k].decode;
    if (f < 0) {
      if (fill.empty()) fill = fill_frame(info.height, info.width);
      std::memcpy(to, fill.data(), fill.size());
    } else if (places[f] != int64_t(k)) {
      std::memcpy(to, out + places[f] * bytes, size_t(bytes));
    }
  }
}

void VideoSource::decode_gpu(const VideoClip& clip, const std::vector<ClipFrame>& frames,
                             uint8_t* out, int64_t bytes, StreamHandle stream) const {
#ifndef STOKER_HAVE_CUDA
  // (Only gpu readers call it, and a build without CUDA registers none.)
  (void)clip, (void)frames, (void)out, (void)bytes, (void)stream;
  throw RuntimeError(options_.op + " (gpu): stoker was built without CUDA");
#else
  const FramePlaces places(frames);
  auto open = acquire(clip.file);
  for (const FrameRun& r : places.runs()) {
    open->gpu->decode(
        r.first, r.count, r.stride, stream, [&](int64_t j, const codecs::VideoPlanes& p) {
          uint8_t* to = out + places[r.first + j * r.stride] * bytes;
          cuda_check(kernels::yuv_to_rgb_gpu(yuv_planes(p), options_.rgb, options_.normalized,
                                             options_.dtype, to, stream),
                     options_.op + " (gpu): converting a frame");
        });
  }
  release(std::move(open));
  const auto& info = files_[size_t(clip.file)].index->info;
  const bool zero =
      std::all_of(options_.fill.begin(), options_.fill.end(), [](double v) { return v == 0; });
  std::vector<uint8_t> fill;
  for (size_t k = 0; k < frames.size(); ++k) {
    uint8_t* to = out + int64_t(k) * bytes;
    const int64_t f = frames[k].decode;
    if (f >= 0) {
      if (places[f] != int64_t(k))
        copy_device_async(to, out + places[f] * bytes, size_t(bytes), stream);
    } else if (zero) {
      cuda_check(kernels::fill_bytes_gpu(to, size_t(bytes), 0, stream),
                 options_.op + " (gpu): padding frames");
    } else {
      if (fill.empty()) fill = fill_frame(info.height, info.width);
      copy_to_device_async(to, fill.data(), fill.size(), stream);
    }
  }
  synchronize_stream(stream);  // `fill` goes with this call; the clip is complete on return
#endif
}

void VideoSource::add_metadata(readers::LoadedSample& s, const VideoClip& clip,
                               const std::vector<ClipFrame>& frames, MemoryPool& pool,
                               StreamHandle stream) const {
  const File& file = files_[size_t(clip.file)];
  auto add = [&](auto values) {  // a host vector, copied to the device by a gpu reader
    using T = typename decltype(values)::value_type;
    const size_t bytes = values.size() * sizeof(T);
    auto b = pool.acquire(std::max<size_t>(bytes, 1));
    if (gpu_) {
      copy_to_device_async(b->data(), values.data(), bytes, stream);
      synchronize_stream(stream);  // `values` goes when this returns
    } else if (bytes > 0) {        // memcpy may not be given null, even for 0 bytes
      std::memcpy(b->data(), values.data(), bytes);
    }
    const void* data = b->data();
    s.outputs.push_back({std::move(b), data, TensorShape{int64_t(values.size())}});
  };
  if (options_.labels) add(std::vector<int32_t>{file.label});
  if (options_.frame_numbers == FrameNumbers::kScalar) {
    add(std::vector<int32_t>{int32_t(clip.start)});
  } else if (options_.frame_numbers == FrameNumbers::kSequence) {
    std::vector<int32_t> v;
    v.reserve(frames.size());
    for (const auto& f : frames) v.push_back(int32_t(f.number));
    add(v);
  }
  if (options_.timestamps) {
    // Seconds from the stream's first frame, as DALI computes them (pts x num / den); -1 for
    // padding.
    const auto& info = file.index->info;
    const auto& pts = file.index->pts;
    std::vector<double> t;
    t.reserve(frames.size());
    for (const auto& f : frames)
      t.push_back(f.decode < 0 ? -1.0
                               : double(pts[size_t(f.decode)] - pts[0]) *
                                     double(info.time_base_num) / double(info.time_base_den));
    add(t);
  }
}

void VideoSource::load(readers::LoadedSample& s, MemoryPool& pool) const {
  const auto& clip = clips_[size_t(s.index)];
  const File& file = files_[size_t(clip.file)];
  if (!file.index) fail(file);
  std::vector<ClipFrame> frames;
  this->frames(clip, frames);
  const auto& info = file.index->info;
  const int64_t frame_bytes = info.height * info.width * 3 * int64_t(dtype_size(options_.dtype));
  const auto length = int64_t(frames.size());
  auto buffer = pool.acquire(size_t(std::max<int64_t>(length * frame_bytes, 1)));
  auto* out = static_cast<uint8_t*>(buffer->data());
  s.outputs.clear();
  const TensorShape shape{length, info.height, info.width, 3};
  if (!gpu_) {
    decode_cpu(clip, frames, out, frame_bytes);
    s.outputs.push_back({std::move(buffer), out, shape});
    add_metadata(s, clip, frames, pool, nullptr);
    return;
  }
  // The reader's I/O threads take a stream each from the idle ones for the clip.
  DeviceGuard device(device_);
  std::unique_ptr<CudaStream> stream;
  {
    std::lock_guard lock(streams_mutex_);
    if (!streams_.empty()) stream = std::move(streams_.back()), streams_.pop_back();
  }
  if (!stream) stream = std::make_unique<CudaStream>(device_);
  decode_gpu(clip, frames, out, frame_bytes, stream->get());  // synchronises the stream
  s.outputs.push_back({std::move(buffer), out, shape});
  add_metadata(s, clip, frames, pool, stream->get());
  std::lock_guard lock(streams_mutex_);
  streams_.push_back(std::move(stream));
}

}  // namespace stoker::ops
