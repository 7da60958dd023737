// libFuzzer target: audio decoding (libsndfile behind codecs::AudioFile: WAV and its codecs,
// FLAC, Ogg Vorbis/Opus, MP3, AIFF and the rest, detected from the bytes) must give samples or a
// stoker::ValueError for any input, in every sample type, with decoders.audio's check of the
// header's frame count (counted by decoding, without allocating for the claim); the decoded
// floats then go through its downmix and resampling kernels.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/audio/audio_file.hpp"
#include "stoker/core/error.hpp"
#include "stoker/kernels/signal/resample.hpp"

namespace {

constexpr int64_t kMaxFrames = int64_t(1) << 16;  // small: many executions per second

template <typename T>
void read_all(stoker::codecs::AudioFile& f, int64_t frames) {
  std::vector<T> out(size_t(frames * f.info().channels));
  f.read(out.data(), frames);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  try {
    codecs::AudioFile f(data, size);
    const codecs::AudioInfo info = f.info();
    // A claim is believed only up to what the data holds (decoders.audio counts beyond a ratio).
    const int64_t frames = f.count_frames(std::min(info.frames, kMaxFrames));
    if (frames == 0 || info.channels > 64) return 0;
    read_all<int16_t>(f, frames);
    codecs::AudioFile g(data, size);
    read_all<int32_t>(g, frames);
    codecs::AudioFile h(data, size);
    std::vector<float> decoded(size_t(frames * info.channels));
    const int64_t got = h.read(decoded.data(), frames);
    std::vector<float> mono(static_cast<size_t>(got));
    kernels::downmix_cpu(mono.data(), decoded.data(), got, info.channels);
    const auto window = kernels::make_resample_window(3, kernels::resample_lookup_size(3));
    const double out_rate = 8000 + double(size % 7) * 3001;
    const int64_t out_frames = kernels::resampled_length(got, info.sample_rate, out_rate);
    if (out_frames > 4 * kMaxFrames) return 0;
    std::vector<int16_t> resampled(size_t(out_frames * info.channels));
    kernels::resample_cpu(resampled.data(), out_frames, out_rate, decoded.data(), got,
                          info.sample_rate, info.channels, window);
  } catch (const ValueError&) {
  }
  return 0;
}
