// NVOFA, the GPU's optical-flow engine, through the driver's libnvidia-opticalflow.so.1 (opened
// at run time, as nvJPEG's and NVDEC's libraries are; its interface headers are pinned in
// third_party/nvof). An engine is one session for frames of one size: two input buffers that
// frames are packed into (consecutive pairs reuse the last frame), an output buffer of S10.5
// vectors decoded to float pixels, and a hint buffer when external hints are on. CUDA builds
// only; every call takes the stream the caller's work is ordered on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

struct OpticalFlowParams {
  int output_grid = 4;  // pixels per vector along each axis (1, 2, 4: as the engine offers)
  int hint_grid = 4;    // pixels per external hint vector (1, 2, 4, 8)
  float preset = 0.f;   // 0 slow and best, 0.5 medium, 1 fast (DALI's thresholds in between)
  bool temporal_hints = false;  // the previous pair's vectors as hints for the next
  bool external_hints = false;  // hints given with every pair
  bool gray = false;            // one-channel frames (GRAYSCALE8) instead of colour (ABGR8)
};

// Why NVOFA cannot be used on `device` ("" when it can): the driver's library missing or too
// old, or no engine on that GPU. Asked once per device.
std::string nvof_unavailable(int device);

class NvofEngine {
 public:
  NvofEngine(int device, const OpticalFlowParams& params);
  ~NvofEngine();
  NvofEngine(const NvofEngine&) = delete;
  NvofEngine& operator=(const NvofEngine&) = delete;

  // Opens the session for frames of width x height (nothing when it is open at that size).
  // Throws ValueError for sizes or grids the engine does not take, naming what it takes.
  void prepare(int64_t width, int64_t height);
  // Packs an h x w frame (HWC uint8, 3 channels — `bgr`: blue first — or 1) into input
  // buffer `slot` (0 or 1).
  void pack(int slot, const uint8_t* frame, int channels, bool bgr, StreamHandle stream);
  // The flow of the frame in slot `input` against the frame in slot `reference`: for each
  // output_grid block of the input frame, where its content lies in the reference frame
  // relative to it, in pixels (x, y), as out_height() x out_width() x 2 floats; `hints` (with
  // external hints: hint_height() x hint_width() x 2 floats, the same convention) guide the
  // search.
  void run(int input, int reference, float* out, const float* hints, StreamHandle stream);

  int64_t out_width() const;
  int64_t out_height() const;
  int64_t hint_width() const;
  int64_t hint_height() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker::kernels
