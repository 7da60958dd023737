// The GPU work around the optical-flow engine (NVOFA, nvof_engine.hpp): frames packed into the
// engine's input format, its S10.5 fixed-point vectors decoded to float pixels, float hints
// encoded into them. The value conversions are shared with the CPU references of the tests.
#pragma once

#include <cmath>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/kernels/common/host_device.hpp"

namespace stoker::kernels {

// S10.5: 5 fractional bits.
STOKER_HD inline float decode_flow_value(int16_t v) { return float(v) * (1.f / 32.f); }
// To the nearest S10.5 value, saturated to int16 (NaN: 0).
STOKER_HD inline int16_t encode_flow_value(float v) {
  if (!(v == v)) return 0;
  const float s = rintf(v * 32.f);
  return int16_t(s < -32768.f ? -32768.f : s > 32767.f ? 32767.f : s);
}

// An h x w frame (HWC, uint8, `channels` 3 or 1, dense) into the engine's input buffer
// (`pitch` bytes per row): 3 channels as ABGR8 — bytes R, G, B, 255 (`bgr`: the input's first
// byte is blue) —, 1 channel as GRAYSCALE8. Returns a CUDA error code (0: launched).
int pack_flow_frame_gpu(const uint8_t* in, int64_t h, int64_t w, int channels, bool bgr,
                        uint8_t* out, int64_t pitch, StreamHandle stream);

// h x w vectors of the engine (int16 x, y pairs, `pitch` bytes per row) to a dense h x w x 2
// float array, in pixels.
int decode_flow_gpu(const int16_t* in, int64_t pitch, int64_t h, int64_t w, float* out,
                    StreamHandle stream);

// The reverse for hints: a dense h x w x 2 float array into the engine's int16 pairs.
int encode_flow_gpu(const float* in, int64_t h, int64_t w, int16_t* out, int64_t pitch,
                    StreamHandle stream);

}  // namespace stoker::kernels
