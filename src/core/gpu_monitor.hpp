// GPU utilisation sampled through NVML while a pipeline runs: the share of time kernels ran
// (SM) and the hardware JPEG engines were busy (NVJPG), every 100 ms on a thread of its own.
// libnvidia-ml is loaded at run time (dlopen), so builds and machines without it work: the
// monitor then says why it has nothing. The CUDA device is found in NVML by its PCI bus id
// (NVML's indices ignore CUDA_VISIBLE_DEVICES).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace stoker {

struct GpuUtilization {
  bool available = false;
  std::string why;            // when not available
  int64_t samples = 0;        // since start()
  double sm_percent = 0;      // mean over the samples (kernels running)
  double nvjpg_percent = -1;  // mean over the samples; -1: NVML has no JPEG counter here
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("available", s.available), f("why", s.why), f("samples", s.samples),
        f("sm_percent", s.sm_percent), f("nvjpg_percent", s.nvjpg_percent);
  }
};

class GpuMonitor {
 public:
  explicit GpuMonitor(int cuda_device, double period_seconds = 0.1);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;
  // Starts sampling (once; later calls do nothing).
  void start();
  GpuUtilization read() const;

 private:
  void loop();
  int device_;
  double period_;
  void* handle_ = nullptr;  // nvmlDevice_t
  std::string why_;
  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false, started_ = false;
  int64_t samples_ = 0, jpg_samples_ = 0;
  double sm_sum_ = 0, jpg_sum_ = 0;
  std::thread thread_;
};

}  // namespace stoker
