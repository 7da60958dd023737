#include "stoker/kernels/flow/nvof_engine.hpp"

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "nvOpticalFlowCuda.h"
#include "stoker/kernels/flow/optical_flow_gpu.hpp"
#endif

namespace stoker::kernels {

#ifdef STOKER_HAVE_CUDA
namespace {

// The driver's optical-flow library, opened once per process.
struct Library {
  NV_OF_CUDA_API_FUNCTION_LIST api{};
  std::string why;  // empty when usable
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    void* h = dlopen("libnvidia-opticalflow.so.1", RTLD_LOCAL | RTLD_LAZY);
    if (!h) h = dlopen("libnvidia-opticalflow.so", RTLD_LOCAL | RTLD_LAZY);
    if (!h) {
      l.why =
          "the optical-flow library (libnvidia-opticalflow.so.1) could not be loaded: the "
          "driver installation lacks it (in containers: NVIDIA_DRIVER_CAPABILITIES must "
          "include video)";
      return l;
    }
    using Create = NV_OF_STATUS (*)(uint32_t, NV_OF_CUDA_API_FUNCTION_LIST*);
    auto create = reinterpret_cast<Create>(dlsym(h, "NvOFAPICreateInstanceCuda"));
    if (!create) {
      l.why = "libnvidia-opticalflow.so.1 has no NvOFAPICreateInstanceCuda";
    } else if (NV_OF_STATUS s = create(NV_OF_API_VERSION, &l.api); s != NV_OF_SUCCESS) {
      l.why = "the driver's optical-flow library does not offer API " +
              std::to_string(NV_OF_API_MAJOR_VERSION) + "." +
              std::to_string(NV_OF_API_MINOR_VERSION) + " (status " + std::to_string(int(s)) +
              "): a newer driver is needed";
    }
    return l;
  }();
  return lib;
}

const char* status_name(NV_OF_STATUS s) {
  switch (s) {
    case NV_OF_SUCCESS:
      return "NV_OF_SUCCESS";
    case NV_OF_ERR_OF_NOT_AVAILABLE:
      return "NV_OF_ERR_OF_NOT_AVAILABLE";
    case NV_OF_ERR_UNSUPPORTED_DEVICE:
      return "NV_OF_ERR_UNSUPPORTED_DEVICE";
    case NV_OF_ERR_DEVICE_DOES_NOT_EXIST:
      return "NV_OF_ERR_DEVICE_DOES_NOT_EXIST";
    case NV_OF_ERR_INVALID_PTR:
      return "NV_OF_ERR_INVALID_PTR";
    case NV_OF_ERR_INVALID_PARAM:
      return "NV_OF_ERR_INVALID_PARAM";
    case NV_OF_ERR_INVALID_CALL:
      return "NV_OF_ERR_INVALID_CALL";
    case NV_OF_ERR_INVALID_VERSION:
      return "NV_OF_ERR_INVALID_VERSION";
    case NV_OF_ERR_OUT_OF_MEMORY:
      return "NV_OF_ERR_OUT_OF_MEMORY";
    case NV_OF_ERR_NOT_INITIALIZED:
      return "NV_OF_ERR_NOT_INITIALIZED";
    case NV_OF_ERR_UNSUPPORTED_FEATURE:
      return "NV_OF_ERR_UNSUPPORTED_FEATURE";
    case NV_OF_ERR_GENERIC:
      return "NV_OF_ERR_GENERIC";
  }
  return "NV_OF_STATUS(?)";
}

// The device's primary context (the CUDA runtime's), which the engine's session runs in.
CUcontext primary_context(int device) {
  using GetCurrent = CUresult (*)(CUcontext*);
  static const GetCurrent get = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f, 12000, cudaEnableDefault, &found);
    return found == cudaDriverEntryPointSuccess ? reinterpret_cast<GetCurrent>(f) : nullptr;
  }();
  STOKER_ENFORCE(get != nullptr, RuntimeError, "NVOFA: the CUDA driver has no cuCtxGetCurrent");
  DeviceGuard guard(device);
  cuda_check(int(cudaFree(nullptr)), "NVOFA: initialising the device");  // the context exists
  CUcontext ctx = nullptr;
  STOKER_ENFORCE(get(&ctx) == CUDA_SUCCESS && ctx != nullptr, RuntimeError,
                 "NVOFA: no CUDA context on device ", device);
  return ctx;
}

}  // namespace

