#include "stoker/ops/io/video_input.hpp"

#include <optional>

#include "stoker/codecs/video/nvdec_video.hpp"
#include "stoker/codecs/video/video_file.hpp"
#include "stoker/kernels/color/yuv_to_rgb.hpp"
#include "stoker/kernels/memory/fill_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/decoders/video_frames.hpp"
#include "stoker/ops/io/external_source.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "experimental.inputs.video";

// One fed video: its bytes (kept while it is decoded), the file open on them, and the batches it
// makes.
struct FedVideo {
  Batch bytes;
  codecs::VideoInfo info;
  std::optional<codecs::VideoFile> file;    // cpu: the decoder; mixed: NVDEC takes it over
  std::optional<codecs::NvdecVideo> nvdec;  // mixed: made at its first batch, on the device
  int64_t next = 0;                         // the next frame to output
  int64_t batches = 0;
};

// DALI's experimental.inputs.video: each video fed (pipe.feed_input, one per call) is cut into
// consecutive sequences of sequence_length frames, batch_size of them per run; its last batch
// holds what remains (the last sequence shorter, or zero-padded with 'pad'), and the next run
// goes on with the next video fed. run() waits for a video (the CPU stage runs ahead of the
// consumer); Python's run() refuses to wait for a batch no video fed makes (DALI's "no data"
// error) unless blocking=True.
class VideoInput : public Operator, public InputFeed {
 public:
  explicit VideoInput(const OpSpec& spec)
      : Operator(spec), length_(spec.arg<int64_t>("sequence_length")) {
    STOKER_ENFORCE(length_ >= 1, ValueError, kOp, ": sequence_length must be >= 1, got ", length_);
    const auto policy = spec.arg<std::string>("last_sequence_policy");
    STOKER_ENFORCE(policy == "partial" || policy == "pad", ValueError, kOp,
                   ": last_sequence_policy must be 'partial' or 'pad', got '", policy, "'");
    pad_ = policy == "pad";
  }

  void check(const Batch& batch) const override {
    const std::string who = detail::concat(kOp, " '", spec_.name, "'");
    STOKER_ENFORCE(batch.size() == 1, ValueError, who,
                   ": feed one video at a time (a batch of 1 "
                   "sample: its encoded bytes), got ",
                   batch.size(), " samples");
    STOKER_ENFORCE(batch.memory() != MemoryKind::kDevice, TypeError, who,
                   ": takes the encoded video in host memory, got GPU data");
    STOKER_ENFORCE(batch.dtype() == DType::kU8, TypeError, who,
                   ": expected the encoded video as uint8 bytes, got ", dtype_name(batch.dtype()));
  }

  void feed(Batch batch) override {
    check(batch);
    STOKER_ENFORCE(codecs::VideoFile::available(), RuntimeError, kOp,
                   ": stoker was built without FFmpeg: video cannot be read here");
    FedVideo v;
    v.bytes = std::move(batch);
    const auto* data = static_cast<const uint8_t*>(v.bytes.data(0));
    const std::string name = detail::concat(spec_.name, " feed ", fed_videos_);
    v.file.emplace(codecs::VideoFile::open({data, size_t(v.bytes.shape(0).volume())}, name));
    v.info = v.file->info();
    const auto& info = v.info;
    if (pad_)  // every sequence sequence_length frames, whatever the video holds
      check_arg_elements(
          kOp, "sequence_length",
          std::vector<double>{double(length_), double(info.height), double(info.width), 3.0});
    const int64_t sequences = (info.frames + length_ - 1) / length_;
    v.batches = (sequences + spec_.batch_size - 1) / spec_.batch_size;
    const int64_t batches = v.batches;
    queue_.push(std::move(v), batches);
    ++fed_videos_;
  }
  // The epoch ends where the videos fed run out, those fed after feed_end() included.
  void feed_end() override { queue_.finish(); }
  void discard_end() override { queue_.resume(); }
  void cancel() override { queue_.cancel(); }
  size_t queued() const override { return queue_.size(); }
  int64_t batches_fed() const override { return queue_.batches(); }

  void run(Workspace& ws) override {
    if (!current_) {
      current_ = queue_.take();
      if (!current_) throw EndOfData();
    }
    const auto& info = current_->info;
    // This batch's sequences: full ones, then the last, shorter or padded.
    std::vector<TensorShape> shapes;
    std::vector<int64_t> firsts, counts;
    int64_t next = current_->next;
    while (int(shapes.size()) < spec_.batch_size && next < info.frames) {
      const int64_t count = std::min(length_, info.frames - next);
      firsts.push_back(next), counts.push_back(count);
      shapes.push_back({pad_ ? length_ : count, info.height, info.width, 3});
      next += count;
    }
    Batch& out = add_output(ws, DType::kU8, shapes, TensorLayout("FHWC"));
    const int64_t frame = info.height * info.width * 3;
    for (size_t i = 0; i < shapes.size(); ++i) {
      auto* dst = static_cast<uint8_t*>(out.data(int(i)));
      decode(ws, firsts[i], counts[i], dst, frame);
      const int64_t padding = shapes[i][0] - counts[i];
      if (padding > 0) zero(ws, dst + counts[i] * frame, padding * frame);
    }
    current_->next = next;
    if (next >= info.frames) current_.reset();  // the next run takes the next video fed
  }

