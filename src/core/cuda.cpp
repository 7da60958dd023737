#include "stoker/core/cuda.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stoker {

std::vector<CopyPiece> merge_adjacent_copies(const std::vector<CopyPiece>& pieces) {
  std::vector<CopyPiece> out;
  for (const CopyPiece& p : pieces) {
    if (p.bytes == 0) continue;
    if (!out.empty()) {
      CopyPiece& last = out.back();
      if (static_cast<char*>(last.dst) + last.bytes == p.dst &&
          static_cast<const char*>(last.src) + last.bytes == p.src) {
        last.bytes += p.bytes;
        continue;
      }
    }
    out.push_back(p);
  }
  return out;
}

#ifdef STOKER_HAVE_CUDA

void cuda_check(int error, std::string_view what) {
  if (error == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  throw RuntimeError(detail::concat(what, ": ", cudaGetErrorString(cudaError_t(error)), " (",
                                    cudaGetErrorName(cudaError_t(error)), ")"));
}

DeviceGuard::DeviceGuard(int device) {
  cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) cuda_check(cudaSetDevice(device), "cudaSetDevice");
}
DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
}

namespace {
// The streams stoker created and has not destroyed, with their devices (record_if_live). The
// lock is held while a stream is destroyed, so a recording never races its destruction.
struct LiveStreams {
  std::mutex mutex;
  std::vector<std::pair<void*, int>> streams;
  // Handles of destroyed stoker streams (until the driver hands the address to a new one of
  // ours): buffers released later must not record on them.
  std::vector<void*> destroyed;
};
LiveStreams& live_streams() {
  static auto* live = new LiveStreams;  // never destroyed: buffers may be released at exit
  return *live;
}
}  // namespace

CudaStream::CudaStream(int device) : device_(device) {
  DeviceGuard guard(device);
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a CUDA stream");
  stream_ = s;
  auto& live = live_streams();
  std::lock_guard lock(live.mutex);
  live.streams.emplace_back(stream_, device_);
  std::erase(live.destroyed, stream_);
}
CudaStream::~CudaStream() {
  if (!stream_) return;
  auto& live = live_streams();
  std::lock_guard lock(live.mutex);
  std::erase_if(live.streams, [&](const auto& s) { return s.first == stream_; });
  live.destroyed.push_back(stream_);
  // Its work finishes first: buffers released later skip recording on it (see above).
  cudaStreamSynchronize(cudaStream_t(stream_));
  cudaStreamDestroy(cudaStream_t(stream_));
}

bool record_unless_destroyed(CudaEvent& event, StreamHandle stream) {
  auto& live = live_streams();
  std::lock_guard lock(live.mutex);  // no stream of ours is destroyed meanwhile
  if (std::find(live.destroyed.begin(), live.destroyed.end(), stream) != live.destroyed.end())
    return false;
  event.record(stream);
  return true;
}

std::shared_ptr<CudaEvent> record_if_live(StreamHandle stream) noexcept {
  auto& live = live_streams();
  std::lock_guard lock(live.mutex);
  auto it = std::find_if(live.streams.begin(), live.streams.end(),
                         [&](const auto& s) { return s.first == stream; });
  if (it == live.streams.end()) return nullptr;
  try {
    DeviceGuard guard(it->second);
    auto e = std::make_shared<CudaEvent>();
    e->record(stream);
    return e;
  } catch (...) {
    cudaStreamSynchronize(cudaStream_t(stream));
    return nullptr;
  }
}
void CudaStream::synchronize() const {
  cuda_check(cudaStreamSynchronize(cudaStream_t(stream_)), "cudaStreamSynchronize");
}

