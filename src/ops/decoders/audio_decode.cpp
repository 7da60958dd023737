#include "stoker/ops/decoders/audio_decode.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// A header's frame count is taken on trust when the decoded floats would take at most this many
// times the encoded bytes, plus kTrustedBytes: beyond (digital silence in FLAC, or a forged
// header), the frames are counted by decoding them before anything is allocated for them.
constexpr double kTrustedRatio = 1024;
constexpr double kTrustedBytes = double(int64_t(1) << 26);

}  // namespace

AudioDecodeArgs::AudioDecodeArgs(const OpSpec& spec, const char* op, bool resample)
    : dtype(dtype_from_name(spec.arg<std::string>("dtype"))),
      downmix(spec.arg<bool>("downmix")),
      resample(resample) {
  STOKER_ENFORCE(dtype == DType::kI16 || dtype == DType::kI32 || dtype == DType::kF32, TypeError,
                 op, ": dtype must be int16, int32 or float32, got ", dtype_name(dtype));
  if (resample) {  // DALI reads quality only to resample
    const double quality = double(float(spec.arg<double>("quality")));
    STOKER_ENFORCE(quality >= 0 && quality <= 100, ValueError, op,
                   ": quality must be in [0, 100], got ", quality);
    const int lobes = kernels::resample_lobes(quality);
    window = kernels::make_resample_window(lobes, kernels::resample_lookup_size(lobes));
  }
}

std::vector<ArgSchema> audio_decode_arg_schemas(bool downmix_default) {
  return {{"downmix", ArgType::kBool, "Average the channels into one: the output is 1-D (frames,).",
           downmix_default},
          {"dtype", ArgType::kDType, "int16, int32 or float32 (-1..1).", std::string("float32")},
          {"quality", ArgType::kFloat,
           "Resampling quality, 0 to 100 (audio_resample's): 3 lobes of the sinc at 0, 16 at "
           "50, 64 at 100.",
           50.0}};
}

AudioDecoding::AudioDecoding(const uint8_t* data, size_t size, const AudioDecodeArgs& args,
                             float target_rate, const char* op, int sample, AudioWindow window)
    : args_(args), op_(op), file_([&] {
        try {
          return codecs::AudioFile(data, size);
        } catch (const ValueError& e) {
          throw ValueError(detail::concat(op, ": ", e.what()));
        }
      }()) {
  const codecs::AudioInfo info = file_.info();
  if (args.resample) {
    target_rate_ = target_rate;
    STOKER_ENFORCE(target_rate_ >= 0, ValueError, op,
                   ": sample_rate must be non-negative (0: not resampled), got ", target_rate_);
  }
  const double claimed_bytes = double(info.frames) * info.channels * sizeof(float);
  if (claimed_bytes > kTrustedRatio * double(size) + kTrustedBytes) {
    const int64_t held = file_.count_frames(info.frames);
    STOKER_ENFORCE(held == info.frames, ValueError, op, ": the header claims ", info.frames,
                   " frames but the data holds ", held, " (truncated or corrupt)");
  }
  // In double until known to fit: a manifest may say anything.
  const double first = std::floor(window.offset * info.sample_rate);
  STOKER_ENFORCE(first >= 0 && first <= double(info.frames), ValueError, op, ": offset of ", first,
                 " frames is outside the file's ", info.frames, " frames");
  first_ = int64_t(first);
  frames_ = info.frames - first_;
  if (window.duration >= 0)
    frames_ = int64_t(std::min(double(frames_), std::floor(window.duration * info.sample_rate)));
  out_frames_ = frames_;
  if (resamples()) {
    const double frames = kernels::resampled_frames(frames_, info.sample_rate, target_rate_);
    // In int64 for the message, capped at 2^62 (still refused: far above the limit).
    const std::vector<int64_t> dims{int64_t(std::min(frames, 0x1p62)),
                                    args.downmix ? 1 : info.channels};
    check_arg_elements(op, "sample_rate", dims, sample, double(frames_) * info.channels);
    // The resampler's positions are ints (as DALI's).
    STOKER_ENFORCE(frames_ < (int64_t(1) << 31) - 256, ValueError, op, ": ", frames_,
                   " frames are too many to resample (at most 2^31 - 257)");
    out_frames_ = int64_t(frames);
  }
}

bool AudioDecoding::resamples() const {
  return args_.resample && target_rate_ > 0 && double(target_rate_) != file_.info().sample_rate;
}

TensorShape AudioDecoding::shape() const {
  return args_.downmix ? TensorShape{out_frames_}
                       : TensorShape{out_frames_, int64_t(file_.info().channels)};
}

float AudioDecoding::rate() const {
  return args_.resample ? target_rate_ : float(file_.info().sample_rate);
}

void AudioDecoding::decode(void* out) {
  if (args_.dtype == DType::kI16)
    decode_as(static_cast<int16_t*>(out));
  else if (args_.dtype == DType::kI32)
    decode_as(static_cast<int32_t*>(out));
  else
    decode_as(static_cast<float*>(out));
}

// Reads `frames` frames, failing as DALI's decoder does when the data holds fewer.
template <typename T>
void AudioDecoding::read(T* out, int64_t frames) {
  const int64_t got = file_.read(out, frames);
  STOKER_ENFORCE(got == frames, ValueError, op_, ": expected ", frames, " frames but decoded ", got,
                 " (truncated or corrupt data)");
}

// libsndfile converts to T itself when nothing else is done (as DALI reads); downmixing and
// resampling work on floats, converted to T at the end.
template <typename T>
void AudioDecoding::decode_as(T* out) {
  const codecs::AudioInfo& info = file_.info();
  const bool resample = resamples(), downmix = args_.downmix && info.channels > 1;
  if (frames_ == 0 || out_frames_ == 0) return;
  if (first_ > 0)
    STOKER_ENFORCE(file_.seek(first_), ValueError, op_, ": cannot seek to frame ", first_,
                   " (truncated or corrupt data)");
  if (!resample && !downmix) return read(out, frames_);
  std::vector<float> decoded(size_t(frames_ * info.channels));
  read(decoded.data(), frames_);
  if (!resample) return kernels::downmix_cpu(out, decoded.data(), frames_, info.channels);
  int channels = info.channels;
  if (downmix) {
    std::vector<float> mono(static_cast<size_t>(frames_));
    kernels::downmix_cpu(mono.data(), decoded.data(), frames_, info.channels);
    decoded = std::move(mono);
    channels = 1;
  }
  kernels::resample_cpu(out, out_frames_, target_rate_, decoded.data(), frames_, info.sample_rate,
                        channels, args_.window);
}

}  // namespace stoker::ops