std::string nvof_unavailable(int device) {
  if (!library().why.empty()) return library().why;
  static std::mutex mutex;
  static std::map<int, std::string> answers;
  std::lock_guard lock(mutex);
  if (auto it = answers.find(device); it != answers.end()) return it->second;
  std::string why;
  try {
    const auto& api = library().api;
    NvOFHandle h = nullptr;
    NV_OF_STATUS s = api.nvCreateOpticalFlowCuda(primary_context(device), &h);
    if (s != NV_OF_SUCCESS)
      why = std::string("this GPU has no optical-flow engine (") + status_name(s) + ")";
    if (h) api.nvOFDestroy(h);
  } catch (const std::exception& e) {
    why = e.what();
  }
  return answers.emplace(device, why).first->second;
}

struct NvofEngine::Impl {
  struct Buffer {
    NvOFGPUBufferHandle handle = nullptr;
    uint8_t* data = nullptr;
    int64_t pitch = 0;  // bytes per row
  };

  int device = 0;
  OpticalFlowParams params;
  CUcontext ctx = nullptr;
  NvOFHandle session = nullptr;
  int64_t width = 0, height = 0;
  Buffer inputs[2], output, hints;
  StreamHandle streams_set = nullptr;
  bool streams_known = false;

  const NV_OF_CUDA_API_FUNCTION_LIST& api() const { return library().api; }

  void check(NV_OF_STATUS s, const char* what) const {
    if (s == NV_OF_SUCCESS) return;
    std::string detail;
    if (session) {
      char text[MIN_ERROR_STRING_SIZE * 4] = {};
      uint32_t size = sizeof(text);
      if (api().nvOFGetLastError(session, text, &size) == NV_OF_SUCCESS && text[0])
        detail = std::string(": ") + text;
    }
    throw RuntimeError(std::string("NVOFA: ") + what + " failed (" + status_name(s) + ")" + detail);
  }

  std::vector<uint32_t> caps(NV_OF_CAPS cap) const {
    uint32_t n = 0;
    check(api().nvOFGetCaps(session, cap, nullptr, &n), "asking the engine's capabilities");
    std::vector<uint32_t> values(n);
    if (n) check(api().nvOFGetCaps(session, cap, values.data(), &n), "asking its capabilities");
    return values;
  }

  Buffer make_buffer(int64_t w, int64_t h, NV_OF_BUFFER_USAGE usage, NV_OF_BUFFER_FORMAT format) {
    NV_OF_BUFFER_DESCRIPTOR desc{};
    desc.width = uint32_t(w), desc.height = uint32_t(h);
    desc.bufferUsage = usage, desc.bufferFormat = format;
    Buffer b;
    check(api().nvOFCreateGPUBufferCuda(session, &desc, NV_OF_CUDA_BUFFER_TYPE_CUDEVICEPTR,
                                        &b.handle),
          "creating a buffer");
    b.data = reinterpret_cast<uint8_t*>(uintptr_t(api().nvOFGPUBufferGetCUdeviceptr(b.handle)));
    NV_OF_CUDA_BUFFER_STRIDE_INFO stride{};
    check(api().nvOFGPUBufferGetStrideInfo(b.handle, &stride), "asking a buffer's stride");
    b.pitch = int64_t(stride.strideInfo[0].strideXInBytes);
    return b;
  }

  void close() {
    for (Buffer* b : {&inputs[0], &inputs[1], &output, &hints})
      if (b->handle) api().nvOFDestroyGPUBufferCuda(b->handle), *b = Buffer{};
    if (session) api().nvOFDestroy(session), session = nullptr;
    width = height = 0;
    streams_known = false;
  }

