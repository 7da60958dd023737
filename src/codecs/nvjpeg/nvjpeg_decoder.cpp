#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVJPEG
#include <dlfcn.h>
#include <nvjpeg.h>

#include <cstdlib>
#include <map>
#include <mutex>
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVJPEG
namespace {

// The nvJPEG entry points stoker uses, resolved from libnvjpeg at run time.
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
  std::string error;  // why loading failed (empty: loaded)
};

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("STOKER_DISABLE_NVJPEG");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_NVJPEG";
      return r;
    }
    void* lib = nullptr;
    for (const char* name : {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      r.error =
          "libnvjpeg not found (" + std::string(dlerror() ? dlerror() : "dlopen failed") + ")";
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

// One hardware handle per device, for the process (see the header on why it is shared).
nvjpegHandle_t shared_handle(int device, std::string* why) {
  static std::mutex mutex;
  static std::map<int, std::pair<nvjpegHandle_t, std::string>> handles;
  std::lock_guard lock(mutex);
  auto it = handles.find(device);
  if (it == handles.end()) {
    nvjpegHandle_t h = nullptr;
    std::string error = api().error;
    if (error.empty()) {
      try {
        DeviceGuard guard(device);
        nvjpegStatus_t s =
            api().create_ex(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &h);
        if (s != NVJPEG_STATUS_SUCCESS) {
          error = "no hardware decoder: " + status_name(s);
          h = nullptr;
        }
      } catch (const Error& e) {
        error = e.what();
      }
    }
    it = handles.emplace(device, std::make_pair(h, error)).first;
  }
  if (why) *why = it->second.second;
  return it->second.first;
}

}  // namespace

bool nvjpeg_hardware_available(int device, std::string* why) {
  return shared_handle(device, why) != nullptr;
}

struct NvjpegHardwareDecoder::State {
  int device = 0;
  nvjpegHandle_t handle = nullptr;
  nvjpegJpegState_t state = nullptr;
  // supports() probes, one per calling thread: a stream parser and decode parameters.
  std::vector<std::pair<nvjpegJpegStream_t, nvjpegDecodeParams_t>> probes;
  std::vector<nvjpegDecodeParams_t> params;  // one per job slot, grown as needed
  int initialized_n = -1;                    // the batch size and format the state is set up
  bool initialized_bgr = false;              // for (re-initialised only when they change)
  ~State() {
    for (auto p : params) api().params_destroy(p);
    for (auto [st, pa] : probes) api().stream_destroy(st), api().params_destroy(pa);
    if (state) api().state_destroy(state);
  }
};

NvjpegHardwareDecoder::NvjpegHardwareDecoder(int device) : state_(std::make_unique<State>()) {
  std::string why;
  state_->device = device;
  state_->handle = shared_handle(device, &why);
  STOKER_ENFORCE(state_->handle != nullptr, RuntimeError,
                 "nvJPEG hardware decoder unavailable: ", why);
  check(api().state_create(state_->handle, &state_->state), "creating a decoding state");
}

void NvjpegHardwareDecoder::reserve_slots(int slots) {
  while (int(state_->probes.size()) < slots) {
    nvjpegJpegStream_t st = nullptr;
    nvjpegDecodeParams_t pa = nullptr;
    check(api().stream_create(state_->handle, &st), "creating a stream parser");
    if (api().params_create(state_->handle, &pa) != NVJPEG_STATUS_SUCCESS) {
      api().stream_destroy(st);
      throw RuntimeError("nvJPEG: creating decode parameters failed");
    }
    state_->probes.emplace_back(st, pa);
  }
}

NvjpegHardwareDecoder::~NvjpegHardwareDecoder() = default;

namespace {
void set_window(nvjpegDecodeParams_t p, const NvjpegHardwareDecoder::Job& j, bool bgr) {
  check(api().params_set_format(p, bgr ? NVJPEG_OUTPUT_BGRI : NVJPEG_OUTPUT_RGBI),
        "setting the output format");
  check(api().params_set_roi(p, int(j.x), int(j.y), int(j.w), int(j.h)), "setting the window");
}
}  // namespace

bool NvjpegHardwareDecoder::supports(const Job& job, int slot) {
  STOKER_ASSERT(slot >= 0 && slot < int(state_->probes.size()), "slot ", slot, " not reserved");
  auto [stream, params] = state_->probes[size_t(slot)];
  if (api().stream_parse(state_->handle, job.data, job.size, 0, 0, stream) != NVJPEG_STATUS_SUCCESS)
    return false;
  set_window(params, job, false);
  int unsupported = 1;
  if (api().batched_supported_ex(state_->handle, stream, params, &unsupported) !=
      NVJPEG_STATUS_SUCCESS)
    return false;
  return unsupported == 0;  // nvJPEG reports 0 for "supported"
}

void NvjpegHardwareDecoder::decode(const std::vector<Job>& jobs, bool bgr, StreamHandle stream) {
  if (jobs.empty()) return;
  DeviceGuard guard(state_->device);
  const size_t n = jobs.size();
  while (state_->params.size() < n) {
    nvjpegDecodeParams_t p = nullptr;
    check(api().params_create(state_->handle, &p), "creating decode parameters");
    state_->params.push_back(p);
  }
  std::vector<const unsigned char*> data(n);
  std::vector<size_t> lengths(n);
  std::vector<nvjpegImage_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    data[i] = jobs[i].data;
    lengths[i] = jobs[i].size;
    out[i] = nvjpegImage_t{};
    out[i].channel[0] = jobs[i].out;
    out[i].pitch[0] = static_cast<unsigned int>(jobs[i].pitch);
    set_window(state_->params[i], jobs[i], bgr);
  }
  if (state_->initialized_n != int(n) || state_->initialized_bgr != bgr) {
    state_->initialized_n = -1;
    check(api().batched_init(state_->handle, state_->state, int(n), 1,
                             bgr ? NVJPEG_OUTPUT_BGRI : NVJPEG_OUTPUT_RGBI),
          "initialising a batch");
    state_->initialized_n = int(n), state_->initialized_bgr = bgr;
  }
  const nvjpegStatus_t st =
      api().batched_ex(state_->handle, state_->state, data.data(), lengths.data(), out.data(),
                       state_->params.data(), cudaStream_t(stream));
  if (st != NVJPEG_STATUS_SUCCESS) state_->initialized_n = -1;  // nvJPEG: re-init after a failure
  check(st, "decoding a batch");
}

#else  // built without nvjpeg.h

bool nvjpeg_hardware_available(int, std::string* why) {
  if (why) *why = "stoker was built without nvjpeg.h";
  return false;
}
struct NvjpegHardwareDecoder::State {};
NvjpegHardwareDecoder::NvjpegHardwareDecoder(int) {
  throw RuntimeError("nvJPEG hardware decoder unavailable: stoker was built without nvjpeg.h");
}
NvjpegHardwareDecoder::~NvjpegHardwareDecoder() = default;
void NvjpegHardwareDecoder::reserve_slots(int) {}
bool NvjpegHardwareDecoder::supports(const Job&, int) { return false; }
void NvjpegHardwareDecoder::decode(const std::vector<Job>&, bool, StreamHandle) {}

#endif

}  // namespace stoker::codecs