CudaEvent::CudaEvent(bool timing) : timing_(timing) {
  cuda_check(cudaGetDevice(&device_), "cudaGetDevice");
  cudaEvent_t e = nullptr;
  cuda_check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming),
             "creating a CUDA event");
  event_ = e;
}
CudaEvent::~CudaEvent() {
  if (event_) cudaEventDestroy(cudaEvent_t(event_));
}
void CudaEvent::record(StreamHandle stream) {
  // The legacy (1) and per-thread (2) default streams and null are the current device's.
  int device = -1;
  const auto special = reinterpret_cast<uintptr_t>(stream);
  if (special <= 2)
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  else
    cuda_check(cudaStreamGetDevice(cudaStream_t(stream), &device), "cudaStreamGetDevice");
  DeviceGuard guard(device);
  if (device != device_) {  // an event records only on a stream of the device it was made on
    cudaEvent_t e = nullptr;
    cuda_check(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming),
               "creating a CUDA event");
    cudaEventDestroy(cudaEvent_t(event_));
    event_ = e;
    device_ = device;
  }
  finished_.store(false, std::memory_order_relaxed);
  cuda_check(cudaEventRecord(cudaEvent_t(event_), cudaStream_t(stream)), "cudaEventRecord");
}
void CudaEvent::wait_on(StreamHandle stream) const {
  cuda_check(cudaStreamWaitEvent(cudaStream_t(stream), cudaEvent_t(event_), 0),
             "cudaStreamWaitEvent");
}
void CudaEvent::synchronize() const {
  if (finished_.load(std::memory_order_acquire)) return;
  cuda_check(cudaEventSynchronize(cudaEvent_t(event_)), "cudaEventSynchronize");
  finished_.store(true, std::memory_order_release);
}
bool CudaEvent::done() const {
  if (finished_.load(std::memory_order_acquire)) return true;
  cudaError_t e = cudaEventQuery(cudaEvent_t(event_));
  if (e == cudaErrorNotReady) return false;
  cuda_check(e, "cudaEventQuery");
  finished_.store(true, std::memory_order_release);
  return true;
}
double elapsed_seconds(const CudaEvent& from, const CudaEvent& to) {
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, cudaEvent_t(from.get()), cudaEvent_t(to.get())),
             "cudaEventElapsedTime");
  return ms / 1000.0;
}

void copy_to_device_async(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cudaStream_t(stream)),
             "copying to the device");
}
void copy_to_host_async(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, cudaStream_t(stream)),
             "copying to the host");
}
void copy_device_async(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  cuda_check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, cudaStream_t(stream)),
             "copying on the device");
}
void copy_device_rows_async(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                            size_t width, size_t rows, StreamHandle stream) {
  if (width == 0 || rows == 0) return;
  cuda_check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows,
                               cudaMemcpyDeviceToDevice, cudaStream_t(stream)),
             "copying rows on the device");
}
void synchronize_stream(StreamHandle stream) {
  cuda_check(cudaStreamSynchronize(cudaStream_t(stream)), "cudaStreamSynchronize");
}
int last_cuda_error() { return int(cudaGetLastError()); }
int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

CudaDeviceInfo cuda_device_info(int device) {
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  return {p.name, p.major, p.minor, p.totalGlobalMem};
}

int cuda_runtime_version() {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0;
}

int cuda_driver_version() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? v : 0;
}

int cuda_device_of(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? a.device : -1;
}

#else  // no CUDA in this build

namespace {
[[noreturn]] void no_cuda(std::string_view what) {
  throw RuntimeError(detail::concat(what, ": stoker was built without CUDA"));
}
}  // namespace

void cuda_check(int error, std::string_view what) {
  if (error != 0) no_cuda(what);
}
DeviceGuard::DeviceGuard(int) { no_cuda("selecting a CUDA device"); }
DeviceGuard::~DeviceGuard() = default;
CudaStream::CudaStream(int) { no_cuda("creating a CUDA stream"); }
std::shared_ptr<CudaEvent> record_if_live(StreamHandle) noexcept { return nullptr; }
bool record_unless_destroyed(CudaEvent&, StreamHandle) { return false; }
CudaStream::~CudaStream() = default;
void CudaStream::synchronize() const {}
CudaEvent::CudaEvent(bool) { no_cuda("creating a CUDA event"); }
CudaEvent::~CudaEvent() = default;
void CudaEvent::record(StreamHandle) {}
void CudaEvent::wait_on(StreamHandle) const {}
void CudaEvent::synchronize() const {}
bool CudaEvent::done() const { return true; }
double elapsed_seconds(const CudaEvent&, const CudaEvent&) { return 0; }
void copy_to_device_async(void*, const void*, size_t, StreamHandle) { no_cuda("copying"); }
void copy_to_host_async(void*, const void*, size_t, StreamHandle) { no_cuda("copying"); }
void copy_device_async(void*, const void*, size_t, StreamHandle) { no_cuda("copying"); }
void copy_device_rows_async(void*, size_t, const void*, size_t, size_t, size_t, StreamHandle) {
  no_cuda("copying");
}
void synchronize_stream(StreamHandle) {}
int last_cuda_error() { return 0; }
int cuda_device_count() { return 0; }
CudaDeviceInfo cuda_device_info(int) { no_cuda("querying a CUDA device"); }
int cuda_runtime_version() { return 0; }
int cuda_driver_version() { return 0; }
int cuda_device_of(const void*) { return -1; }

#endif

}  // namespace stoker
