// A video file's frames decoded on the GPU's NVDEC engines: FFmpeg demuxes (VideoFile's
// packets), NVDEC's parser and decoder (libnvcuvid, loaded at run time through FFmpeg's
// nv-codec-headers, as nvJPEG is) decode, and each wanted frame is handed out as its mapped
// NV12 surface, to be converted on the GPU (kernels/color/yuv_to_rgb.hpp) before it is unmapped.
//
// Built where CUDA, FFmpeg and the headers are (STOKER_HAVE_NVDEC); elsewhere the constructor
// throws and nvdec_unavailable() says why.
#pragma once

#include <memory>
#include <string>

#include "stoker/codecs/video/video_file.hpp"
#include "stoker/core/cuda.hpp"

namespace stoker::codecs {

// Why `info`'s stream cannot be decoded by NVDEC on `device` ("" when it can): not built in,
// no libnvcuvid, a codec or size the engines do not take, not 8-bit 4:2:0.
std::string nvdec_unavailable(int device, const VideoInfo& info);

class NvdecVideo {
 public:
  // Decodes `file`'s stream on `device`. Throws RuntimeError when NVDEC is unavailable.
  NvdecVideo(VideoFile file, int device);
  NvdecVideo(NvdecVideo&&) noexcept;
  NvdecVideo& operator=(NvdecVideo&&) noexcept;
  ~NvdecVideo();

  const VideoFile& file() const;

  // Decodes frames first, first + stride, ... (count of them, display order) and calls
  // take(k, planes) for the k-th with planes in device memory (NV12: uv_step 2), valid during
  // the call; take enqueues its work on `stream`, which is synchronised before the surface goes
  // back to the decoder. Throws ValueError naming the file and the frame when a frame cannot be
  // decoded.
  void decode(int64_t first, int64_t count, int64_t stride, StreamHandle stream,
              const VideoFile::TakeFrame& take);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker::codecs
