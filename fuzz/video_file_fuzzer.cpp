// libFuzzer target: VideoFile (FFmpeg's demuxers and decoders behind stoker's index and
// frame-number decoding) must index a file and decode its first and last frames, or throw a
// stoker::ValueError, for any input: no crash, hang or unbounded allocation of ours.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/video/video_file.hpp"
#include "stoker/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!stoker::codecs::VideoFile::available()) return 0;
  try {
    auto video = stoker::codecs::VideoFile::open({data, size}, "fuzz");
    const auto& info = video.info();
    if (info.width * info.height > (int64_t(1) << 22)) return 0;  // the caller's allocation
    std::vector<uint8_t> frame(size_t(info.width * info.height * 3));
    video.decode_rgb(0, 1, 1, frame.data());
    video.decode_rgb(info.frames - 1, 1, 1, frame.data());
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
