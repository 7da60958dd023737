// CUDA streams, events and copies as small owning objects, declared without the CUDA headers so
// that every layer can hold them. In a build without CUDA, or on a machine without a device,
// constructing one throws RuntimeError saying so; nothing else changes.
//
// Streams are created non-blocking (they never synchronise with the legacy default stream);
// events without timing. A null `stream` argument means the legacy default stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// Functions a kernel header defines once for the CPU and the GPU.
#ifdef __CUDACC__
#define STOKER_HOST_DEVICE __host__ __device__
#else
#define STOKER_HOST_DEVICE
#endif

namespace stoker {

using StreamHandle = void*;  // a cudaStream_t

// Throws RuntimeError "what: <CUDA's message>" when `error` (a cudaError_t) is not success.
void cuda_check(int error, std::string_view what);

// Makes `device` current for its lifetime and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

class CudaStream {
 public:
  // A non-blocking stream on `device`.
  explicit CudaStream(int device);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  StreamHandle get() const { return stream_; }
  int device() const { return device_; }
  void synchronize() const;

 private:
  StreamHandle stream_ = nullptr;
  int device_ = 0;
};

class CudaEvent {
 public:
  // `timing`: the event also records when the work finished (elapsed_seconds); events without
  // it are cheaper for ordering only.
  explicit CudaEvent(bool timing = false);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  // Captures the work queued on `stream` so far. The event follows the stream's device (it is
  // remade there when it was made on another), so any thread may record on any GPU's stream.
  void record(StreamHandle stream);
  // Makes `stream` wait (on the device, without blocking the host) for the captured work.
  void wait_on(StreamHandle stream) const;
  void synchronize() const;  // blocks the host until the captured work has finished
  // Without blocking. Once the captured work is known to have finished, later calls answer
  // without asking the driver (until the next record): one event may guard many buffers
  // (Buffer::record_use), and every driver call contends with the training thread's launches.
  bool done() const;
  void* get() const { return event_; }

 private:
  void* event_ = nullptr;
  int device_ = 0;
  bool timing_ = false;
  mutable std::atomic<bool> finished_{false};
};

// Seconds of GPU time between two timing events (both recorded and done(), same device).
double elapsed_seconds(const CudaEvent& from, const CudaEvent& to);

// An event capturing the work queued so far on `stream` when it is a stoker CudaStream that
// still exists, else null (a destroyed stream finished its work: its owner synchronised it).
// For memory stoker borrows (Buffer::wrap), released after its streams were destroyed.
// Never throws: when no event can be made, it waits for the stream instead and returns null.
std::shared_ptr<CudaEvent> record_if_live(StreamHandle stream) noexcept;

// Records `event` on `stream` unless `stream` is a stoker CudaStream that has been destroyed
// (its work finished: ~CudaStream waits for it; a recording on a destroyed stream's handle is
// undefined behaviour in CUDA, which we believe crashed a test on the H100). Streams stoker did
// not make (the consumer's) are assumed alive. Returns whether it recorded; throws what
// record() throws.
bool record_unless_destroyed(CudaEvent& event, StreamHandle stream);

// One piece of a copy made of many (a batch's samples).
struct CopyPiece {
  void* dst;
  const void* src;
  size_t bytes;
};
// The same copy in fewer pieces: each piece that continues the previous one in both source and
// destination joins it (zero-byte pieces are dropped; the order is kept). A batch whose samples
// lie back to back on both sides becomes one copy. Why: every CUDA call takes the driver's
// locks, which the training thread's kernel launches need too (docs/findings.md).
std::vector<CopyPiece> merge_adjacent_copies(const std::vector<CopyPiece>& pieces);

// Asynchronous copies on `stream` (pinned host memory for true asynchrony; pageable host memory
// makes CUDA stage the copy).
void copy_to_device_async(void* dst, const void* src, size_t bytes, StreamHandle stream);
void copy_to_host_async(void* dst, const void* src, size_t bytes, StreamHandle stream);
void copy_device_async(void* dst, const void* src, size_t bytes, StreamHandle stream);
// `rows` rows of `width` bytes on the device, `src_pitch` and `dst_pitch` bytes apart.
void copy_device_rows_async(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                            size_t width, size_t rows, StreamHandle stream);
void synchronize_stream(StreamHandle stream);
// The error left by the last kernel launch on this thread (0: none), cleared.
int last_cuda_error();
// The CUDA device count (0 without CUDA or a driver).
int cuda_device_count();
// What `stoker info` reports of a device, and the CUDA runtime and driver versions (e.g. 13000;
// 0 without CUDA or a driver).
struct CudaDeviceInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  size_t memory = 0;         // bytes
};
CudaDeviceInfo cuda_device_info(int device);
int cuda_runtime_version();
int cuda_driver_version();
// The GPU whose memory `p` points into (device or managed memory), or -1 (host memory, or
// no CUDA).
int cuda_device_of(const void* p);

}  // namespace stoker
