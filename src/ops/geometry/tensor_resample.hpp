// The resampling of tensor_resize, shared with resize and resize_crop_mirror on layouts other
// than HWC (volumes: DHWC, CDHW): per sample, every axis's output extent and input region
// (tensor_resize_plan's AxisResize); a block of 2 or 3 adjacent axes is resampled, the axes
// before it are frames and those after it channels, resized independently. Two axes run
// through resize's kernel (resize_cpu; on the GPU the resampling kernel), three through a plane
// pass and a depth pass (resize_volume_cpu; on the GPU the same two passes, the second with the
// slices as rows).
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/kernels/resize/resample_weights.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/geometry/tensor_resize_plan.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// The batch's plan: per sample, the (at least 2-D) input shape and each axis's resize; the
// block of axes resampled.
struct TensorPlan {
  int added = 0;  // leading axes of extent 1 added to a 1-D input (not in the output)
  std::vector<std::vector<int64_t>> in_shapes;
  std::vector<std::vector<AxisResize>> axes;
  ResizeBlock block;
};

// Every sample's output shape (without the added axes).
std::vector<TensorShape> planned_shapes(const TensorPlan& p);

// The output dtype (resize_output_dtype), checked: the resampler takes and gives uint8, uint16,
// int16 or float32; ValueError naming the operator otherwise.
DType resampled_dtype(const OpSpec& spec, DType input);

// Runs plans with the operator's filters (interp_type, min_filter, mag_filter, antialias);
// the CPU scratch is per thread.
class TensorResampler {
 public:
  explicit TensorResampler(const OpSpec& spec) { filter_ = parse_interp(spec, antialias_); }

  // Before run_sample on a pool of `threads` threads.
  void ensure(int threads) {
    scratch_.ensure(threads);
    slices_.ensure(threads);
  }
  // Resamples sample i of `in` into sample i of `out` (host memory, shaped by planned_shapes;
  // dtypes uint8, uint16, int16 or float32), on thread `thread`'s scratch.
  void run_sample(const TensorPlan& p, const Batch& in, Batch& out, int i, int thread);

#ifdef STOKER_HAVE_CUDA
  // The same for every sample, on the device (ws.stream); errors name `op`.
  void run_gpu(const Operator& op, Workspace& ws, const Batch& in, Batch& out,
               const TensorPlan& p) const;
#endif

 private:
  kernels::ResizeFilters filter_;
  bool antialias_ = true;
  ResizeScratch scratch_, slices_;
};

}  // namespace stoker::ops
