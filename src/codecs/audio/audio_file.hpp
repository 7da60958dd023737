// Audio decoding on the CPU with libsndfile, from encoded bytes in memory (decoders.audio):
// every format libsndfile reads — WAV (PCM 8/16/24/32, float, double, A-law, mu-law, ADPCM,
// GSM), FLAC, Ogg Vorbis and Opus, AIFF, AU, CAF, W64, RF64 and others. MPEG audio (MP3) is
// refused: Debian's libsndfile reads it (mpg123) but sizes a file without a Xing/Info header by
// an estimate and stops reading there (DALI's libsndfile has no MP3). Samples come out
// interleaved, in int16, int32 or float, converted by libsndfile as DALI's decoder reads them
// (floats normalised to -1..1 by 1 / 2^(bits-1)). Optional at build time (libsndfile found with
// pkg-config); without it every open is refused saying so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace stoker::codecs {

// Whether this build decodes audio (libsndfile found at configure time).
bool audio_available();

struct AudioInfo {
  int64_t frames = 0;  // as the header (or libsndfile's scan of the data) gives it
  int channels = 0;
  int sample_rate = 0;  // Hz
};

class AudioFile {
 public:
  // Opens `size` bytes at `data` (kept alive and unchanged by the caller while this is open).
  // Throws ValueError "cannot open the data as audio: <libsndfile's reason>" for data libsndfile
  // does not recognise or finds malformed, and for no channels or a rate below 1 Hz; MP3 is
  // refused saying why.
  AudioFile(const uint8_t* data, size_t size);
  ~AudioFile();
  AudioFile(AudioFile&&) noexcept;
  AudioFile& operator=(AudioFile&&) noexcept;
  AudioFile(const AudioFile&) = delete;
  AudioFile& operator=(const AudioFile&) = delete;

  const AudioInfo& info() const;
  // Reads up to `frames` frames (frames x channels interleaved samples) into `out`; returns how
  // many were read (fewer at the end of the data, or where it is corrupt or truncated).
  int64_t read(int16_t* out, int64_t frames);
  int64_t read(int32_t* out, int64_t frames);
  int64_t read(float* out, int64_t frames);
  // Moves to frame `frame` (0 <= frame <= info().frames); false when the data cannot get there.
  bool seek(int64_t frame);
  // The frames the data really holds, up to `limit`: decodes them from the current position into
  // a small buffer (memory independent of the header's claim), then reopens the data at its
  // start. For headers whose frame count has not been checked against the data's size.
  int64_t count_frames(int64_t limit);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::codecs
