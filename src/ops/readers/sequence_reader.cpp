#include "stoker/ops/readers/sequence_reader.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "stoker/codecs/decoder.hpp"
#include "stoker/codecs/exif.hpp"
#include "stoker/kernels/geometry/orient_cpu.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/sequence_index.hpp"
#include "stoker/readers/video_index.hpp"

namespace stoker::ops {
namespace {

// DALI's image_type for this reader: RGB, BGR, GRAY or ANY_DATA (YCbCr is refused, as DALI
// refuses it when decoding).
codecs::ColorFormat frame_format(const OpSpec& spec) {
  auto t = spec.arg<std::string>("image_type");
  std::transform(t.begin(), t.end(), t.begin(), ::toupper);
  STOKER_ENFORCE(t == "RGB" || t == "BGR" || t == "GRAY" || t == "ANY_DATA", ValueError,
                 "readers.sequence: image_type must be RGB, BGR, GRAY or ANY_DATA, got '",
                 spec.arg<std::string>("image_type"), "'");
  return codecs::parse_color_format(t);
}

int64_t positive_arg(const OpSpec& spec, const char* name) {
  const auto v = spec.arg<int64_t>(name);
  STOKER_ENFORCE(v >= 1, ValueError, "readers.sequence: ", name, " must be >= 1, got ", v);
  return v;
}

class SequenceSource final : public ReaderSource {
 public:
  explicit SequenceSource(const OpSpec& spec)
      : spec_(spec),
        files_(file_options(spec)),
        format_(frame_format(spec)),
        length_(positive_arg(spec, "sequence_length")),
        step_(positive_arg(spec, "step")),
        stride_(positive_arg(spec, "stride")) {
    // DALI's decoder fails on a frame it cannot decode cleanly (a truncated JPEG too), and so
    // does this reader: a frame decoded past corrupt data would go unnoticed in a clip.
    limits_.strict = true;
  }

  std::vector<DType> output_dtypes() const override { return {DType::kU8}; }
  TensorLayout output_layout(size_t) const override { return TensorLayout("FHWC"); }
  bool preshuffles() const override { return true; }  // DALI shuffles its sequence list once
  std::string source_info(int64_t index) const override {
    const auto& s = sequences_[size_t(index)];
    const auto& frames = streams_[size_t(s.file)].frames;
    const auto last = frames[size_t(s.first + (length_ - 1) * stride_)];
    return detail::concat(frames[size_t(s.first)], " .. ", last.substr(last.rfind('/') + 1), " (",
                          length_, " frames, stride ", stride_, ")");
  }

  int64_t build_index() override {
    streams_ = readers::index_frame_streams(spec_.arg<std::string>("file_root"));
    const readers::SequenceOptions cut{length_, step_, stride_, /*pad=*/false};
    for (size_t s = 0; s < streams_.size(); ++s)
      readers::cut_sequences(int32_t(s), 0, int64_t(streams_[s].frames.size()), cut, sequences_);
    size_t longest = 0;
    for (const auto& s : streams_) longest = std::max(longest, s.frames.size());
    STOKER_ENFORCE(!sequences_.empty(), ValueError, "readers.sequence: no sequence of ", length_,
                   " frames (stride ", stride_, ": ", 1 + (length_ - 1) * stride_,
                   " frames of a stream) fits in the ", streams_.size(), " streams of '",
                   spec_.arg<std::string>("file_root"), "' (the longest has ", longest, " frames)");
    return int64_t(sequences_.size());
  }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override;

 private:
  std::unique_ptr<codecs::Decoder> acquire() const {
    std::lock_guard lock(decoders_mutex_);
    if (decoders_.empty()) return std::make_unique<codecs::Decoder>();
    auto d = std::move(decoders_.back());
    decoders_.pop_back();
    return d;
  }
  void release(std::unique_ptr<codecs::Decoder> d) const {
    std::lock_guard lock(decoders_mutex_);
    decoders_.push_back(std::move(d));
  }