  static std::string list(const std::vector<uint32_t>& v) {
    std::string s;
    for (uint32_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
    return s;
  }
};

NvofEngine::NvofEngine(int device, const OpticalFlowParams& params)
    : impl_(std::make_unique<Impl>()) {
  const std::string why = nvof_unavailable(device);
  STOKER_ENFORCE(why.empty(), RuntimeError, "optical_flow: ", why);
  impl_->device = device;
  impl_->params = params;
  impl_->ctx = primary_context(device);
}

NvofEngine::~NvofEngine() {
  DeviceGuard guard(impl_->device);
  impl_->close();
}

void NvofEngine::prepare(int64_t width, int64_t height) {
  Impl& m = *impl_;
  if (m.session && width == m.width && height == m.height) return;
  DeviceGuard guard(m.device);
  m.close();
  m.check(m.api().nvCreateOpticalFlowCuda(m.ctx, &m.session), "opening a session");
  const auto& p = m.params;
  auto grids = m.caps(NV_OF_CAPS_SUPPORTED_OUTPUT_GRID_SIZES);
  STOKER_ENFORCE(std::count(grids.begin(), grids.end(), uint32_t(p.output_grid)) > 0, ValueError,
                 "optical_flow: output_grid ", p.output_grid,
                 " is not offered by this GPU's engine (it offers ", Impl::list(grids), ")");
  if (p.external_hints) {
    auto hint_grids = m.caps(NV_OF_CAPS_SUPPORTED_HINT_GRID_SIZES);
    STOKER_ENFORCE(std::count(hint_grids.begin(), hint_grids.end(), uint32_t(p.hint_grid)) > 0,
                   ValueError, "optical_flow: hint_grid ", p.hint_grid,
                   " is not offered by this GPU's engine (it offers ", Impl::list(hint_grids), ")");
  }
  const auto w_min = m.caps(NV_OF_CAPS_WIDTH_MIN), w_max = m.caps(NV_OF_CAPS_WIDTH_MAX);
  const auto h_min = m.caps(NV_OF_CAPS_HEIGHT_MIN), h_max = m.caps(NV_OF_CAPS_HEIGHT_MAX);
  const bool fits = !w_min.empty() && !w_max.empty() && !h_min.empty() && !h_max.empty() &&
                    width >= w_min[0] && width <= w_max[0] && height >= h_min[0] &&
                    height <= h_max[0];
  if (!fits) {
    const std::string range = w_min.empty() || h_min.empty() || w_max.empty() || h_max.empty()
                                  ? "(the engine gave no range)"
                                  : std::to_string(w_min[0]) + "x" + std::to_string(h_min[0]) +
                                        " to " + std::to_string(w_max[0]) + "x" +
                                        std::to_string(h_max[0]);
    m.close();
    throw ValueError("optical_flow: frames of " + std::to_string(width) + "x" +
                     std::to_string(height) + " are outside the engine's sizes, " + range);
  }
  NV_OF_INIT_PARAMS init{};
  init.width = uint32_t(width), init.height = uint32_t(height);
  init.outGridSize = NV_OF_OUTPUT_VECTOR_GRID_SIZE(p.output_grid);
  init.hintGridSize = p.external_hints ? NV_OF_HINT_VECTOR_GRID_SIZE(p.hint_grid)
                                       : NV_OF_HINT_VECTOR_GRID_SIZE_UNDEFINED;
  init.mode = NV_OF_MODE_OPTICALFLOW;
  // DALI's mapping of its preset onto the three levels.
  init.perfLevel = p.preset < 0.375f  ? NV_OF_PERF_LEVEL_SLOW
                   : p.preset < 0.75f ? NV_OF_PERF_LEVEL_MEDIUM
                                      : NV_OF_PERF_LEVEL_FAST;
  init.enableExternalHints = p.external_hints ? NV_OF_TRUE : NV_OF_FALSE;
  init.enableOutputCost = NV_OF_FALSE;
  init.predDirection = NV_OF_PRED_DIRECTION_FORWARD;
  init.inputBufferFormat = p.gray ? NV_OF_BUFFER_FORMAT_GRAYSCALE8 : NV_OF_BUFFER_FORMAT_ABGR8;
  m.check(m.api().nvOFInit(m.session, &init), "initialising the session");
  for (auto& b : m.inputs)
    b = m.make_buffer(width, height, NV_OF_BUFFER_USAGE_INPUT, init.inputBufferFormat);
  const int g = p.output_grid, hg = p.hint_grid;
  m.output = m.make_buffer((width + g - 1) / g, (height + g - 1) / g, NV_OF_BUFFER_USAGE_OUTPUT,
                           NV_OF_BUFFER_FORMAT_SHORT2);
  if (p.external_hints)
    m.hints = m.make_buffer((width + hg - 1) / hg, (height + hg - 1) / hg, NV_OF_BUFFER_USAGE_HINT,
                            NV_OF_BUFFER_FORMAT_SHORT2);
  m.width = width, m.height = height;
}

void NvofEngine::pack(int slot, const uint8_t* frame, int channels, bool bgr, StreamHandle stream) {
  Impl& m = *impl_;
  STOKER_ASSERT(m.session && (slot == 0 || slot == 1), "NvofEngine::pack before prepare");
  STOKER_ASSERT((channels == 1) == m.params.gray, "frames of ", channels,
                " channels for an engine opened for ", m.params.gray ? 1 : 3);
  DeviceGuard guard(m.device);
  cuda_check(pack_flow_frame_gpu(frame, m.height, m.width, channels, bgr, m.inputs[slot].data,
                                 m.inputs[slot].pitch, stream),
             "optical_flow: packing a frame");
}

void NvofEngine::run(int input, int reference, float* out, const float* hints,
                     StreamHandle stream) {
  Impl& m = *impl_;
  STOKER_ASSERT(m.session, "NvofEngine::run before prepare");
  DeviceGuard guard(m.device);
  if (!m.streams_known || m.streams_set != stream) {
    m.check(m.api().nvOFSetIOCudaStreams(m.session, CUstream(stream), CUstream(stream)),
            "setting its streams");
    m.streams_set = stream, m.streams_known = true;
  }
  NV_OF_EXECUTE_INPUT_PARAMS in{};
  in.inputFrame = m.inputs[input].handle;
  in.referenceFrame = m.inputs[reference].handle;
  in.disableTemporalHints = m.params.temporal_hints ? NV_OF_FALSE : NV_OF_TRUE;
  if (m.params.external_hints) {
    STOKER_ASSERT(hints != nullptr, "external hints expected");
    cuda_check(encode_flow_gpu(hints, hint_height(), hint_width(),
                               reinterpret_cast<int16_t*>(m.hints.data), m.hints.pitch, stream),
               "optical_flow: encoding the hints");
    in.externalHints = m.hints.handle;
  }
  NV_OF_EXECUTE_OUTPUT_PARAMS result{};
  result.outputBuffer = m.output.handle;
  m.check(m.api().nvOFExecute(m.session, &in, &result), "computing a flow");
  cuda_check(decode_flow_gpu(reinterpret_cast<const int16_t*>(m.output.data), m.output.pitch,
                             out_height(), out_width(), out, stream),
             "optical_flow: decoding the vectors");
}

int64_t NvofEngine::out_width() const {
  return (impl_->width + impl_->params.output_grid - 1) / impl_->params.output_grid;
}
int64_t NvofEngine::out_height() const {
  return (impl_->height + impl_->params.output_grid - 1) / impl_->params.output_grid;
}
int64_t NvofEngine::hint_width() const {
  return (impl_->width + impl_->params.hint_grid - 1) / impl_->params.hint_grid;
}
int64_t NvofEngine::hint_height() const {
  return (impl_->height + impl_->params.hint_grid - 1) / impl_->params.hint_grid;
}

#else  // no CUDA

std::string nvof_unavailable(int) { return "stoker was built without CUDA"; }
struct NvofEngine::Impl {};
NvofEngine::NvofEngine(int, const OpticalFlowParams&) {
  throw RuntimeError("optical_flow: stoker was built without CUDA");
}
NvofEngine::~NvofEngine() = default;
void NvofEngine::prepare(int64_t, int64_t) {}
void NvofEngine::pack(int, const uint8_t*, int, bool, StreamHandle) {}
void NvofEngine::run(int, int, float*, const float*, StreamHandle) {}
int64_t NvofEngine::out_width() const { return 0; }
int64_t NvofEngine::out_height() const { return 0; }
int64_t NvofEngine::hint_width() const { return 0; }
int64_t NvofEngine::hint_height() const { return 0; }

#endif

}  // namespace stoker::kernels