 protected:
  // Decodes frames [first, first + count) into `dst` (`frame` bytes apart).
  virtual void decode(Workspace& ws, int64_t first, int64_t count, uint8_t* dst, int64_t frame) = 0;
  virtual void zero(Workspace& ws, uint8_t* dst, int64_t bytes) = 0;

  std::optional<FedVideo> current_;  // the video being cut (the run thread's only)

 private:
  int64_t length_;
  bool pad_ = false;
  FeedQueue<FedVideo> queue_;
  int64_t fed_videos_ = 0;  // feed()'s only: numbers the videos in errors
};

class VideoInputCpu final : public VideoInput {
 public:
  using VideoInput::VideoInput;

 private:
  void decode(Workspace&, int64_t first, int64_t count, uint8_t* dst, int64_t frame) override {
    current_->file->decode(first, count, 1, [&](int64_t k, const codecs::VideoPlanes& p) {
      kernels::yuv_to_rgb_cpu(yuv_planes(p), true, false, dst + k * frame);
    });
  }
  void zero(Workspace&, uint8_t* dst, int64_t bytes) override {
    std::fill(dst, dst + bytes, uint8_t{0});
  }
};

#ifdef STOKER_HAVE_CUDA
// NVDEC into the batch's device memory, on the stage's stream.
class VideoInputMixed final : public VideoInput {
 public:
  using VideoInput::VideoInput;

 private:
  void decode(Workspace& ws, int64_t first, int64_t count, uint8_t* dst, int64_t frame) override {
    DeviceGuard device(ws.device_id);
    if (!current_->nvdec) {
      const auto why = codecs::nvdec_unavailable(ws.device_id, current_->info);
      STOKER_ENFORCE(why.empty(), RuntimeError, kOp, " (mixed) '", spec_.name, "': ", why);
      current_->nvdec.emplace(std::move(*current_->file), ws.device_id);
      current_->file.reset();
    }
    current_->nvdec->decode(
        first, count, 1, ws.stream, [&](int64_t k, const codecs::VideoPlanes& p) {
          cuda_check(kernels::yuv_to_rgb_gpu(yuv_planes(p), true, false, DType::kU8,
                                             dst + k * frame, ws.stream),
                     std::string(kOp) + " (mixed): converting a frame");
        });
  }
  void zero(Workspace& ws, uint8_t* dst, int64_t bytes) override {
    cuda_check(kernels::fill_bytes_gpu(dst, size_t(bytes), 0, ws.stream),
               std::string(kOp) + " (mixed): padding frames");
  }
};
#endif

}  // namespace

OpSchema video_input_schema() {
  return {
      .name = kOp,
      .doc =
          "Videos fed from Python (pipe.feed_input(name, [encoded_bytes]), one video a call), "
          "returned as consecutive sequences of sequence_length frames, batch_size of them per "
          "run (DALI's experimental.inputs.video): a long video streams through a few frames "
          "at a time. Its last batch holds what remains: the last sequence shorter "
          "(last_sequence_policy='partial') or zero-padded ('pad'); the next run goes on with "
          "the next video fed. Frames are F x H x W x 3 uint8 RGB (FHWC), converted as "
          "readers.video's; device='cpu' decodes with FFmpeg's libavcodec, 'mixed' with NVDEC "
          "into GPU memory. From Python, run() without a video for the batch raises, unless "
          "blocking=True (it then waits for one fed from another thread); no_copy=True uses "
          "the fed array without a copy.",
      .outputs = {"video"},
      .args =
          {
              {"sequence_length", ArgType::kInt, "Frames per sequence.", std::nullopt},
              {"last_sequence_policy", ArgType::kString,
               "'partial' (the last sequence of a video has the frames left) or 'pad' (it is "
               "sequence_length frames, the missing ones zero).",
               std::string("partial")},
          },
      .make_cpu = [](const OpSpec& s) { return std::make_unique<VideoInputCpu>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_mixed = [](const OpSpec& s) { return std::make_unique<VideoInputMixed>(s); },
#endif
      .external_input = true,
  };
}

}  // namespace stoker::ops
