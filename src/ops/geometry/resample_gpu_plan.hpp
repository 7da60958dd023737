// Host side of the GPU resampling kernel (kernels/resize/resample_gpu): per-sample plans become
// filter tables and descriptors, packed into one pinned buffer, copied to the device with one
// transfer on the stage's stream, and run with one launch for the batch. Shared by the gpu
// backends of resize, random_resized_crop, crop and crop_mirror_normalize.
#pragma once

#include <optional>
#include <vector>

#include "stoker/kernels/resize/resample_gpu.hpp"
#include "stoker/kernels/resize/resize_cpu.hpp"
#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

struct ResamplePlan {
  // Resampling: the region `roi` of the input through `filter` (as the CPU resize), or, with
  // copy = true, the integer window starting at (copy_y, copy_x): output pixel (x, y) is input
  // pixel (copy_x + x, copy_y + y), or the fill value where that lies outside the input.
  kernels::ResizeRoi roi{0, 0, 0, 0};
  kernels::Filter filter = kernels::Filter::kLinear;
  bool antialias = true;
  bool copy = false;
  int64_t copy_y = 0, copy_x = 0;
  bool mirror_x = false, mirror_y = false;
  // The kernel sees only this window of the input, as if it were the whole image (crop-then-
  // resize: filter taps never reach outside it). Empty: the whole input.
  std::optional<CropWindow> view;
};

// Runs the kernel from HWC sample i of `in` (on the device) into sample i of `out` (allocated,
// its shapes giving the output extents: HWC or, with params.planar, CHW). params.channels and
// out_channels, dtypes, normalisation and fill must be set. Errors name `op`.
void run_resample_gpu(const Operator& op, Workspace& ws, const Batch& in, Batch& out,
                      const std::vector<ResamplePlan>& plans, kernels::ResampleGpuParams params);

// The factory of a gpu backend class, which exists only in CUDA builds (an empty factory, i.e.
// no such backend, otherwise).
#ifdef STOKER_HAVE_CUDA
#define STOKER_GPU_FACTORY(Op) [](const OpSpec& s) { return std::make_unique<Op>(s); }
#else
#define STOKER_GPU_FACTORY(Op) \
  ::stoker::ops::OpSchema::Factory {}
#endif

}  // namespace stoker::ops
