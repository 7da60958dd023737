#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"

#include <chrono>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVJPEG
#include "stoker/codecs/nvjpeg/nvjpeg_api.hpp"
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVJPEG
using nvjpeg_detail::api;
using nvjpeg_detail::check;
using nvjpeg_detail::set_window;

bool nvjpeg_hardware_available(int device, std::string* why) {
  const auto& h = nvjpeg_detail::shared_handle(device);
  if (why) *why = h.handle && !h.hardware ? "this GPU has no hardware JPEG decoder" : h.why;
  return h.handle && h.hardware;
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
  // The last batch's work on its stream: the state is destroyed only after it.
  std::unique_ptr<CudaEvent> last_batch;
  ~State() {
    try {
      if (last_batch) last_batch->synchronize();  // the engines may still write into the state
    } catch (const std::exception&) {             // a failed device: nothing to wait for
    }
    for (auto p : params) api().params_destroy(p);
    for (auto [st, pa] : probes) api().stream_destroy(st), api().params_destroy(pa);
    if (state) api().state_destroy(state);
  }
};

NvjpegHardwareDecoder::NvjpegHardwareDecoder(int device) : state_(std::make_unique<State>()) {
  std::string why;
  STOKER_ENFORCE(nvjpeg_hardware_available(device, &why), RuntimeError,
                 "nvJPEG hardware decoder unavailable: ", why);
  state_->device = device;
  state_->handle = nvjpeg_detail::shared_handle(device).handle;
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

double NvjpegHardwareDecoder::decode(const std::vector<Job>& jobs, bool bgr, StreamHandle stream) {
  if (jobs.empty()) return 0;
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
  // The engines get the batch only once the stream is idle. With work still queued on it,
  // nvjpegDecodeBatchedEx hung on an H100 (cuEventSynchronize inside it never returned, the
  // engines idle) in about half the runs whose batch size changed between batches, also when
  // only the re-initialisation below waited; waiting here every batch, it never did in the
  // same runs (docs/findings.md). The wait is short: the stream holds
  // the last batch's uploads and the output allocation's waits.
  const auto wait_start = std::chrono::steady_clock::now();
  synchronize_stream(stream);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
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
  if (!state_->last_batch) state_->last_batch = std::make_unique<CudaEvent>();
  state_->last_batch->record(stream);  // after a failure too: what was queued must finish
  if (st != NVJPEG_STATUS_SUCCESS) state_->initialized_n = -1;  // nvJPEG: re-init after a failure
  check(st, "decoding a batch");
  return waited;
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
double NvjpegHardwareDecoder::decode(const std::vector<Job>&, bool, StreamHandle) { return 0; }

#endif

}  // namespace stoker::codecs
