// nvJPEG2000 loaded at run time (dlopen); see nvjpeg2k_decoder.hpp. Built only with nvjpeg2k.h
// (STOKER_HAVE_NVJPEG2K); without it nvjpeg2k_available() says so.
#include "stoker/codecs/nvjpeg2k/nvjpeg2k_decoder.hpp"

#include <cstdlib>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVJPEG2K
#include <nvjpeg2k.h>

#include "stoker/core/pip_library.hpp"
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVJPEG2K
namespace {

struct Api {
  decltype(&nvjpeg2kCreateSimple) create = nullptr;
  decltype(&nvjpeg2kDestroy) destroy = nullptr;
  decltype(&nvjpeg2kDecodeStateCreate) state_create = nullptr;
  decltype(&nvjpeg2kDecodeStateDestroy) state_destroy = nullptr;
  decltype(&nvjpeg2kStreamCreate) stream_create = nullptr;
  decltype(&nvjpeg2kStreamDestroy) stream_destroy = nullptr;
  decltype(&nvjpeg2kStreamParse) parse = nullptr;
  decltype(&nvjpeg2kStreamGetImageInfo) image_info = nullptr;
  decltype(&nvjpeg2kStreamGetImageComponentInfo) component_info = nullptr;
  decltype(&nvjpeg2kStreamGetColorSpace) color_space = nullptr;
  decltype(&nvjpeg2kDecodeParamsCreate) params_create = nullptr;
  decltype(&nvjpeg2kDecodeParamsDestroy) params_destroy = nullptr;
  decltype(&nvjpeg2kDecodeParamsSetDecodeArea) set_area = nullptr;
  decltype(&nvjpeg2kDecodeParamsSetRGBOutput) set_rgb = nullptr;
  decltype(&nvjpeg2kDecodeParamsSetOutputFormat) set_format = nullptr;
  decltype(&nvjpeg2kDecodeImage) decode_image = nullptr;
  std::string error;  // why loading failed (empty: loaded)
};

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("STOKER_DISABLE_NVJPEG2K");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_NVJPEG2K";
      return r;
    }
    void* lib = open_pip_library(pip_library_candidates(
        "STOKER_NVJPEG2K_LIBRARY", "libnvjpeg2k.so.0", "nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0"));
    if (!lib) {
      r.error = "libnvjpeg2k not found (pip install nvidia-nvjpeg2k-cu13, or stoker[cuda])";
      return r;
    }
    auto get = [&](auto& fn, const char* sym) {
      resolve_symbol(lib, fn, sym, "libnvjpeg2k", r.error);
    };
    get(r.create, "nvjpeg2kCreateSimple");
    get(r.destroy, "nvjpeg2kDestroy");
    get(r.state_create, "nvjpeg2kDecodeStateCreate");
    get(r.state_destroy, "nvjpeg2kDecodeStateDestroy");
    get(r.stream_create, "nvjpeg2kStreamCreate");
    get(r.stream_destroy, "nvjpeg2kStreamDestroy");
    get(r.parse, "nvjpeg2kStreamParse");
    get(r.image_info, "nvjpeg2kStreamGetImageInfo");
    get(r.component_info, "nvjpeg2kStreamGetImageComponentInfo");
    get(r.color_space, "nvjpeg2kStreamGetColorSpace");
    get(r.params_create, "nvjpeg2kDecodeParamsCreate");
    get(r.params_destroy, "nvjpeg2kDecodeParamsDestroy");
    get(r.set_area, "nvjpeg2kDecodeParamsSetDecodeArea");
    get(r.set_rgb, "nvjpeg2kDecodeParamsSetRGBOutput");
    get(r.set_format, "nvjpeg2kDecodeParamsSetOutputFormat");
    get(r.decode_image, "nvjpeg2kDecodeImage");
    return r;
  }();
  return a;
}

void check(nvjpeg2kStatus_t s, const char* what) {
  STOKER_ENFORCE(s == NVJPEG2K_STATUS_SUCCESS, RuntimeError, "nvJPEG2000 ", what, ": status ",
                 int(s));
}

}  // namespace

std::string nvjpeg2k_unavailable() { return api().error; }

bool nvjpeg2k_available(int, std::string* why) { return runtime_library_usable(api().error, why); }

struct Nvjpeg2kDecoder::State {
  int device = 0;
  nvjpeg2kHandle_t handle = nullptr;
  nvjpeg2kDecodeState_t decode_state = nullptr;
  nvjpeg2kStream_t stream = nullptr;
  nvjpeg2kDecodeParams_t params = nullptr;

