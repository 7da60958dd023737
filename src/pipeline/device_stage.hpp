// A device stage: the graph's mixed nodes (decoders, copies to the device) or its gpu nodes
// (kernels), run for each iteration on the stage's own CUDA stream. An iteration moves on with
// an event, so the mixed stage decodes iteration i+1 while the gpu stage plans and launches the
// kernels of iteration i, and nothing waits for the GPU on the host; the last stage's device
// outputs carry its event to the consumer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stoker/core/cuda.hpp"
#include "stoker/core/thread_pool.hpp"
#include "stoker/pipeline/gpu_timer.hpp"
#include "stoker/pipeline/stage.hpp"

namespace stoker::pipeline {

class DeviceStage : public Stage {
 public:
  // `nodes`: the stage's, in graph order. `last`: it fills the iteration's outputs. With
  // `planning_threads` > 0 the stage plans (filter tables, windows) on a pool of its own, so it
  // never waits behind the pool the CPU and mixed stages keep busy.
  DeviceStage(const StageContext& ctx, std::string name, std::vector<size_t> nodes, bool last,
              int planning_threads);
  ~DeviceStage() override;

  StreamHandle stream() const { return stream_->get(); }
  const ThreadPool* planning_pool() const { return pool_.get(); }
  // Once the thread has ended: waits for the stream's work and reports its last GPU times. No
  // buffer may record use of this stream afterwards (the pools forget it).
  void finish();

 protected:
  void process(Iteration& it) override;
  void begin() override;

 private:
  std::vector<size_t> nodes_;
  bool last_;
  std::unique_ptr<CudaStream> stream_;
  std::unique_ptr<ThreadPool> pool_;
  GpuTimer timer_;
};

}  // namespace stoker::pipeline
