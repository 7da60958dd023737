// A decoded video frame's planes (codecs::VideoPlanes) as the conversion kernel takes them;
// shared by readers.video and decoders.video.
#pragma once

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

}  // namespace stoker::ops
