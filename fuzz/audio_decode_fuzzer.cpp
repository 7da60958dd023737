// libFuzzer targets: audio decoding (libsndfile behind codecs::AudioFile: WAV and its codecs,
// FLAC, Ogg Vorbis/Opus, MP3, AIFF and the rest, detected from the bytes; audio_decode takes
// them all, audio_wav, audio_flac and audio_ogg one container each) must give samples or a
// stoker::ValueError for any input, in every sample type, with decoders.audio's check of the
// header's frame count (counted by decoding, without allocating for the claim); the decoded
// floats then go through its downmix and resampling kernels.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
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

// Built as audio_wav, audio_flac and audio_ogg (fuzz/CMakeLists.txt): one container each.
bool container_taken(const uint8_t* data, size_t size) {
  auto starts = [&](const char* magic) {
    const size_t n = std::char_traits<char>::length(magic);
    return size >= n && std::equal(magic, magic + n, reinterpret_cast<const char*>(data));
  };
#if defined(STOKER_FUZZ_AUDIO_wav)
  return starts("RIFF") || starts("RF64");
#elif defined(STOKER_FUZZ_AUDIO_flac)
  return starts("fLaC");
#elif defined(STOKER_FUZZ_AUDIO_ogg)
  return starts("OggS");
#else
  (void)starts;
  return true;
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  if (!container_taken(data, size)) return 0;
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
