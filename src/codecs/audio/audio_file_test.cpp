#include "stoker/codecs/audio/audio_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_SNDFILE
#include <sndfile.h>
#endif

namespace stoker::codecs {
namespace {

#ifdef STOKER_HAVE_SNDFILE

// Files written by libsndfile itself, in memory.
struct Sink {
  std::vector<uint8_t> bytes;
  sf_count_t pos = 0;
};
sf_count_t sink_length(void* s) { return sf_count_t(static_cast<Sink*>(s)->bytes.size()); }
sf_count_t sink_seek(sf_count_t off, int whence, void* s) {
  auto* k = static_cast<Sink*>(s);
  k->pos = (whence == SEEK_SET   ? 0
            : whence == SEEK_CUR ? k->pos
                                 : sf_count_t(k->bytes.size())) +
           off;
  return k->pos;
}
sf_count_t sink_read(void* dst, sf_count_t n, void* s) {
  auto* k = static_cast<Sink*>(s);
  n = std::max<sf_count_t>(0, std::min<sf_count_t>(n, sf_count_t(k->bytes.size()) - k->pos));
  std::memcpy(dst, k->bytes.data() + k->pos, size_t(n));
  k->pos += n;
  return n;
}
sf_count_t sink_write(const void* src, sf_count_t n, void* s) {
  auto* k = static_cast<Sink*>(s);
  if (size_t(k->pos + n) > k->bytes.size()) k->bytes.resize(size_t(k->pos + n));
  std::memcpy(k->bytes.data() + k->pos, src, size_t(n));
  k->pos += n;
  return n;
}
sf_count_t sink_tell(void* s) { return static_cast<Sink*>(s)->pos; }

std::vector<uint8_t> encode(const std::vector<float>& samples, int channels, int rate, int format) {
  Sink sink;
  SF_VIRTUAL_IO io = {&sink_length, &sink_seek, &sink_read, &sink_write, &sink_tell};
  SF_INFO info{};
  info.channels = channels;
  info.samplerate = rate;
  info.format = format;
  SNDFILE* f = sf_open_virtual(&io, SFM_WRITE, &info, &sink);
  EXPECT_NE(f, nullptr) << sf_strerror(nullptr);
  if (!f) return {};
  sf_writef_float(f, samples.data(), sf_count_t(samples.size()) / channels);
  sf_close(f);
  return sink.bytes;
}

std::vector<float> ramp(int64_t frames, int channels) {
  std::vector<float> v(size_t(frames * channels));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = float(std::sin(double(k) * 0.01) * 0.8 + (k % 3 == 0 ? 0.05 : -0.05));
  return v;
}

TEST(AudioFile, PcmWavDecodesExactlyInEveryType) {
  const auto src = ramp(1000, 2);
  const auto wav = encode(src, 2, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  AudioFile f(wav.data(), wav.size());
  EXPECT_EQ(f.info().frames, 1000);
  EXPECT_EQ(f.info().channels, 2);
  EXPECT_EQ(f.info().sample_rate, 16000);
  std::vector<int16_t> s16(2000);
  ASSERT_EQ(f.read(s16.data(), 1000), 1000);
  int16_t after[2];
  EXPECT_EQ(f.read(after, 1), 0);  // the end
  AudioFile g(wav.data(), wav.size());
  std::vector<float> fl(2000);
  ASSERT_EQ(g.read(fl.data(), 1000), 1000);
  AudioFile h(wav.data(), wav.size());
  std::vector<int32_t> s32(2000);
  ASSERT_EQ(h.read(s32.data(), 1000), 1000);
  for (size_t k = 0; k < s16.size(); ++k) {
    // libsndfile's conventions: float = int16 / 2^15, int32 = int16 << 16.
    ASSERT_EQ(fl[k], float(s16[k]) / 32768.0f) << k;
    ASSERT_EQ(s32[k], int32_t(s16[k]) * 65536) << k;
    ASSERT_NEAR(float(s16[k]) / 32768.0f, src[k], 2.0 / 32768) << k;  // written as v * 32767
  }
}

TEST(AudioFile, FlacIsLosslessAndVorbisClose) {
  const auto src = ramp(3000, 1);
  const auto flac = encode(src, 1, 22050, SF_FORMAT_FLAC | SF_FORMAT_PCM_16);
  const auto wav = encode(src, 1, 22050, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  AudioFile a(flac.data(), flac.size()), b(wav.data(), wav.size());
  std::vector<int16_t> x(3000), y(3000);
  ASSERT_EQ(a.read(x.data(), 3000), 3000);
  ASSERT_EQ(b.read(y.data(), 3000), 3000);
  EXPECT_EQ(x, y);
  const auto ogg = encode(src, 1, 22050, SF_FORMAT_OGG | SF_FORMAT_VORBIS);
  AudioFile c(ogg.data(), ogg.size());
  EXPECT_EQ(c.info().frames, 3000);
  std::vector<float> z(3000);
  ASSERT_EQ(c.read(z.data(), 3000), 3000);
  double err = 0;
  for (size_t k = 0; k < z.size(); ++k) err += std::abs(double(z[k]) - src[k]);
  EXPECT_LT(err / 3000, 0.02);
}

TEST(AudioFile, DataItDoesNotRecogniseIsRefusedWithLibsndfilesReason) {
  const std::vector<uint8_t> junk(100, 'x');
  try {
    AudioFile f(junk.data(), junk.size());
    FAIL() << "junk opened";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "cannot open the data as audio: Format not recognised.");
  }
  EXPECT_THROW(AudioFile(junk.data(), 0), ValueError);
}

// A FLAC whose header claims 2^33 frames over 3000 frames of data: the claim is not allocated
// for; count_frames finds what the data holds, with a fixed buffer, and reopens at the start.
TEST(AudioFile, CountFramesFindsWhatAFalseHeaderHides) {
  auto flac = encode(ramp(3000, 2), 2, 8000, SF_FORMAT_FLAC | SF_FORMAT_PCM_16);
  // STREAMINFO follows "fLaC" and its 4-byte block header; total samples are its bytes 13-17
  // (the low 4 bits of byte 13, then 32 bits).
  ASSERT_EQ(std::memcmp(flac.data(), "fLaC", 4), 0);
  uint8_t* si = flac.data() + 8;
  si[13] = uint8_t((si[13] & 0xF0) | 0x2);
  si[14] = si[15] = si[16] = si[17] = 0;
  AudioFile f(flac.data(), flac.size());
  EXPECT_EQ(f.info().frames, int64_t(1) << 33);
  EXPECT_EQ(f.count_frames(f.info().frames), 3000);
  std::vector<float> out(2 * 3000);
  EXPECT_EQ(f.read(out.data(), 3000), 3000);  // from the start again
  EXPECT_EQ(f.count_frames(100), 0);          // counted from the end of the data
  EXPECT_EQ(f.read(out.data(), 100), 100);    // and reopened
}

TEST(AudioFile, Mp3IsRefusedSayingWhy) {
  const auto mp3 = encode(ramp(4000, 1), 1, 16000, SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III);
  if (mp3.empty()) GTEST_SKIP() << "this libsndfile writes no MP3";
  try {
    AudioFile f(mp3.data(), mp3.size());
    FAIL() << "MP3 opened";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("MPEG audio (MP3) is not decoded"), std::string::npos)
        << e.what();
  }
}

TEST(AudioFile, TruncatedDataReadsWhatIsThere) {
  const auto wav = encode(ramp(1000, 1), 1, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  AudioFile f(wav.data(), 44 + 200);  // the header and 100 frames
  EXPECT_EQ(f.info().frames, 100);    // libsndfile sizes a WAV's data by the file
}

#endif

TEST(AudioFile, AvailabilityIsReported) {
#ifdef STOKER_HAVE_SNDFILE
  EXPECT_TRUE(audio_available());
#else
  EXPECT_FALSE(audio_available());
  const uint8_t byte = 0;
  EXPECT_THROW(AudioFile(&byte, 1), ValueError);
#endif
}

}  // namespace
}  // namespace stoker::codecs
