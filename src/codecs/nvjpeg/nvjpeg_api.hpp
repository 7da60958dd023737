// nvJPEG loaded at run time (internal to codecs/nvjpeg): the entry points stoker uses, status
// checks, and the one library handle per device that every nvJPEG decoder shares. Only built
// with nvjpeg.h (STOKER_HAVE_NVJPEG).
#pragma once

#include <nvjpeg.h>

#include <string>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"

namespace stoker::codecs::nvjpeg_detail {

struct Api {
  decltype(&nvjpegCreateEx) create_ex = nullptr;
  decltype(&nvjpegDestroy) destroy = nullptr;
  decltype(&nvjpegJpegStateCreate) state_create = nullptr;
  decltype(&nvjpegJpegStateDestroy) state_destroy = nullptr;
  decltype(&nvjpegDecodeBatchedInitialize) batched_init = nullptr;
  decltype(&nvjpegDecodeBatchedEx) batched_ex = nullptr;
  decltype(&nvjpegDecodeBatchedSupportedEx) batched_supported_ex = nullptr;
  decltype(&nvjpegJpegStreamCreate) stream_create = nullptr;
  decltype(&nvjpegJpegStreamDestroy) stream_destroy = nullptr;
  decltype(&nvjpegJpegStreamParse) stream_parse = nullptr;
  decltype(&nvjpegDecodeParamsCreate) params_create = nullptr;
  decltype(&nvjpegDecodeParamsDestroy) params_destroy = nullptr;
  decltype(&nvjpegDecodeParamsSetOutputFormat) params_set_format = nullptr;
  decltype(&nvjpegDecodeParamsSetROI) params_set_roi = nullptr;
  decltype(&nvjpegGetImageInfo) get_image_info = nullptr;
  // The decoupled (CUDA) decoders: Huffman on the host or the GPU, the rest on the GPU.
  decltype(&nvjpegDecoderCreate) decoder_create = nullptr;
  decltype(&nvjpegDecoderDestroy) decoder_destroy = nullptr;
  decltype(&nvjpegDecoderStateCreate) decoder_state_create = nullptr;
  decltype(&nvjpegBufferPinnedCreate) pinned_create = nullptr;
  decltype(&nvjpegBufferPinnedDestroy) pinned_destroy = nullptr;
  decltype(&nvjpegBufferDeviceCreate) device_create = nullptr;
  decltype(&nvjpegBufferDeviceDestroy) device_destroy = nullptr;
  decltype(&nvjpegStateAttachPinnedBuffer) attach_pinned = nullptr;
  decltype(&nvjpegStateAttachDeviceBuffer) attach_device = nullptr;
  decltype(&nvjpegDecodeJpegHost) decode_host = nullptr;
  decltype(&nvjpegDecodeJpegTransferToDevice) transfer = nullptr;
  decltype(&nvjpegDecodeJpegDevice) decode_device = nullptr;
  decltype(&nvjpegSetDeviceMemoryPadding) set_device_padding = nullptr;
  decltype(&nvjpegSetPinnedMemoryPadding) set_pinned_padding = nullptr;
  std::string error;  // why loading failed (empty: loaded)
};

// libnvjpeg's entry points, resolved once (STOKER_DISABLE_NVJPEG=1 leaves them unresolved).
const Api& api();

std::string status_name(nvjpegStatus_t s);
// Throws RuntimeError "nvJPEG <what>: <status>" unless `s` is success.
void check(nvjpegStatus_t s, const char* what);

// Sets the output format (interleaved RGB, or BGR) and the job's window as the region to decode.
void set_window(nvjpegDecodeParams_t p, const NvjpegJob& j, bool bgr);

// The process's nvJPEG handle for `device` (nullptr, with `why`, when nvJPEG is unusable).
// Created for the hardware backend where the GPU has JPEG engines, else for the default one;
// `hardware` says which. Shared: nvJPEG handles are thread-safe, and two hardware handles used
// from two threads were seen to hang on an H100.
struct SharedHandle {
  nvjpegHandle_t handle = nullptr;
  bool hardware = false;
  std::string why;
};
const SharedHandle& shared_handle(int device);

}  // namespace stoker::codecs::nvjpeg_detail
