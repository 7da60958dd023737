#include "stoker/codecs/audio/audio_file.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_SNDFILE
#include <sndfile.h>
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_SNDFILE

bool audio_available() { return true; }

namespace {

struct Memory {
  const uint8_t* data = nullptr;
  sf_count_t size = 0, pos = 0;
};

// libsndfile's virtual I/O over the bytes in memory (its "file"): reads stop at the end, seeks
// outside it fail.
sf_count_t length_proc(void* self) { return static_cast<Memory*>(self)->size; }

sf_count_t seek_proc(sf_count_t offset, int whence, void* self) {
  auto* s = static_cast<Memory*>(self);
  const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->pos : s->size;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return -1;
  if (offset < -base || offset > s->size - base) return -1;
  s->pos = base + offset;
  return s->pos;
}

sf_count_t read_proc(void* dst, sf_count_t count, void* self) {
  auto* s = static_cast<Memory*>(self);
  const sf_count_t n = std::clamp<sf_count_t>(count, 0, s->size - s->pos);
  if (n > 0) std::memcpy(dst, s->data + s->pos, size_t(n));
  s->pos += n;
  return n;
}

sf_count_t tell_proc(void* self) { return static_cast<Memory*>(self)->pos; }

// libsndfile reports a failed open through one process-wide error number: opens are serialised
// so that each failure reads its own reason (opening parses headers only; decoding is not).
std::mutex& open_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

struct AudioFile::State {
  Memory memory;
  SNDFILE* file = nullptr;
  AudioInfo info;

  ~State() { close(); }
  void close() {
    if (file) sf_close(file);
    file = nullptr;
  }
  void open();
};

void AudioFile::State::open() {
  SF_VIRTUAL_IO io = {&length_proc, &seek_proc, &read_proc, nullptr, &tell_proc};
  SF_INFO sf_info{};
  memory.pos = 0;
  {
    std::lock_guard<std::mutex> lock(open_mutex());
    file = sf_open_virtual(&io, SFM_READ, &sf_info, &memory);
    if (!file)
      throw ValueError(std::string("cannot open the data as audio: ") + sf_strerror(nullptr));
  }
  if ((sf_info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_MPEG) {
    close();
    throw ValueError(
        "MPEG audio (MP3) is not decoded, as DALI 2.4's libsndfile does not: libsndfile takes "
        "the length of an MP3 without a Xing/Info header from an estimate and stops reading "
        "there, which would cut such files short");
  }
  if (sf_info.channels < 1 || sf_info.samplerate < 1) {
    close();
    throw ValueError(detail::concat("cannot open the data as audio: ", sf_info.channels,
                                    " channels at ", sf_info.samplerate,
                                    " Hz (expected at least 1 channel and 1 Hz)"));
  }
  info = {int64_t(std::max<sf_count_t>(sf_info.frames, 0)), sf_info.channels, sf_info.samplerate};
}

AudioFile::AudioFile(const uint8_t* data, size_t size) : state_(std::make_unique<State>()) {
  state_->memory = {data, sf_count_t(size)};
  state_->open();
}

int64_t AudioFile::read(int16_t* out, int64_t frames) {
  return sf_readf_short(state_->file, out, frames);
}
int64_t AudioFile::read(int32_t* out, int64_t frames) {
  return sf_readf_int(state_->file, out, frames);
}
int64_t AudioFile::read(float* out, int64_t frames) {
  return sf_readf_float(state_->file, out, frames);
}

bool AudioFile::seek(int64_t frame) { return sf_seek(state_->file, frame, SEEK_SET) == frame; }

int64_t AudioFile::count_frames(int64_t limit) {
  constexpr int64_t kChunk = 4096;
  std::vector<float> buffer(size_t(kChunk * state_->info.channels));
  int64_t total = 0;
  while (total < limit) {
    const int64_t got = read(buffer.data(), std::min(kChunk, limit - total));
    if (got <= 0) break;
    total += got;
  }
  state_->close();
  state_->open();
  return total;
}

#else

bool audio_available() { return false; }

struct AudioFile::State {
  AudioInfo info;
};

AudioFile::AudioFile(const uint8_t*, size_t) {
  throw ValueError(
      "cannot open the data as audio: stoker was built without libsndfile (audio decoding); "
      "install libsndfile1-dev and rebuild");
}
int64_t AudioFile::read(int16_t*, int64_t) { return 0; }
int64_t AudioFile::read(int32_t*, int64_t) { return 0; }
int64_t AudioFile::read(float*, int64_t) { return 0; }
bool AudioFile::seek(int64_t) { return false; }
int64_t AudioFile::count_frames(int64_t) { return 0; }

#endif

AudioFile::~AudioFile() = default;
AudioFile::AudioFile(AudioFile&&) noexcept = default;
AudioFile& AudioFile::operator=(AudioFile&&) noexcept = default;
const AudioInfo& AudioFile::info() const { return state_->info; }

}  // namespace stoker::codecs
