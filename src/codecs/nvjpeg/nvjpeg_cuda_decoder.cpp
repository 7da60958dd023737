// nvJPEG's CUDA decoders through the decoupled API (see nvjpeg_decoder.hpp): per image, the host
// phase on the calling thread, then the transfer and the device phase on its slot's stream.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVJPEG
#include "stoker/codecs/nvjpeg/nvjpeg_api.hpp"
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVJPEG
using nvjpeg_detail::api;
using nvjpeg_detail::check;

bool nvjpeg_cuda_available(int device, std::string* why) {
  const auto& h = nvjpeg_detail::shared_handle(device);
  if (why) *why = h.why;
  return h.handle != nullptr;
}

namespace {
constexpr int kHybrid = 0, kGpuHybrid = 1;  // Huffman on the host / on the GPU

// Adds the seconds since `t` to `to` and restarts `t`.
void lap(std::atomic<double>& to, std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  to.fetch_add(std::chrono::duration<double>(now - t).count(), std::memory_order_relaxed);
  t = now;
}
}  // namespace

struct NvjpegCudaDecoder::State {
  // What one thread decodes with. The pinned buffer (the host phase's output, copied to the
  // device by the transfer) alternates between two pages so the host phase of an image can
  // run while the previous image's transfer may still read the other page.
  struct Slot {
    nvjpegJpegState_t states[2] = {};  // per backend (kHybrid, kGpuHybrid)
    nvjpegJpegStream_t parsed = nullptr;
    nvjpegDecodeParams_t params = nullptr;
    nvjpegBufferPinned_t pinned[2] = {};
    nvjpegBufferDevice_t device_buffer = nullptr;
    std::unique_ptr<CudaStream> stream;
    CudaEvent done;     // recorded after the slot's latest image
    bool used = false;  // `done` has been recorded
    CudaEvent marked;   // mark(): the slot's work so far, for the join stream to wait on
    int page = 0;
    // The largest JPEG (bytes) and window (pixels) decoded per backend and page: nvJPEG sizes
    // the state's and buffers' memory to them, so a larger one allocates (decode()'s `grew`).
    int64_t largest_bytes[2][2] = {}, largest_pixels[2][2] = {};
    // Thread seconds in each phase (NvjpegCudaPhases), written by the slot's thread only.
    std::atomic<double> phase[4] = {};
  };
  int device = 0;
  nvjpegHandle_t handle = nullptr;
  nvjpegJpegDecoder_t decoders[2] = {};
  int64_t gpu_huffman_threshold = 0;
  std::vector<std::unique_ptr<Slot>> slots;
  std::unique_ptr<CudaEvent> begun;
  // mark(): waits for the slots' events, one event after it; calls take turns (the CPU and the
  // mixed stages may mark at once).
  std::unique_ptr<CudaStream> join;
  std::mutex join_mutex;

  ~State() {
    const auto& a = api();
    for (auto& s : slots) {
      // nvJPEG objects may still be in use by queued work: let the slot's stream finish.
      if (s->stream) s->stream->synchronize();
      for (auto st : s->states)
        if (st) a.state_destroy(st);
      if (s->parsed) a.stream_destroy(s->parsed);
      if (s->params) a.params_destroy(s->params);
      for (auto p : s->pinned)
        if (p) a.pinned_destroy(p);
      if (s->device_buffer) a.device_destroy(s->device_buffer);
    }
    for (auto d : decoders)
      if (d) a.decoder_destroy(d);
  }
};

NvjpegCudaDecoder::NvjpegCudaDecoder(int device, int slots, int64_t gpu_huffman_threshold)
    : state_(std::make_unique<State>()) {
  std::string why;
  STOKER_ENFORCE(nvjpeg_cuda_available(device, &why), RuntimeError,
                 "nvJPEG CUDA decoder unavailable: ", why);
  STOKER_ENFORCE(slots > 0, ValueError, "NvjpegCudaDecoder: slots must be positive, got ", slots);
  const auto& a = api();
  auto& st = *state_;
  st.device = device;
  st.handle = nvjpeg_detail::shared_handle(device).handle;
  st.gpu_huffman_threshold = gpu_huffman_threshold;
  DeviceGuard guard(device);
  check(a.decoder_create(st.handle, NVJPEG_BACKEND_HYBRID, &st.decoders[kHybrid]),
        "creating the hybrid decoder");
  check(a.decoder_create(st.handle, NVJPEG_BACKEND_GPU_HYBRID, &st.decoders[kGpuHybrid]),
        "creating the GPU-hybrid decoder");
  st.begun = std::make_unique<CudaEvent>();
  st.join = std::make_unique<CudaStream>(device);
  for (int k = 0; k < slots; ++k) {
    auto s = std::make_unique<State::Slot>();
    auto* slot = s.get();
    st.slots.push_back(std::move(s));  // owned from here: the destructor frees what was made
    for (int b : {kHybrid, kGpuHybrid})
      check(a.decoder_state_create(st.handle, st.decoders[b], &slot->states[b]),
            "creating a decoder state");
    check(a.stream_create(st.handle, &slot->parsed), "creating a stream parser");
    check(a.params_create(st.handle, &slot->params), "creating decode parameters");
    for (auto& p : slot->pinned) check(a.pinned_create(st.handle, nullptr, &p), "pinned buffer");
    check(a.device_create(st.handle, nullptr, &slot->device_buffer), "device buffer");
    slot->stream = std::make_unique<CudaStream>(device);
  }
}

NvjpegCudaDecoder::~NvjpegCudaDecoder() = default;

int NvjpegCudaDecoder::slots() const { return int(state_->slots.size()); }

