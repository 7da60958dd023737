// Decoding one audio sample as decoders.audio and readers.nemo_asr do (DALI's decoders.audio and
// NemoAsrReader share their decoding too): libsndfile's frames, optionally a window of them
// (a NeMo manifest's offset and duration), downmixed and resampled with audio_resample's kernel,
// in int16, int32 or float32.
#pragma once

#include <cstdint>
#include <optional>

#include "stoker/codecs/audio/audio_file.hpp"
#include "stoker/core/tensor.hpp"
#include "stoker/kernels/signal/resample.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

// The decoding arguments: dtype, downmix and, when `resample`, quality.
struct AudioDecodeArgs {
  AudioDecodeArgs(const OpSpec& spec, const char* op, bool resample);
  DType dtype;
  bool downmix;
  bool resample;  // to a sample_rate given
  kernels::ResampleWindow window;
};

// The schema entries of downmix, dtype and quality (`downmix_default` differs: DALI's decoder
// leaves the channels, its NeMo reader averages them); sample_rate differs more (a tensor
// argument of the decoder, a plain one of the reader), each operator declares its own.
std::vector<ArgSchema> audio_decode_arg_schemas(bool downmix_default);

// A window of an audio file, in seconds (a NeMo manifest's offset and duration): converted to
// frames of the file's rate rounded down, as DALI's NemoAsrLoader; a negative duration reads to
// the end.
struct AudioWindow {
  double offset = 0;
  double duration = -1;
};

class AudioDecoding {
 public:
  // Opens `size` bytes at `data` (kept alive by the caller until decode()) and plans the output:
  // `target_rate` is the rate to resample to when args.resample (0: the file's). Throws
  // ValueError starting with `op` for data that is not audio, a header claiming more frames than
  // the data can hold, a window outside the file, or an output too large.
  AudioDecoding(const uint8_t* data, size_t size, const AudioDecodeArgs& args, float target_rate,
                const char* op, int sample, AudioWindow window = {});

  TensorShape shape() const;
  // The output's rate (Hz): target_rate when resampling was asked for, else the file's.
  float rate() const;
  // Decodes into `out` (shape() elements of args.dtype).
  void decode(void* out);

 private:
  template <typename T>
  void decode_as(T* out);
  template <typename T>
  void read(T* out, int64_t frames);
  bool resamples() const;

  const AudioDecodeArgs& args_;
  const char* op_;
  codecs::AudioFile file_;
  float target_rate_ = 0;
  int64_t first_ = 0, frames_ = 0;  // the window read from the file
  int64_t out_frames_ = 0;
};

}  // namespace stoker::ops
