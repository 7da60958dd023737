// VideoFile against the ffmpeg command-line tool: videos made by it here (H.264 with B-frames
// and odd sizes, HEVC, VP9, MPEG-4 Part 2; mp4, mkv, webm, avi), frames decoded by number in
// any order equal to its own decode of the whole file (rawvideo planes in the stream's pixel
// format: decoders are bit-exact, so any difference is ours), the index's frame count,
// key frames and frame rate as made, and bad files refused by name. Skipped (with a message) where
// stoker was built without FFmpeg or the ffmpeg tool is missing.
#include "stoker/codecs/video/video_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "stoker/core/error.hpp"

namespace stoker::codecs {
namespace {

namespace fs = std::filesystem;

class VideoFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!VideoFile::available())
      GTEST_SKIP() << "stoker was built without FFmpeg: video is not available";
    if (std::system("ffmpeg -version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "the ffmpeg tool is not installed (scripts/setup installs it)";
    dir_ = fs::temp_directory_path() / ("stoker_video_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Runs ffmpeg with `args` writing `name` in the test folder; returns its path.
  std::string make(const std::string& name, const std::string& args) {
    const std::string path = (dir_ / name).string();
    const std::string cmd = "ffmpeg -v error -y " + args + " " + path + " > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return path;
  }
  static std::vector<uint8_t> bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  // The ffmpeg tool's own decode of every frame, planes packed (Y, Cb, Cr) in `pix_fmt`.
  std::vector<uint8_t> reference(const std::string& path, const std::string& pix_fmt) {
    const std::string out = path + ".yuv";
    const std::string cmd = "ffmpeg -v error -y -i " + path +
                            " -vsync passthrough -f rawvideo -pix_fmt " + pix_fmt + " " + out +
                            " > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return bytes(out);
  }
  // A decoded frame's planes packed as rawvideo packs them.
  static std::vector<uint8_t> pack(const VideoPlanes& p) {
    std::vector<uint8_t> out;
    for (int c = 0; c < 3; ++c) {
      const int64_t w = c == 0 ? p.width : (p.width + (1 << p.shift_x) - 1) >> p.shift_x;
      const int64_t h = c == 0 ? p.height : (p.height + (1 << p.shift_y) - 1) >> p.shift_y;
      const int step = c == 0 ? 1 : p.uv_step;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) out.push_back(p.data[c][y * p.pitch[c] + x * step]);
    }
    return out;
  }
  // Frames first, first + stride, ... decoded and packed, back to back.
  static std::vector<uint8_t> decode(VideoFile& v, int64_t first, int64_t count, int64_t stride) {
    std::vector<uint8_t> out;
    v.decode(first, count, stride, [&](int64_t, const VideoPlanes& p) {
      auto f = pack(p);
      out.insert(out.end(), f.begin(), f.end());
    });
    return out;
  }

  fs::path dir_;
};

// 30 frames of a moving test pattern.
constexpr const char* kSource = "-f lavfi -i testsrc2=size=96x70:rate=25:duration=1.2";

TEST_F(VideoFileTest, IndexesH264WithBFramesAndDecodesFramesInAnyOrder) {
  const auto path =
      make("a.mp4", std::string(kSource) + " -c:v libx264 -g 10 -bf 3 -pix_fmt yuv420p");
  const auto data = bytes(path);
  auto video = VideoFile::open(data, path);
  const auto& info = video.info();
  EXPECT_EQ(info.codec, "h264");
  EXPECT_EQ(info.width, 96);
  EXPECT_EQ(info.height, 70);
  ASSERT_EQ(info.frames, 30);
  EXPECT_EQ(info.fps_num / info.fps_den, 25);
  EXPECT_FALSE(info.variable_frame_rate);
  EXPECT_TRUE(video.key()[0] && video.key()[10] && video.key()[20]);
  EXPECT_FALSE(video.key()[5]);

  const auto ref = reference(path, "yuv420p");
  const size_t frame = size_t(96 * 70 + 2 * 48 * 35);
  ASSERT_EQ(ref.size(), 30 * frame);
  EXPECT_EQ(decode(video, 0, 30, 1), ref) << "every frame in order";
  // Opened again with the first open's index: no scan, the same frames.
  auto again = VideoFile::open(data, path, video.index());
  EXPECT_EQ(again.index(), video.index());
  EXPECT_EQ(decode(again, 3, 7, 4), decode(video, 3, 7, 4));
  // Backwards, across key frames, strided: each equal to the same frame of the whole decode.
  for (auto [first, count, stride] : std::vector<std::array<int64_t, 3>>{
           {27, 1, 1}, {3, 1, 1}, {3, 7, 4}, {9, 3, 1}, {0, 2, 29}, {28, 2, 1}}) {
    const auto part = decode(video, first, count, stride);
    ASSERT_EQ(part.size(), size_t(count) * frame);
    for (int64_t k = 0; k < count; ++k) {
      const auto* want = ref.data() + size_t(first + k * stride) * frame;
      EXPECT_TRUE(std::equal(want, want + frame, part.data() + size_t(k) * frame))
          << "frame " << first + k * stride;
    }
  }
}

TEST_F(VideoFileTest, OtherCodecsAndContainers) {
  struct Case {
    const char* name;
    const char* args;
    const char* codec;
    const char* pix_fmt;
    size_t frame;  // bytes of a packed frame
  };
  for (const Case& c :
       {Case{"b.mkv", "-c:v libx265 -x265-params log-level=none -pix_fmt yuv420p", "hevc",
             "yuv420p", 96 * 70 + 2 * 48 * 35},
        Case{"c.webm", "-c:v libvpx-vp9 -pix_fmt yuv420p", "vp9", "yuv420p", 96 * 70 + 2 * 48 * 35},
        Case{"d.avi", "-c:v mpeg4 -q:v 4", "mpeg4", "yuv420p", 96 * 70 + 2 * 48 * 35},
        // Odd sizes (4:2:2 keeps the width even).
        Case{"e.mp4", "-vf format=yuv444p,crop=95:69 -c:v libx264 -pix_fmt yuv444p", "h264",
             "yuv444p", 3 * 95 * 69},
        Case{"f.mp4", "-vf format=yuv422p,crop=95:69 -c:v libx264 -pix_fmt yuv422p", "h264",
             "yuv422p", 94 * 69 + 2 * 47 * 69},
        // 10 bits: converted to 8-bit 4:4:4 by libswscale, as the ffmpeg tool converts it.
        Case{"g.mp4", "-c:v libx264 -pix_fmt yuv420p10le", "h264", "yuv444p", 3 * 96 * 70}}) {
    const auto path = make(c.name, std::string(kSource) + " " + c.args);
    const auto data = bytes(path);
    auto video = VideoFile::open(data, path);
    EXPECT_EQ(video.info().codec, c.codec) << c.name;
    ASSERT_EQ(video.info().frames, 30) << c.name;
    const auto ref = reference(path, c.pix_fmt);
    const size_t frame = c.frame;
    ASSERT_EQ(ref.size(), 30 * frame) << c.name;
    const auto got = decode(video, 25, 3, 2);
    ASSERT_EQ(got.size(), 3 * frame) << c.name;
    for (int k = 0; k < 3; ++k) {
      const auto* want = ref.data() + size_t(25 + 2 * k) * frame;
      EXPECT_TRUE(std::equal(want, want + frame, got.data() + size_t(k) * frame))
          << c.name << " frame " << 25 + 2 * k;
    }
  }
}

TEST_F(VideoFileTest, PacketsForNvdecAreAnnexBFromAKeyFrame) {
  const auto path =
      make("p.mp4", std::string(kSource) + " -c:v libx264 -g 10 -bf 3 -pix_fmt yuv420p");
  const auto data = bytes(path);
  auto video = VideoFile::open(data, path);
  EXPECT_EQ(video.info().pixel_format, "yuv420p");
  EXPECT_FALSE(video.info().bt709 || video.info().full_range || video.info().chroma_center);
  // From the key frame of frame 10: every later packet, start codes instead of lengths.
  std::vector<int64_t> pts;
  video.read_packets(video.pts()[10], [&](std::span<const uint8_t> b, int64_t t) {
    EXPECT_GE(b.size(), 4u);
    EXPECT_TRUE(b[0] == 0 && b[1] == 0 && (b[2] == 1 || (b[2] == 0 && b[3] == 1))) << t;
    pts.push_back(t);
    return true;
  });
  ASSERT_EQ(pts.size(), 20u);  // decode order: B-frames after the frames they need
  std::sort(pts.begin(), pts.end());
  EXPECT_TRUE(std::equal(pts.begin(), pts.end(), video.pts().begin() + 10));
  // Stopping early, then decoding on the CPU again from wherever.
  int seen = 0;
  video.read_packets(video.pts()[0], [&](std::span<const uint8_t>, int64_t) { return ++seen < 3; });
  EXPECT_EQ(seen, 3);
  EXPECT_EQ(decode(video, 5, 2, 1), decode(video, 5, 2, 1));
}

TEST_F(VideoFileTest, OpenGopKeyFramesAreMarked) {
  // x265's CRA key frames every 12 frames have leading pictures; x264's GOPs are closed.
  const auto hevc = make("open.mkv", std::string(kSource) +
                                         " -c:v libx265 -x265-params log-level=none:keyint=12 "
                                         "-pix_fmt yuv420p");
  const auto hevc_data = bytes(hevc);
  auto open = VideoFile::open(hevc_data, hevc);
  const auto& index = *open.index();
  ASSERT_TRUE(index.key[12] && index.key[24]);
  EXPECT_FALSE(index.leading[0]);
  EXPECT_TRUE(index.leading[12] && index.leading[24]);
  for (size_t k = 0; k < index.key.size(); ++k)
    EXPECT_TRUE(index.key[k] || !index.leading[k]) << k;
  const auto h264 = make("closed.mp4", std::string(kSource) + " -c:v libx264 -g 10 -bf 3");
  const auto h264_data = bytes(h264);
  auto closed = VideoFile::open(h264_data, h264);
  for (bool l : closed.index()->leading) EXPECT_FALSE(l);
}

TEST_F(VideoFileTest, VariableFrameRateIsDetected) {
  // Every fifth frame lasts three times as long.
  const auto path = make("vfr.mkv", std::string(kSource) +
                                        " -vf \"setpts='(N+2*floor(N/5))/(25*TB)'\" "
                                        "-vsync passthrough -c:v libx264 -pix_fmt yuv420p");
  const auto data = bytes(path);
  auto video = VideoFile::open(data, path);
  EXPECT_TRUE(video.info().variable_frame_rate);
  EXPECT_EQ(video.info().frames, 30);
}

TEST_F(VideoFileTest, BadFilesAreRefusedByName) {
  const auto audio = make("audio.wav", "-f lavfi -i sine=duration=0.2");
  const auto a = bytes(audio);
  try {
    VideoFile::open(a, audio);
    FAIL() << "an audio file opened";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("audio.wav': no video stream"), std::string::npos)
        << e.what();
  }
  const std::vector<uint8_t> junk(5000, 0x5a);
  EXPECT_THROW(
      {
        try {
          VideoFile::open(junk, "junk.mp4");
        } catch (const ValueError& e) {
          EXPECT_NE(std::string(e.what()).find("junk.mp4': not a video file"), std::string::npos)
              << e.what();
          throw;
        }
      },
      ValueError);
  // A Matroska file cut in half: the first frames decode, the lost ones are named.
  const auto path = make("cut.mkv", std::string(kSource) + " -c:v libx264 -g 5 -pix_fmt yuv420p");
  auto data = bytes(path);
  data.resize(data.size() / 2);
  auto video = VideoFile::open(data, path);
  ASSERT_GT(video.info().frames, 0);
  ASSERT_LT(video.info().frames, 30);
  EXPECT_FALSE(decode(video, 0, 1, 1).empty());
  EXPECT_THROW(decode(video, video.info().frames, 1, 1), ValueError);
}

}  // namespace
}  // namespace stoker::codecs
