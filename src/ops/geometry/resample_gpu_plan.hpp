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
  kernels::ResizeFilters filter;  // per axis: shrinking (min) or not (mag)
  bool antialias = true;
  bool copy = false;
  int64_t copy_y = 0, copy_x = 0;
  bool mirror_x = false, mirror_y = false;
  // Only the rows are resampled (roi.y0..y1 through `filter`): output column x is input
  // column x (the depth pass of a volume, whose rows are whole slices).
  bool rows_only = false;
  // The kernel sees only this window of the input, as if it were the whole image (crop-then-
  // resize: filter taps never reach outside it). Empty: the whole input.
  std::optional<CropWindow> view;
  // Fusion: the resampling makes a full_h x full_w image of which the output is the window at
  // (offset_y, offset_x). full_h 0: the output is the whole resampled image.
  int64_t full_h = 0, full_w = 0, offset_y = 0, offset_x = 0;
};

// A gpu operator that is one resampling pass (resize, random_resized_crop, crop_mirror_normalize):
// it can describe its work as plans, so that two of them fuse into one kernel launch.
class ResamplingStep {
 public:
  virtual ~ResamplingStep() = default;
  struct Output {
    std::vector<ResamplePlan> plans;
    std::vector<TensorShape> shapes;
    DType dtype = DType::kU8;
    TensorLayout layout;
    kernels::ResampleGpuParams params;
  };
  // The plans for `in` (shapes only are read: the samples may have no data).
  virtual Output plan_step(Workspace& ws, const Batch& in) = 0;
};

// Runs a step: allocates its output and launches the kernel.
void run_step(Operator& op, ResamplingStep& step, Workspace& ws);

// The gpu operator for `spec` with spec.fused_first set: the first step (resize or
// random_resized_crop) and this one (crop_mirror_normalize) in one launch.
std::unique_ptr<Operator> make_fused_resampling(const OpSpec& spec);

// Runs the kernel from HWC sample i of `in` (on the device) into sample i of `out` (allocated,
// its shapes giving the output extents: HWC or, with params.planar, CHW). params.channels and
// out_channels, dtypes, normalisation and fill must be set. Errors name `op`.
void run_resample_gpu(const Operator& op, Workspace& ws, const Batch& in, Batch& out,
                      const std::vector<ResamplePlan>& plans, kernels::ResampleGpuParams params);

// Parameters that leave the resampled values as they are (no normalisation), for `in`'s
// channel count.
kernels::ResampleGpuParams identity_resample_params(const Batch& in);

// Every HWC sample of `in` has sample 0's channel count (one launch takes one); errors name `op`.
void check_uniform_channels(const Batch& in, const std::string& op);

// The factory of a gpu backend class, which exists only in CUDA builds (an empty factory, i.e.
// no such backend, otherwise).
#ifdef STOKER_HAVE_CUDA
#define STOKER_GPU_FACTORY(Op) [](const OpSpec& s) { return std::make_unique<Op>(s); }
#else
#define STOKER_GPU_FACTORY(Op) \
  ::stoker::ops::OpSchema::Factory {}
#endif

}  // namespace stoker::ops
