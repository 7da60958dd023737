// What the video decoders and readers share: a decoded frame's planes (codecs::VideoPlanes) as
// the conversion kernel takes them, and the runs in which a set of frames is decoded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stoker/codecs/video/video_file.hpp"
#include "stoker/kernels/color/yuv_to_rgb.hpp"

namespace stoker::ops {

inline kernels::YuvPlanes yuv_planes(const codecs::VideoPlanes& p) {
  kernels::YuvPlanes y;
  y.y = p.data[0], y.u = p.data[1], y.v = p.data[2];
  y.y_pitch = p.pitch[0], y.uv_pitch = p.pitch[1], y.uv_step = p.uv_step;
  y.shift_x = p.shift_x, y.shift_y = p.shift_y;
  y.chroma_center = p.chroma_center, y.full_range = p.full_range;
  y.matrix = p.bt709 ? kernels::YuvMatrix::kBt709 : kernels::YuvMatrix::kBt601;
  y.width = p.width, y.height = p.height;
  return y;
}

// Frames first, first + stride, ... (count of them): what one decode call takes.
struct FrameRun {
  int64_t first, count, stride;
};
// The distinct frames of `frames` (-1s dropped), ascending, as runs: decoders take runs, and a
// run decodes without seeking back.
inline std::vector<FrameRun> frame_runs(std::vector<int64_t> frames) {
  frames.erase(std::remove(frames.begin(), frames.end(), int64_t{-1}), frames.end());
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  std::vector<FrameRun> runs;
  for (size_t i = 0; i < frames.size();) {
    FrameRun r{frames[i], 1, 1};
    if (i + 1 < frames.size()) r.stride = frames[i + 1] - frames[i];
    size_t j = i + 1;
    while (j < frames.size() && frames[j] - frames[j - 1] == r.stride) ++j, ++r.count;
    runs.push_back(r);
    i = j;
  }
  return runs;
}

}  // namespace stoker::ops
