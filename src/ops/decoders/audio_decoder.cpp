#include "stoker/ops/decoders/audio_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "stoker/codecs/audio/audio_file.hpp"
#include "stoker/kernels/signal/resample.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "decoders.audio";

// A header's frame count is taken on trust when the decoded floats would take at most this many
// times the encoded bytes, plus kTrustedBytes: beyond (digital silence in FLAC, or a forged
// header), the frames are counted by decoding them before anything is allocated for them.
constexpr double kTrustedRatio = 1024;
constexpr double kTrustedBytes = double(int64_t(1) << 26);

class AudioDecoder final : public Operator {
 public:
  explicit AudioDecoder(const OpSpec& spec)
      : Operator(spec),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))),
        downmix_(spec.arg<bool>("downmix")),
        resample_(spec.given("sample_rate")) {
    STOKER_ENFORCE(dtype_ == DType::kI16 || dtype_ == DType::kI32 || dtype_ == DType::kF32,
                   TypeError, kOp, ": dtype must be int16, int32 or float32, got ",
                   dtype_name(dtype_));
    if (resample_) {  // DALI reads quality only to resample
      const double quality = double(float(spec.arg<double>("quality")));
      STOKER_ENFORCE(quality >= 0 && quality <= 100, ValueError, kOp,
                     ": quality must be in [0, 100], got ", quality);
      const int lobes = kernels::resample_lobes(quality);
      window_ = kernels::make_resample_window(lobes, kernels::resample_lookup_size(lobes));
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, kOp,
                   ": expected encoded audio as uint8 bytes, got ", dtype_name(in.dtype()));
    std::vector<Sample> samples(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) { samples[size_t(i)] = open(ws, in, i); });
    std::vector<TensorShape> shapes, scalars(static_cast<size_t>(n));
    for (const Sample& s : samples) {
      const int64_t channels = s.file ? s.file->info().channels : 0;
      shapes.push_back(downmix_ ? TensorShape{s.out_frames} : TensorShape{s.out_frames, channels});
    }
    Batch& audio = add_output(ws, dtype_, std::move(shapes), TensorLayout());
    Batch& rates = add_output(ws, DType::kF32, std::move(scalars), TensorLayout());
    for_each_sample(ws, n, [&](int i, int) {
      Sample& s = samples[size_t(i)];
      if (dtype_ == DType::kI16)
        decode(s, audio.data_as<int16_t>(i));
      else if (dtype_ == DType::kI32)
        decode(s, audio.data_as<int32_t>(i));
      else
        decode(s, audio.data_as<float>(i));
      *rates.data_as<float>(i) = resample_ ? s.target_rate : float(s.file->info().sample_rate);
    });
  }

 private:
  struct Sample {
    std::optional<codecs::AudioFile> file;
    float target_rate = 0;  // as given (resample_); resampled when positive and not the file's
    int64_t out_frames = 0;
  };

  bool resamples(const Sample& s) const {
    return resample_ && s.target_rate > 0 && double(s.target_rate) != s.file->info().sample_rate;
  }

  Sample open(const Workspace& ws, const Batch& in, int i) const {
    STOKER_ENFORCE(in.shape(i).ndim() == 1, ValueError, kOp, ": expected 1-D encoded bytes, got ",
                   in.shape(i).ndim(), " dimensions");
    Sample s;
    const size_t size = size_t(in.shape(i)[0]);
    try {
      s.file.emplace(static_cast<const uint8_t*>(in.data(i)), size);
    } catch (const ValueError& e) {
      throw ValueError(detail::concat(kOp, ": ", e.what()));
    }
    const codecs::AudioInfo info = s.file->info();
    if (resample_) {
      s.target_rate = float(scalar_arg(ws, "sample_rate", i));
      STOKER_ENFORCE(s.target_rate >= 0, ValueError, kOp,
                     ": sample_rate must be non-negative (0: not resampled), got ", s.target_rate);
    }
    const double claimed_bytes = double(info.frames) * info.channels * sizeof(float);
    if (claimed_bytes > kTrustedRatio * double(size) + kTrustedBytes) {
      const int64_t held = s.file->count_frames(info.frames);
      STOKER_ENFORCE(held == info.frames, ValueError, kOp, ": the header claims ", info.frames,
                     " frames but the data holds ", held, " (truncated or corrupt)");
    }
    s.out_frames = info.frames;
    if (resamples(s)) {
      const double frames = kernels::resampled_frames(info.frames, info.sample_rate, s.target_rate);
      // In int64 for the message, capped at 2^62 (still refused: far above the limit).
      const std::vector<int64_t> dims{int64_t(std::min(frames, 0x1p62)),
                                      downmix_ ? 1 : info.channels};
      check_arg_elements(kOp, "sample_rate", dims, i, double(info.frames) * info.channels);
      // The resampler's positions are ints (as DALI's).
      STOKER_ENFORCE(info.frames < (int64_t(1) << 31) - 256, ValueError, kOp, ": ", info.frames,
                     " frames are too many to resample (at most 2^31 - 257)");
      s.out_frames = int64_t(frames);
    }
    return s;
  }

  // Reads `frames` frames, failing as DALI's decoder does when the data holds fewer.
  template <typename T>
  static void read(codecs::AudioFile& file, T* out, int64_t frames) {
    const int64_t got = file.read(out, frames);
    STOKER_ENFORCE(got == frames, ValueError, kOp, ": expected ", frames, " frames but decoded ",
                   got, " (truncated or corrupt data)");
  }

  // libsndfile converts to T itself when nothing else is done (as DALI reads); downmixing and
  // resampling work on floats, converted to T at the end.
  template <typename T>
  void decode(Sample& s, T* out) const {
    const codecs::AudioInfo& info = s.file->info();
    const bool resample = resamples(s), downmix = downmix_ && info.channels > 1;
    if (info.frames == 0 || s.out_frames == 0) return;
    if (!resample && !downmix) return read(*s.file, out, info.frames);
    std::vector<float> decoded(size_t(info.frames * info.channels));
    read(*s.file, decoded.data(), info.frames);
    if (!resample) return kernels::downmix_cpu(out, decoded.data(), info.frames, info.channels);
    int channels = info.channels;
    if (downmix) {
      std::vector<float> mono(size_t(info.frames));
      kernels::downmix_cpu(mono.data(), decoded.data(), info.frames, info.channels);
      decoded = std::move(mono);
      channels = 1;
    }
    kernels::resample_cpu(out, s.out_frames, s.target_rate, decoded.data(), info.frames,
                          info.sample_rate, channels, window_);
  }

  DType dtype_;
  bool downmix_, resample_;
  kernels::ResampleWindow window_;
};

}  // namespace