void NvjpegCudaDecoder::begin(StreamHandle stream) {
  DeviceGuard guard(state_->device);
  state_->begun->record(stream);
  for (auto& s : state_->slots) state_->begun->wait_on(s->stream->get());
}

std::shared_ptr<CudaEvent> NvjpegCudaDecoder::mark(const std::vector<int>& slots) {
  auto& st = *state_;
  if (slots.empty()) return nullptr;
  DeviceGuard guard(st.device);
  std::lock_guard lock(st.join_mutex);
  // A wait takes the event as last recorded: each slot's event is free again once waited on.
  for (int k : slots) {
    STOKER_ASSERT(k >= 0 && k < int(st.slots.size()), "slot ", k, " out of range");
    auto& s = *st.slots[size_t(k)];
    s.marked.record(s.stream->get());
    s.marked.wait_on(st.join->get());
  }
  auto done = std::make_shared<CudaEvent>();
  done->record(st.join->get());
  return done;
}

NvjpegCudaPhases NvjpegCudaDecoder::phase_seconds() const {
  NvjpegCudaPhases sum;
  for (const auto& s : state_->slots)
    for (int k = 0; k < 4; ++k) sum.seconds[k] += s->phase[k].load(std::memory_order_relaxed);
  return sum;
}

bool NvjpegCudaDecoder::decode(const NvjpegJob& job, bool bgr, int slot, bool* grew) {
  auto& st = *state_;
  STOKER_ASSERT(slot >= 0 && slot < int(st.slots.size()), "slot ", slot, " out of range");
  auto& s = *st.slots[size_t(slot)];
  const auto& a = api();
  DeviceGuard guard(st.device);  // pool threads may have another device current
  if (a.stream_parse(st.handle, job.data, job.size, 0, 0, s.parsed) != NVJPEG_STATUS_SUCCESS)
    return false;
  // Huffman decoding on the GPU pays off for large images only; it covers every row above the
  // window's bottom, in full width. Progressive JPEGs too: nvJPEG 13 reports them as supported
  // by the GPU-hybrid backend (nvjpegDecoderJpegSupported) and decodes them to the same
  // pixels as the hybrid one, at about two thirds of a thread's time (DALI keeps them on the
  // host; docs/findings.md).
  const bool gpu_huffman = (job.y + job.h) * job.w > st.gpu_huffman_threshold;
  const int b = gpu_huffman ? kGpuHybrid : kHybrid;
  const int64_t bytes = int64_t(job.size), pixels = int64_t(job.w) * job.h;
  int64_t& most_bytes = s.largest_bytes[b][s.page];
  int64_t& most_pixels = s.largest_pixels[b][s.page];
  if (grew) *grew = bytes > most_bytes || pixels > most_pixels;
  most_bytes = std::max(most_bytes, bytes), most_pixels = std::max(most_pixels, pixels);
  nvjpeg_detail::set_window(s.params, job, bgr);
  auto t = std::chrono::steady_clock::now();
  check(a.attach_pinned(s.states[b], s.pinned[s.page]), "attaching a pinned buffer");
  const nvjpegStatus_t host =
      a.decode_host(st.handle, st.decoders[b], s.states[b], s.params, s.parsed);
  lap(s.phase[kPhaseHost], t);
  if (host != NVJPEG_STATUS_SUCCESS) return false;
  // The previous image's transfer must be done before the next host phase reuses its page:
  // waiting here (after this host phase) keeps one image of GPU work overlapping the host.
  if (s.used) s.done.synchronize();
  lap(s.phase[kPhaseWait], t);
  check(a.attach_device(s.states[b], s.device_buffer), "attaching a device buffer");
  const auto cuda = cudaStream_t(s.stream->get());
  const nvjpegStatus_t transfer =
      a.transfer(st.handle, st.decoders[b], s.states[b], s.parsed, cuda);
  lap(s.phase[kPhaseTransfer], t);
  if (transfer != NVJPEG_STATUS_SUCCESS) {
    s.stream->synchronize();  // what it queued before failing ends before the page is reused
    return false;
  }
  nvjpegImage_t out{};
  out.channel[0] = job.out;
  out.pitch[0] = static_cast<unsigned int>(job.pitch);
  const nvjpegStatus_t status = a.decode_device(st.handle, st.decoders[b], s.states[b], &out, cuda);
  lap(s.phase[kPhaseDevice], t);
  s.done.record(s.stream->get());
  s.used = true;
  // The page turns only once GPU work was queued: after an image refused in its host phase,
  // the other page may still be read by the previous image's transfer.
  s.page ^= 1;
  return status == NVJPEG_STATUS_SUCCESS;
}

#else  // built without nvjpeg.h

bool nvjpeg_cuda_available(int, std::string* why) {
  if (why) *why = "stoker was built without nvjpeg.h";
  return false;
}
struct NvjpegCudaDecoder::State {};
NvjpegCudaDecoder::NvjpegCudaDecoder(int, int, int64_t) {
  throw RuntimeError("nvJPEG CUDA decoder unavailable: stoker was built without nvjpeg.h");
}
NvjpegCudaDecoder::~NvjpegCudaDecoder() = default;
int NvjpegCudaDecoder::slots() const { return 0; }
void NvjpegCudaDecoder::begin(StreamHandle) {}
std::shared_ptr<CudaEvent> NvjpegCudaDecoder::mark(const std::vector<int>&) { return nullptr; }
bool NvjpegCudaDecoder::decode(const NvjpegJob&, bool, int, bool*) { return false; }
NvjpegCudaPhases NvjpegCudaDecoder::phase_seconds() const { return {}; }

#endif

}  // namespace stoker::codecs
