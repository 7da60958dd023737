#include "stoker/core/gpu_monitor.hpp"

#include <dlfcn.h>

#include <chrono>

#include "stoker/core/affinity.hpp"

#ifdef STOKER_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stoker {
namespace {

// The few NVML entry points used, with NVML's C types (nvml.h is not needed to build).
using NvmlReturn = int;  // NVML_SUCCESS is 0
struct NvmlUtilization {
  unsigned int gpu, memory;
};
struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*by_pci)(const char*, void**) = nullptr;
  NvmlReturn (*utilization)(void*, NvmlUtilization*) = nullptr;
  NvmlReturn (*jpg)(void*, unsigned int*, unsigned int*) = nullptr;  // absent before R520
  std::string why;  // empty: loaded and initialised
};

// Loaded and initialised once per process (never unloaded: other threads may still sample).
const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml r;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      r.why = "libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) not found";
      return r;
    }
    r.init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    r.by_pci = reinterpret_cast<NvmlReturn (*)(const char*, void**)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    r.utilization = reinterpret_cast<NvmlReturn (*)(void*, NvmlUtilization*)>(
        dlsym(lib, "nvmlDeviceGetUtilizationRates"));
    r.jpg = reinterpret_cast<NvmlReturn (*)(void*, unsigned int*, unsigned int*)>(
        dlsym(lib, "nvmlDeviceGetJpgUtilization"));
    if (!r.init || !r.by_pci || !r.utilization)
      r.why =
          "NVML lacks nvmlInit_v2 / nvmlDeviceGetHandleByPciBusId_v2 / "
          "nvmlDeviceGetUtilizationRates";
    else if (NvmlReturn e = r.init(); e != 0)
      r.why = "nvmlInit_v2 failed (NVML error " + std::to_string(e) + ")";
    return r;
  }();
  return n;
}

}  // namespace

GpuMonitor::GpuMonitor(int cuda_device, double period_seconds)
    : device_(cuda_device), period_(period_seconds) {
#ifdef STOKER_HAVE_CUDA
  const Nvml& n = nvml();
  if (!n.why.empty()) {
    why_ = n.why;
    return;
  }
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device_) != cudaSuccess) {
    cudaGetLastError();
    why_ = "no PCI bus id for CUDA device " + std::to_string(device_);
    return;
  }
  if (NvmlReturn e = n.by_pci(bus, &handle_); e != 0) {
    handle_ = nullptr;
    why_ =
        std::string("NVML does not know the GPU at ") + bus + " (error " + std::to_string(e) + ")";
  }
#else
  why_ = "stoker was built without CUDA";
#endif
}

GpuMonitor::~GpuMonitor() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void GpuMonitor::start() {
  std::lock_guard lock(mutex_);
  if (started_ || !handle_) return;
  started_ = true;
  thread_ = std::thread([this] { loop(); });
}

void GpuMonitor::loop() {
  set_thread_name("stoker-nvml");
  const Nvml& n = nvml();
  const auto period = std::chrono::duration<double>(period_);
  std::unique_lock lock(mutex_);
  while (!stop_cv_.wait_for(lock, period, [&] { return stop_; })) {
    lock.unlock();
    NvmlUtilization u{};
    unsigned int jpg = 0, jpg_period = 0;
    const bool ok = n.utilization(handle_, &u) == 0;
    const bool jpg_ok = n.jpg && n.jpg(handle_, &jpg, &jpg_period) == 0;
    lock.lock();
    if (!ok) continue;
    ++samples_, sm_sum_ += u.gpu;
    if (jpg_ok) ++jpg_samples_, jpg_sum_ += jpg;
  }
}

GpuUtilization GpuMonitor::read() const {
  std::lock_guard lock(mutex_);
  GpuUtilization r;
  r.available = handle_ != nullptr;
  r.why = why_;
  r.samples = samples_;
  r.sm_percent = samples_ ? sm_sum_ / double(samples_) : 0.0;
  r.nvjpg_percent = jpg_samples_ ? jpg_sum_ / double(jpg_samples_) : -1.0;
  return r;
}

}  // namespace stoker