  OpSpec spec_;
  readers::FileOptions files_;
  codecs::ColorFormat format_;
  codecs::DecodeLimits limits_;
  int64_t length_, step_, stride_;
  std::vector<readers::FrameStream> streams_;      // built once, then read-only
  std::vector<readers::VideoSequence> sequences_;  // the dataset: one sample per sequence
  // One decoder per I/O thread at a time (a Decoder keeps a JPEG decompressor).
  mutable std::mutex decoders_mutex_;
  mutable std::vector<std::unique_ptr<codecs::Decoder>> decoders_;
};

void SequenceSource::load(readers::LoadedSample& s, MemoryPool& pool) const {
  const auto& seq = sequences_[size_t(s.index)];
  const auto& frames = streams_[size_t(seq.file)].frames;
  auto decoder = acquire();  // dropped, not returned, if a frame throws: its state is unknown
  std::shared_ptr<Buffer> out;
  std::vector<uint8_t> stored;  // a frame as stored, when EXIF orientation turns it
  TensorShape shape, first_frame;
  std::string first_path;
  int64_t frame_bytes = 0;
  for (int64_t k = 0; k < length_; ++k) {
    const auto& path = frames[size_t(seq.first + k * stride_)];
    const auto bytes = readers::read_whole_file(path, files_, pool);
    codecs::ImageInfo info;
    try {
      info = decoder->info(bytes.data, bytes.size, format_, limits_);
    } catch (const ValueError& e) {
      throw ValueError(detail::concat("frame '", path, "': ", e.what()));
    }
    // Frames are shown as EXIF says, as DALI's decoder shows them.
    const bool swap = codecs::orientation_swaps_axes(info.orientation);
    const int64_t h = swap ? info.width : info.height, w = swap ? info.height : info.width;
    const TensorShape frame{h, w, int64_t(info.channels)};
    if (k == 0) {
      shape = TensorShape{length_, h, w, int64_t(info.channels)};
      frame_bytes = h * w * info.channels;
      out = pool.acquire(size_t(std::max<int64_t>(length_ * frame_bytes, 1)));
      first_path = path;
      first_frame = frame;
    } else {
      STOKER_ENFORCE(frame == first_frame, ValueError, "frame '", path, "' is ", frame.to_string(),
                     " but the sequence's first frame '", first_path, "' is ",
                     first_frame.to_string(), ": the frames of a sequence must have one shape");
    }
    auto* dst = static_cast<uint8_t*>(out->data()) + k * frame_bytes;
    try {
      if (info.orientation == 1) {
        decoder->decode(bytes.data, bytes.size, format_, info, dst, w * info.channels, limits_);
      } else {
        stored.resize(size_t(frame_bytes));
        decoder->decode(bytes.data, bytes.size, format_, info, stored.data(),
                        info.width * info.channels, limits_);
        kernels::orient_cpu(stored.data(), info.height, info.width, info.channels, info.orientation,
                            dst);
      }
    } catch (const ValueError& e) {
      throw ValueError(detail::concat("frame '", path, "': ", e.what()));
    }
  }
  release(std::move(decoder));
  const void* data = out->data();
  s.outputs.clear();
  s.outputs.push_back({std::move(out), data, std::move(shape)});
}

}  // namespace

OpSchema sequence_reader_schema() {
  OpSchema schema{
      .name = "readers.sequence",
      .doc =
          "Reads sequences of frames stored as image files (DALI's readers.sequence, deprecated "
          "there). `file_root` holds one sub-folder per stream, each holding one image file per "
          "frame (file_root/*/*: one level, names starting with '.' skipped, extensions .jpg "
          ".jpeg .png .bmp .tif .tiff .pnm .ppm .pgm .pbm .jp2 .webp in any case); streams and "
          "frames are ordered by sorting their paths bytewise. Every window of "
          "`sequence_length` frames `stride` apart starting at frames 0, step, 2 step, ... of "
          "a stream that fits in it is a sample (no padding, no window across streams), in "
          "stream order; an epoch reads each once. Output: F x H x W x C uint8 (layout FHWC), "
          "the frames decoded on the reader's I/O threads with EXIF orientation applied; the "
          "frames of a sequence must have one shape. random_shuffle also permutes the "
          "sequence list once, as DALI does. source_info names the first frame, the last and "
          "the stride.",
      .outputs = {"sequence"},
      .args =
          {
              {"file_root", ArgType::kString,
               "Folder of streams: one sub-folder of frame images per stream.", std::nullopt},
              {"sequence_length", ArgType::kInt, "Frames per sequence.", std::nullopt},
              {"step", ArgType::kInt, "Frames between the first frames of consecutive sequences.",
               int64_t{1}},
              {"stride", ArgType::kInt, "Frames between the frames of a sequence.", int64_t{1}},
              {"image_type", ArgType::kString,
               "RGB, BGR, GRAY (1 channel) or ANY_DATA (the file's channels).", std::string("RGB")},
          },
      .make_cpu = [](const OpSpec& s) { return make_reader<SequenceSource>(s); },
      .deprecated_names = {"sequence_reader"},
  };
  for (auto& a : loader_arg_schemas()) {
    // Decoding runs on the I/O threads: more of them than the file readers need.
    if (a.name == "num_io_threads") a.default_value = int64_t{4};
    schema.args.push_back(a);
  }
  return schema;
}

}  // namespace stoker::ops
