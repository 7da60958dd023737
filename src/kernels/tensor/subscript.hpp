// NumPy-like indexing of one tensor (DALI's TensorSubscript, `x[1, ::-2, 3:]`): per input axis
// an index, a range lo:hi:step or the whole axis. Only planning lives here: the bytes move
// through the strided copy (strided_copy_cpu.hpp, copy_gpu.hpp), or not at all when the picked
// elements are one run of the input, in order (the result is then a view).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "stoker/kernels/tensor/copy_gpu.hpp"

namespace stoker::kernels {

// One input axis's pick: `count` elements from `start`, `step` apart (negative: backwards).
struct AxisPick {
  int64_t start = 0, count = 0, step = 1;
};

// The elements of lo:hi:step on an axis of `extent`, as Python's slice.indices() finds them
// (DALI 2.4 gives the same): negative bounds count from the end, bounds are clamped, and an
// absent bound is the start or the end in the step's direction. `step` must not be 0.
inline AxisPick slice_pick(int64_t extent, std::optional<int64_t> lo, std::optional<int64_t> hi,
                           int64_t step) {
  // Bounds are clamped to [0, extent] going forwards, to [-1, extent - 1] going backwards
  // (-1: before the first element).
  const int64_t low = step > 0 ? 0 : -1, high = step > 0 ? extent : extent - 1;
  auto bound = [&](std::optional<int64_t> v, int64_t absent) {
    if (!v) return absent;
    int64_t b = *v;
    if (b < 0) b = b < -extent ? low : b + extent;  // no overflow for very negative bounds
    return std::clamp(b, low, high);
  };
  const int64_t start = bound(lo, step > 0 ? 0 : extent - 1);
  const int64_t stop = bound(hi, step > 0 ? extent : -1);
  // ceil(distance / |step|), written so that no step overflows.
  int64_t count = 0;
  if (step > 0 && stop > start) count = 1 + (stop - start - 1) / step;
  if (step < 0 && start > stop)
    count = 1 + (start - stop - 1) / (step == INT64_MIN ? INT64_MAX : -step);
  return {start, count, step};
}

// One sample's pick with axes of one element dropped and neighbouring axes that read the input
// at one stride merged: element `offset` of the input first, then, axis by axis (the output's
// row-major order), `count` elements `in_stride` apart.
struct SubscriptPlan {
  struct Axis {
    int64_t count, in_stride;
  };
  int64_t offset = 0;
  int64_t volume = 0;  // elements picked
  std::vector<Axis> axes;
  // The picked elements are one run of the input, in order: the result may view it.
  bool contiguous() const {
    return volume == 0 || axes.empty() || (axes.size() == 1 && axes[0].in_stride == 1);
  }
};

// `picks`: one per axis of the input of shape `in_shape` (row-major, dense).
inline SubscriptPlan plan_subscript(const std::vector<int64_t>& in_shape,
                                    const std::vector<AxisPick>& picks) {
  SubscriptPlan p;
  p.volume = 1;
  for (const auto& k : picks) p.volume *= k.count;
  if (p.volume == 0) return p;
  std::vector<int64_t> stride(in_shape.size(), 1);
  for (size_t k = in_shape.size(); k-- > 1;) stride[k - 1] = stride[k] * in_shape[k];
  for (size_t k = 0; k < picks.size(); ++k) {
    p.offset += picks[k].start * stride[k];
    if (picks[k].count == 1) continue;  // contributes only to the offset
    const SubscriptPlan::Axis a{picks[k].count, picks[k].step * stride[k]};
    // Merge with the previous axis when that one steps over exactly this one's run.
    if (!p.axes.empty() && p.axes.back().in_stride == a.in_stride * a.count) {
      p.axes.back() = {p.axes.back().count * a.count, a.in_stride};
    } else {
      p.axes.push_back(a);
    }
  }
  return p;
}

// The strided copies that write plan `p` of the input sample at `in` densely to `out`
// (elements of `element_size` bytes): one, or one per position of the leading axes beyond the
// copy's kCopyMaxDims. None when nothing is picked.
inline std::vector<StridedCopy> subscript_copies(const SubscriptPlan& p, const void* in, void* out,
                                                 size_t element_size) {
  std::vector<StridedCopy> copies;
  if (p.volume == 0) return copies;
  const int n = int(p.axes.size());
  const int lead = std::max(0, n - kCopyMaxDims);  // axes enumerated here, outside the copy
  std::vector<int64_t> out_stride(size_t(n), 1);
  for (int k = n - 1; k > 0; --k)
    out_stride[size_t(k - 1)] = out_stride[size_t(k)] * p.axes[size_t(k)].count;
  StridedCopy c;
  c.ndim = n - lead, c.count = 1;
  for (int k = lead; k < n; ++k) {
    const int j = k - lead;
    c.shape[j] = c.in_shape[j] = p.axes[size_t(k)].count;
    c.in_stride[j] = p.axes[size_t(k)].in_stride, c.out_stride[j] = out_stride[size_t(k)];
    c.count *= p.axes[size_t(k)].count;
  }
  const auto* in_bytes = static_cast<const uint8_t*>(in);
  auto* out_bytes = static_cast<uint8_t*>(out);
  const auto es = int64_t(element_size);
  std::vector<int64_t> pos(size_t(lead), 0);
  for (;;) {
    int64_t src = p.offset, dst = 0;
    for (int k = 0; k < lead; ++k) {
      src += pos[size_t(k)] * p.axes[size_t(k)].in_stride;
      dst += pos[size_t(k)] * out_stride[size_t(k)];
    }
    c.in = in_bytes + src * es, c.out = out_bytes + dst * es;
    copies.push_back(c);
    int k = lead - 1;  // odometer over the leading axes
    for (; k >= 0; --k) {
      if (++pos[size_t(k)] < p.axes[size_t(k)].count) break;
      pos[size_t(k)] = 0;
    }
    if (k < 0) break;
  }
  return copies;
}

}  // namespace stoker::kernels
