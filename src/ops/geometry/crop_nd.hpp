// Crops and flips of samples in any layout with H and W (and D, C) axes as N-D strided copies,
// whose CPU and GPU twins (kernels/tensor/strided_copy_cpu.hpp, copy_gpu.hpp) give the same
// elements: crop and flip of volumes (DHWC, CDHW), of CHW images and crop's border modes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/shape.hpp"
#include "stoker/kernels/tensor/copy_gpu.hpp"
#include "stoker/ops/geometry/crop_args.hpp"

namespace stoker::ops {

// Where a layout's axes are (-1: absent).
struct LayoutAxes {
  int d = -1, h = -1, w = -1, c = -1;
  bool volume() const { return d >= 0; }
};
// The axes of `layout`, which must be one of `allowed` ("" takes the first of the sample's
// dimension count); the layout found is stored in `resolved`. `op` names the operator.
LayoutAxes layout_axes(const std::string& layout, int ndim, const std::vector<std::string>& allowed,
                       const std::string& op, std::string* resolved);

// The window's axis (0 depth, 1 height, 2 width; CropBox's) of layout axis k, or -1.
int box_axis(const LayoutAxes& ax, int k);

// The copies that cut `box` (depth, height, width) out of a sample of `shape`: one, or one per
// channel when the channels' fill values differ. Positions outside the input read as `border`
// says (kFill: fill_bits[c], the element's bytes). `out` holds the window's shape.
std::vector<kernels::StridedCopy> crop_copies(const void* in, void* out, const TensorShape& shape,
                                              const LayoutAxes& ax, const CropBox& box,
                                              kernels::Border border,
                                              const std::vector<uint64_t>& fill_bits,
                                              size_t element_size);
// The sample's shape with its spatial extents replaced by the box's.
TensorShape cropped_shape(const TensorShape& shape, const LayoutAxes& ax, const CropBox& box);

// One copy that mirrors the flagged axes (depth, height, width) of a sample.
kernels::StridedCopy flip_copy(const void* in, void* out, const TensorShape& shape,
                               const LayoutAxes& ax, bool depth, bool vertical, bool horizontal,
                               size_t element_size);

}  // namespace stoker::ops
