// libFuzzer target: VideoFile (FFmpeg's demuxers and decoders behind stoker's index and
// frame-number decoding) must index a file and decode its first and last frames, converted to
// RGB by the readers' kernel (which reads every plane byte the frame claims), or throw a
// stoker::ValueError, for any input: no crash, hang or unbounded allocation of ours.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/codecs/video/video_file.hpp"
#include "stoker/core/error.hpp"
#include "stoker/kernels/color/yuv_to_rgb.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!stoker::codecs::VideoFile::available()) return 0;
  try {
    auto video = stoker::codecs::VideoFile::open({data, size}, "fuzz");
    const auto& info = video.info();
    if (info.width * info.height > (int64_t(1) << 22)) return 0;  // the caller's allocation
    std::vector<uint8_t> frame(size_t(info.width * info.height * 3));
    auto convert = [&](int64_t, const stoker::codecs::VideoPlanes& p) {
      stoker::kernels::YuvPlanes y;
      y.y = p.data[0], y.u = p.data[1], y.v = p.data[2];
      y.y_pitch = p.pitch[0], y.uv_pitch = p.pitch[1], y.uv_step = p.uv_step;
      y.shift_x = p.shift_x, y.shift_y = p.shift_y, y.chroma_center = p.chroma_center;
      y.full_range = p.full_range, y.width = p.width, y.height = p.height;
      stoker::kernels::yuv_to_rgb_cpu(y, true, false, frame.data());
    };
    video.decode(0, 1, 1, convert);
    video.decode(info.frames - 1, 1, 1, convert);
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
