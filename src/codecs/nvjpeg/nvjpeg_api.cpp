// Loads libnvjpeg (dlopen) and keeps one handle per device; see nvjpeg_api.hpp.
#ifdef STOKER_HAVE_NVJPEG
#include "stoker/codecs/nvjpeg/nvjpeg_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"
#include "stoker/core/pip_library.hpp"

namespace stoker::codecs::nvjpeg_detail {

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("STOKER_DISABLE_NVJPEG");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_NVJPEG";
      return r;
    }
    // The system's (CUDA 13, then 12), else PyPI's nvidia-nvjpeg (site-packages/nvidia/cu13,
    // `pip install stoker[cuda]`).
    void* lib = open_pip_library(pip_library_candidates("STOKER_NVJPEG_LIBRARY", "libnvjpeg.so.13",
                                                        "nvidia/cu13/lib/libnvjpeg.so.13"));
    if (!lib) lib = open_pip_library({"libnvjpeg.so.12", "libnvjpeg.so"});
    if (!lib) {
      r.error = "libnvjpeg not found (install CUDA 13's nvJPEG, or pip install stoker[cuda])";
      return r;
    }
    bool ok = true;
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
      if (!fn) ok = false, r.error = std::string("libnvjpeg lacks ") + sym;
    };
    get(r.create_ex, "nvjpegCreateEx");
    get(r.destroy, "nvjpegDestroy");
    get(r.state_create, "nvjpegJpegStateCreate");
    get(r.state_destroy, "nvjpegJpegStateDestroy");
    get(r.batched_init, "nvjpegDecodeBatchedInitialize");
    get(r.batched_ex, "nvjpegDecodeBatchedEx");
    get(r.batched_supported_ex, "nvjpegDecodeBatchedSupportedEx");
    get(r.stream_create, "nvjpegJpegStreamCreate");
    get(r.stream_destroy, "nvjpegJpegStreamDestroy");
    get(r.stream_parse, "nvjpegJpegStreamParse");
    get(r.params_create, "nvjpegDecodeParamsCreate");
    get(r.params_destroy, "nvjpegDecodeParamsDestroy");
    get(r.params_set_format, "nvjpegDecodeParamsSetOutputFormat");
    get(r.params_set_roi, "nvjpegDecodeParamsSetROI");
    get(r.get_image_info, "nvjpegGetImageInfo");
    get(r.decoder_create, "nvjpegDecoderCreate");
    get(r.decoder_destroy, "nvjpegDecoderDestroy");
    get(r.decoder_state_create, "nvjpegDecoderStateCreate");
    get(r.pinned_create, "nvjpegBufferPinnedCreate");
    get(r.pinned_destroy, "nvjpegBufferPinnedDestroy");
    get(r.device_create, "nvjpegBufferDeviceCreate");
    get(r.device_destroy, "nvjpegBufferDeviceDestroy");
    get(r.attach_pinned, "nvjpegStateAttachPinnedBuffer");
    get(r.attach_device, "nvjpegStateAttachDeviceBuffer");
    get(r.decode_host, "nvjpegDecodeJpegHost");
    get(r.transfer, "nvjpegDecodeJpegTransferToDevice");
    get(r.decode_device, "nvjpegDecodeJpegDevice");
    get(r.set_device_padding, "nvjpegSetDeviceMemoryPadding");
    get(r.set_pinned_padding, "nvjpegSetPinnedMemoryPadding");
    if (ok) r.error.clear();
    return r;
  }();
  return a;
}

std::string status_name(nvjpegStatus_t s) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS:
      return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED:
      return "not initialized";
    case NVJPEG_STATUS_INVALID_PARAMETER:
      return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG:
      return "bad JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
      return "JPEG not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE:
      return "allocator failure";
    case NVJPEG_STATUS_EXECUTION_FAILED:
      return "execution failed";
    case NVJPEG_STATUS_ARCH_MISMATCH:
      return "architecture mismatch (no hardware decoder on this GPU)";
    case NVJPEG_STATUS_INTERNAL_ERROR:
      return "internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
      return "implementation not supported";
    default:
      return "status " + std::to_string(int(s));
  }
}

void check(nvjpegStatus_t s, const char* what) {
  if (s != NVJPEG_STATUS_SUCCESS)
    throw RuntimeError(detail::concat("nvJPEG ", what, ": ", status_name(s)));
}

void set_window(nvjpegDecodeParams_t p, const NvjpegJob& j, bool bgr) {
  check(api().params_set_format(p, bgr ? NVJPEG_OUTPUT_BGRI : NVJPEG_OUTPUT_RGBI),
        "setting the output format");
  check(api().params_set_roi(p, int(j.x), int(j.y), int(j.w), int(j.h)), "setting the window");
}

namespace {
constexpr size_t kPadding = size_t(4) << 20;
}

const SharedHandle& shared_handle(int device) {
  static std::mutex mutex;
  static std::map<int, SharedHandle> handles;
  std::lock_guard lock(mutex);
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  SharedHandle h;
  h.why = api().error;
  if (h.why.empty()) {
    try {
      DeviceGuard guard(device);
      // The hardware backend's handle also serves the CUDA decoders; a GPU without JPEG
      // engines gets a default handle (CUDA decoders only).
      nvjpegStatus_t s = api().create_ex(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr,
                                         NVJPEG_FLAGS_DEFAULT, &h.handle);
      h.hardware = s == NVJPEG_STATUS_SUCCESS;
      if (!h.hardware) {
        h.handle = nullptr;
        s = api().create_ex(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT,
                            &h.handle);
        if (s != NVJPEG_STATUS_SUCCESS) h.handle = nullptr, h.why = "no handle: " + status_name(s);
      }
      // nvJPEG grows its buffers as images grow, and CUDA's allocations and frees synchronise
      // the device: padding every allocation makes the growth steps rare.
      if (h.handle) {
        api().set_device_padding(kPadding, h.handle);
        api().set_pinned_padding(kPadding, h.handle);
      }
    } catch (const Error& e) {
      h.handle = nullptr, h.why = e.what();
    }
  }
  return handles.emplace(device, std::move(h)).first->second;
}

}  // namespace stoker::codecs::nvjpeg_detail
#endif  // STOKER_HAVE_NVJPEG
