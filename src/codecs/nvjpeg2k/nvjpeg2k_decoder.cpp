// nvJPEG2000 loaded at run time (dlopen); see nvjpeg2k_decoder.hpp. Built only with nvjpeg2k.h
// (STOKER_HAVE_NVJPEG2K); without it nvjpeg2k_available() says so.
#include "stoker/codecs/nvjpeg2k/nvjpeg2k_decoder.hpp"

#include <cstdlib>

#include "stoker/codecs/nvjpeg2k/jp2_check.hpp"
#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVJPEG2K
#include <nvjpeg2k.h>

#include "stoker/core/pip_library.hpp"
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVJPEG2K
namespace {

struct Api {
  decltype(&nvjpeg2kGetProperty) get_property = nullptr;
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

// The entry points of `lib`, and whether its version is one whose interface this was built for
// (0.9 and later 0.x: interleaved output and decode areas).
std::string resolve(void* lib, Api& r) {
  std::string error;
  auto get = [&](auto& fn, const char* sym) { resolve_symbol(lib, fn, sym, "libnvjpeg2k", error); };
  get(r.get_property, "nvjpeg2kGetProperty");
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
  if (!error.empty()) return error;
  int major = -1, minor = -1;
  r.get_property(MAJOR_VERSION, &major);
  r.get_property(MINOR_VERSION, &minor);
  if (major != 0 || minor < 9)
    return "libnvjpeg2k " + std::to_string(major) + "." + std::to_string(minor) +
           " (stoker needs 0.9 or a later 0.x)";
  return {};
}

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("STOKER_DISABLE_NVJPEG2K");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_NVJPEG2K";
      return r;
    }
    std::string why;
    void* lib = open_pip_library_checked(
        pip_library_candidates("STOKER_NVJPEG2K_LIBRARY", "libnvjpeg2k.so.0",
                               "nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0"),
        [&](void* l) { return resolve(l, r); }, why);
    if (!lib)
      r.error = why.empty() ? "libnvjpeg2k not found (pip install nvidia-nvjpeg2k-cu13, or "
                              "stoker[cuda])"
                            : why;
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

// nvJPEG2000 wants a synchronisation between two images decoded with one state (its buffers are
// reused at once): a few states in turn, each waited for (its event) before it decodes again,
// so that parsing the next images overlaps the GPU's work on the last ones.
struct Nvjpeg2kDecoder::State {
  static constexpr int kSlots = 4;
  struct Slot {
    nvjpeg2kDecodeState_t state = nullptr;
    nvjpeg2kStream_t stream = nullptr;  // the parsed bitstream
    std::unique_ptr<CudaEvent> done;    // recorded after its last decode (null: none yet)
  };
  int device = 0;
  nvjpeg2kHandle_t handle = nullptr;
  nvjpeg2kDecodeParams_t params = nullptr;
  Slot slots[kSlots];
  int next = 0;

  ~State() {
    const Api& a = api();
    DeviceGuard guard(device);
    for (auto& s : slots) {
      try {
        if (s.done) s.done->synchronize();
      } catch (const Error&) {  // a broken context: nothing of ours runs any more
      }
      if (s.stream) a.stream_destroy(s.stream);
      if (s.state) a.state_destroy(s.state);
    }
    if (params) a.params_destroy(params);
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
  for (auto& s : state_->slots) {
    check(a.state_create(state_->handle, &s.state), "creating a decoding state");
    check(a.stream_create(&s.stream), "creating a stream handle");
  }
  check(a.params_create(&state_->params), "creating decoding parameters");
  check(a.set_format(state_->params, NVJPEG2K_FORMAT_INTERLEAVED), "setting interleaved output");
  check(a.set_rgb(state_->params, 0), "setting the colour output");
}

Nvjpeg2kDecoder::~Nvjpeg2kDecoder() = default;

bool Nvjpeg2kDecoder::decode(const NvjpegJob& job, int channels, int64_t height, int64_t width,
                             StreamHandle stream) {
  if (channels < 1 || channels > 4 || !jpeg2000_plain_and_whole(job.data, job.size)) return false;
  const Api& a = api();
  State& s = *state_;
  DeviceGuard guard(s.device);
  State::Slot& slot = s.slots[s.next];
  s.next = (s.next + 1) % State::kSlots;
  if (slot.done) slot.done->synchronize();  // its last image decoded: its state is free
  // Refusals leave the image to the CPU decoder, which names what is wrong with it.
  if (a.parse(s.handle, job.data, job.size, 0, 0, slot.stream) != NVJPEG2K_STATUS_SUCCESS)
    return false;
  nvjpeg2kImageInfo_t info{};
  if (a.image_info(slot.stream, &info) != NVJPEG2K_STATUS_SUCCESS ||
      int(info.num_components) != channels || int64_t(info.image_height) != height ||
      int64_t(info.image_width) != width)
    return false;
  nvjpeg2kColorSpace_t space = NVJPEG2K_COLORSPACE_UNKNOWN;
  if (a.color_space(slot.stream, &space) != NVJPEG2K_STATUS_SUCCESS ||
      space == NVJPEG2K_COLORSPACE_SYCC || space == NVJPEG2K_COLORSPACE_NOT_SUPPORTED)
    return false;
  for (uint32_t c = 0; c < info.num_components; ++c) {
    nvjpeg2kImageComponentInfo_t ci{};
    if (a.component_info(slot.stream, &ci, c) != NVJPEG2K_STATUS_SUCCESS ||
        ci.component_width != info.image_width || ci.component_height != info.image_height ||
        ci.precision != 8 || ci.sgn != 0)
      return false;
  }
  const bool whole = job.x == 0 && job.y == 0 && job.w == width && job.h == height;
  // nvJPEG2000's area of interest lies within one tile.
  if (!whole && (info.num_tiles_x != 1 || info.num_tiles_y != 1)) return false;
  const nvjpeg2kStatus_t area = whole
                                    ? a.set_area(s.params, 0, 0, 0, 0)
                                    : a.set_area(s.params, uint32_t(job.x), uint32_t(job.x + job.w),
                                                 uint32_t(job.y), uint32_t(job.y + job.h));
  if (area != NVJPEG2K_STATUS_SUCCESS) return false;
  void* planes[4] = {job.out, job.out, job.out, job.out};
  size_t pitches[4] = {size_t(job.pitch), size_t(job.pitch), size_t(job.pitch), size_t(job.pitch)};
  nvjpeg2kImage_t out{planes, pitches, NVJPEG2K_UINT8, uint32_t(channels)};
  const nvjpeg2kStatus_t status =
      a.decode_image(s.handle, slot.state, slot.stream, s.params, &out, cudaStream_t(stream));
  // Whatever the status (work may have been queued before an error).
  if (!slot.done) slot.done = std::make_unique<CudaEvent>();
  slot.done->record(stream);
  return status == NVJPEG2K_STATUS_SUCCESS;
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
bool Nvjpeg2kDecoder::decode(const NvjpegJob&, int, int64_t, int64_t, StreamHandle) {
  return false;
}

#endif

}  // namespace stoker::codecs