OpSchema audio_decoder_schema() {
  return {
      .name = "decoders.audio",
      .doc =
          "Decodes audio files given as bytes (a 1-D uint8 tensor per sample, e.g. from "
          "readers.file) with libsndfile, as DALI's: WAV (PCM 8/16/24/32-bit, float, double, "
          "A-law, mu-law, ADPCM, GSM), FLAC, Ogg Vorbis and Opus, AIFF, AU, CAF, W64 and the "
          "other formats libsndfile reads; MP3 is refused, as DALI's libsndfile has none (and "
          "libsndfile sizes an MP3 without a Xing/Info header by an estimate). Outputs: the "
          "waveform, (frames, channels) with channels "
          "interleaved, or (frames,) when downmixed, no layout; and the sampling rate in Hz as "
          "a float32 scalar (sample_rate's value when given). int16 and int32 are libsndfile's "
          "conversions (full scale); float32 is -1..1 (int samples divided by 2^(bits-1)). "
          "Downmixing averages the channels; resampling is audio_resample's (both on floats, "
          "then scaled to the output type with rounding). Data libsndfile does not recognise, "
          "or holding fewer frames than its header claims, raises an error naming the sample "
          "and file. A header claiming far more than the data can hold (decoded floats above "
          "1024 times the encoded size plus 64 MiB) is checked by decoding before the output "
          "is allocated.",
      .inputs = {"input"},
      .outputs = {"audio", "sample_rate"},
      .args = {{"downmix", ArgType::kBool,
                "Average the channels into one: the output is 1-D (frames,).", false},
               {"dtype", ArgType::kDType, "int16, int32 or float32 (-1..1).",
                std::string("float32")},
               optional_arg("sample_rate", ArgType::kFloat,
                            "Resample to this rate (Hz) when it differs from the file's; 0 "
                            "leaves the audio as it is. The rate output then reports this "
                            "value."),
               {"quality", ArgType::kFloat,
                "Resampling quality, 0 to 100 (audio_resample's): 3 lobes of the sinc at 0, 16 "
                "at 50, 64 at 100.",
                50.0}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<AudioDecoder>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = ""},
      .deprecated_names = {"audio_decoder"},
  };
}

}  // namespace stoker::ops
