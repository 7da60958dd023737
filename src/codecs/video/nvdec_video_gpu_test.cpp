// NvdecVideo against VideoFile on the test videos (python/tests/video_fixtures.py, given by
// STOKER_TEST_VIDEOS where the ffmpeg tool is missing): from every key frame and from frames
// between them, the NV12 planes NVDEC gives equal libavcodec's 4:2:0 planes exactly (H.264,
// HEVC, VP9: their decoders are exact). Skips without a GPU with NVDEC, or without the videos.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "stoker/codecs/video/nvdec_video.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"
#include "stoker/core/memory.hpp"

namespace stoker::codecs {
namespace {

std::vector<uint8_t> bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Packed Y, Cb, Cr of a frame's planes. Device planes (on_device: the stream NVDEC maps them on,
// which a copy must follow) are copied to the host first.
std::vector<uint8_t> packed(const VideoPlanes& p, StreamHandle on_device = nullptr) {
  std::vector<uint8_t> out;
  const int64_t cw = (p.width + 1) / 2, ch = (p.height + 1) / 2;
  auto row = [&](const uint8_t* src, int64_t n, int step) {
    std::vector<uint8_t> r(size_t(n * step));
    if (on_device) {
      copy_to_host_async(r.data(), src, r.size(), on_device);
      synchronize_stream(on_device);
    } else {
      std::copy(src, src + r.size(), r.begin());
    }
    for (int64_t x = 0; x < n; ++x) out.push_back(r[size_t(x * step)]);
  };
  for (int64_t y = 0; y < p.height; ++y) row(p.data[0] + y * p.pitch[0], p.width, 1);
  for (int c = 1; c < 3; ++c)
    for (int64_t y = 0; y < ch; ++y) row(p.data[c] + y * p.pitch[c], cw, p.uv_step);
  return out;
}

TEST(NvdecVideoGpu, PlanesEqualTheCpuDecodersFromEveryKeyFrame) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const char* dir = std::getenv("STOKER_TEST_VIDEOS");
  if (dir == nullptr) GTEST_SKIP() << "STOKER_TEST_VIDEOS (python/tests/video_fixtures.py) not set";
  for (const char* name : {"h264.mp4", "longgop.mp4", "hevc_smooth.mkv", "vp9_smooth.webm"}) {
    const std::string path = std::string(dir) + "/" + name;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const auto data = bytes(path);
    auto cpu = VideoFile::open(data, path);
    const std::string why = nvdec_unavailable(0, cpu.info());
    if (!why.empty()) GTEST_SKIP() << why;
    NvdecVideo gpu(VideoFile::open(data, path, cpu.index()), 0);
    const int64_t frames = cpu.info().frames;
    std::vector<int64_t> starts;
    for (int64_t k = 0; k < frames; ++k)
      if (cpu.key()[size_t(k)] || k % 7 == 3) starts.push_back(k);
    for (int64_t first : starts) {
      const int64_t count = std::min<int64_t>(3, frames - first);
      std::vector<std::vector<uint8_t>> want, got;
      cpu.decode(first, count, 1,
                 [&](int64_t, const VideoPlanes& p) { want.push_back(packed(p)); });
      CudaStream stream(0);
      gpu.decode(first, count, 1, stream.get(),
                 [&](int64_t, const VideoPlanes& p) { got.push_back(packed(p, stream.get())); });
      ASSERT_EQ(got.size(), want.size()) << name << " from " << first;
      for (size_t k = 0; k < got.size(); ++k)
        EXPECT_EQ(got[k], want[k]) << name << " frame " << first + int64_t(k);
    }
  }
}

}  // namespace
}  // namespace stoker::codecs