  ~State() {
    const Api& a = api();
    DeviceGuard guard(device);
    if (params) a.params_destroy(params);
    if (stream) a.stream_destroy(stream);
    if (decode_state) a.state_destroy(decode_state);
    if (handle) a.destroy(handle);
  }
};

Nvjpeg2kDecoder::Nvjpeg2kDecoder(int device) : state_(std::make_unique<State>()) {
  std::string why;
  STOKER_ENFORCE(nvjpeg2k_available(device, &why), RuntimeError, "nvJPEG2000 unavailable: ", why);
  const Api& a = api();
  DeviceGuard guard(device);
  state_->device = device;
  check(a.create(&state_->handle), "creating its handle");
  check(a.state_create(state_->handle, &state_->decode_state), "creating a decoding state");
  check(a.stream_create(&state_->stream), "creating a stream handle");
  check(a.params_create(&state_->params), "creating decoding parameters");
  check(a.set_format(state_->params, NVJPEG2K_FORMAT_INTERLEAVED), "setting interleaved output");
  check(a.set_rgb(state_->params, 0), "setting the colour output");
}

Nvjpeg2kDecoder::~Nvjpeg2kDecoder() = default;

bool Nvjpeg2kDecoder::decode(const NvjpegJob& job, int channels, StreamHandle stream) {
  if (channels < 1 || channels > 4) return false;
  const Api& a = api();
  State& s = *state_;
  DeviceGuard guard(s.device);
  // Refusals here leave the image to the CPU decoder, which names what is wrong with it.
  if (a.parse(s.handle, job.data, job.size, 0, 0, s.stream) != NVJPEG2K_STATUS_SUCCESS)
    return false;
  nvjpeg2kImageInfo_t info{};
  if (a.image_info(s.stream, &info) != NVJPEG2K_STATUS_SUCCESS ||
      int(info.num_components) != channels)
    return false;
  nvjpeg2kColorSpace_t space = NVJPEG2K_COLORSPACE_UNKNOWN;
  if (a.color_space(s.stream, &space) != NVJPEG2K_STATUS_SUCCESS ||
      space == NVJPEG2K_COLORSPACE_SYCC || space == NVJPEG2K_COLORSPACE_NOT_SUPPORTED)
    return false;
  for (uint32_t c = 0; c < info.num_components; ++c) {
    nvjpeg2kImageComponentInfo_t ci{};
    if (a.component_info(s.stream, &ci, c) != NVJPEG2K_STATUS_SUCCESS ||
        ci.component_width != info.image_width || ci.component_height != info.image_height ||
        ci.precision != 8 || ci.sgn != 0)
      return false;
  }
  const bool whole = job.x == 0 && job.y == 0 && job.w == int64_t(info.image_width) &&
                     job.h == int64_t(info.image_height);
  // nvJPEG2000's area of interest lies within one tile.
  if (!whole && (info.num_tiles_x != 1 || info.num_tiles_y != 1)) return false;
  if (whole) {
    check(a.set_area(s.params, 0, 0, 0, 0), "setting the decode area");
  } else {
    check(a.set_area(s.params, uint32_t(job.x), uint32_t(job.x + job.w), uint32_t(job.y),
                     uint32_t(job.y + job.h)),
          "setting the decode area");
  }
  void* planes[4] = {job.out, job.out, job.out, job.out};
  size_t pitches[4] = {size_t(job.pitch), size_t(job.pitch), size_t(job.pitch), size_t(job.pitch)};
  nvjpeg2kImage_t out{planes, pitches, NVJPEG2K_UINT8, uint32_t(channels)};
  return a.decode_image(s.handle, s.decode_state, s.stream, s.params, &out, cudaStream_t(stream)) ==
         NVJPEG2K_STATUS_SUCCESS;
}

#else  // without nvjpeg2k.h

bool nvjpeg2k_available(int, std::string* why) {
  if (why) *why = nvjpeg2k_unavailable();
  return false;
}
std::string nvjpeg2k_unavailable() { return "stoker was built without nvjpeg2k.h"; }
struct Nvjpeg2kDecoder::State {};
Nvjpeg2kDecoder::Nvjpeg2kDecoder(int) {
  throw RuntimeError("nvJPEG2000 unavailable: stoker was built without nvjpeg2k.h");
}
Nvjpeg2kDecoder::~Nvjpeg2kDecoder() = default;
bool Nvjpeg2kDecoder::decode(const NvjpegJob&, int, StreamHandle) { return false; }

#endif

}  // namespace stoker::codecs
