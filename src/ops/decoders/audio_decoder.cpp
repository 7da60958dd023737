#include "stoker/ops/decoders/audio_decoder.hpp"

#include <optional>
#include <vector>

#include "stoker/ops/decoders/audio_decode.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "decoders.audio";

class AudioDecoder final : public Operator {
 public:
  explicit AudioDecoder(const OpSpec& spec)
      : Operator(spec), args_(spec, kOp, spec.given("sample_rate")) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, kOp,
                   ": expected encoded audio as uint8 bytes, got ", dtype_name(in.dtype()));
    std::vector<std::optional<AudioDecoding>> samples(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) {
      STOKER_ENFORCE(in.shape(i).ndim() == 1, ValueError, kOp, ": expected 1-D encoded bytes, got ",
                     in.shape(i).ndim(), " dimensions");
      const float rate = args_.resample ? float(scalar_arg(ws, "sample_rate", i)) : 0.f;
      samples[size_t(i)].emplace(static_cast<const uint8_t*>(in.data(i)), size_t(in.shape(i)[0]),
                                 args_, rate, kOp, i);
    });
    std::vector<TensorShape> shapes, scalars(static_cast<size_t>(n));
    for (const auto& s : samples) shapes.push_back(s->shape());
    Batch& audio = add_output(ws, args_.dtype, std::move(shapes), TensorLayout());
    Batch& rates = add_output(ws, DType::kF32, std::move(scalars), TensorLayout());
    for_each_sample(ws, n, [&](int i, int) {
      samples[size_t(i)]->decode(audio.data(i));
      *rates.data_as<float>(i) = samples[size_t(i)]->rate();
    });
  }

 private:
  AudioDecodeArgs args_;
};

}  // namespace

OpSchema audio_decoder_schema() {
  OpSchema s{
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
      .args = audio_decode_arg_schemas(false),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<AudioDecoder>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = ""},
      .deprecated_names = {"audio_decoder"},
  };
  s.args.push_back(optional_arg("sample_rate", ArgType::kFloat,
                                "Resample to this rate (Hz) when it differs from the file's; 0 "
                                "leaves the audio as it is. The rate output then reports this "
                                "value."));
  return s;
}

}  // namespace stoker::ops
