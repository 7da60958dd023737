#include "stoker/ops/geometry/crop_nd.hpp"

#include <algorithm>

#include "stoker/core/error.hpp"

namespace stoker::ops {

LayoutAxes layout_axes(const std::string& layout, int ndim, const std::vector<std::string>& allowed,
                       const std::string& op, std::string* resolved) {
  std::string l = layout;
  if (l.empty()) {
    for (const auto& a : allowed)
      if (int(a.size()) == ndim) {
        l = a;
        break;
      }
  }
  const bool ok = std::find(allowed.begin(), allowed.end(), l) != allowed.end();
  if (!ok || int(l.size()) != ndim) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw ValueError(op + ": expected a layout among " + list + " (or F first), got " +
                     (layout.empty() ? "no layout and " + std::to_string(ndim) + " dimensions"
                                     : "'" + layout + "'" +
                                           (ok ? " with " + std::to_string(ndim) + " dimensions"
                                               : "")));
  }
  if (resolved) *resolved = l;
  LayoutAxes ax;
  ax.d = int(l.find('D')), ax.h = int(l.find('H')), ax.w = int(l.find('W')),
  ax.c = int(l.find('C'));
  return ax;
}

int box_axis(const LayoutAxes& ax, int k) {
  return k == ax.d ? 0 : k == ax.h ? 1 : k == ax.w ? 2 : -1;
}

TensorShape cropped_shape(const TensorShape& shape, const LayoutAxes& ax, const CropBox& box) {
  std::vector<int64_t> dims(size_t(shape.ndim()));
  for (int k = 0; k < shape.ndim(); ++k) {
    const int b = box_axis(ax, k);
    dims[size_t(k)] = b >= 0 ? box.extent[size_t(b)] : shape[k];
  }
  return TensorShape(dims);
}

std::vector<kernels::StridedCopy> crop_copies(const void* in, void* out, const TensorShape& shape,
                                              const LayoutAxes& ax, const CropBox& box,
                                              kernels::Border border,
                                              const std::vector<uint64_t>& fill_bits,
                                              size_t element_size) {
  const TensorShape out_shape = cropped_shape(shape, ax, box);
  const auto in_stride = dense_strides(shape.dims()), out_stride = dense_strides(out_shape.dims());
  if (out_shape.volume() == 0) return {};
  const int64_t channels = ax.c >= 0 ? shape[ax.c] : 1;
  const bool per_channel =
      border == kernels::Border::kFill && ax.c >= 0 &&
      std::any_of(fill_bits.begin(), fill_bits.end(), [&](uint64_t b) { return b != fill_bits[0]; });
  STOKER_ASSERT(int(shape.ndim()) <= kernels::kCopyMaxDims, "crop of ", shape.ndim(), " dimensions");
  const auto make = [&](int64_t channel) {
    kernels::StridedCopy c;
    c.in = static_cast<const uint8_t*>(in) +
           size_t(channel < 0 ? 0 : channel * in_stride[size_t(ax.c)]) * element_size;
    c.out = static_cast<uint8_t*>(out) +
            size_t(channel < 0 ? 0 : channel * out_stride[size_t(ax.c)]) * element_size;
    c.fill = fill_bits[size_t(std::max<int64_t>(channel, 0))];
    c.count = 1;
    for (int k = 0; k < shape.ndim(); ++k) {
      if (channel >= 0 && k == ax.c) continue;  // one channel: its axis dropped
      const int b = box_axis(ax, k);
      const int j = c.ndim++;
      c.shape[j] = out_shape[k], c.in_shape[j] = shape[k];
      c.in_stride[j] = in_stride[size_t(k)], c.out_stride[j] = out_stride[size_t(k)];
      c.in_start[j] = b >= 0 ? box.anchor[size_t(b)] : 0;
      c.border[j] = border;
      c.count *= c.shape[j];
    }
    // Width then channels, whole channels and a constant fill: one axis, so that rows are
    // copied whole (DHWC volumes).
    const int last = c.ndim - 1;
    if (channel < 0 && ax.c == shape.ndim() - 1 && ax.w == ax.c - 1 && last >= 1 &&
        border == kernels::Border::kFill) {
      const int64_t C = shape[ax.c];
      c.shape[last - 1] *= C, c.in_shape[last - 1] *= C, c.in_start[last - 1] *= C;
      c.in_stride[last - 1] = 1, c.out_stride[last - 1] = 1;
      c.ndim = last;
    }
    return c;
  };
  std::vector<kernels::StridedCopy> copies;
  if (per_channel) {
    for (int64_t ch = 0; ch < channels; ++ch) copies.push_back(make(ch));
  } else {
    copies.push_back(make(-1));
  }
  return copies;
}

kernels::StridedCopy flip_copy(const void* in, void* out, const TensorShape& shape,
                               const LayoutAxes& ax, bool depth, bool vertical, bool horizontal,
                               size_t element_size) {
  const auto stride = dense_strides(shape.dims());
  kernels::StridedCopy c;
  int64_t offset = 0;
  c.out = out, c.ndim = int32_t(shape.ndim()), c.count = shape.volume();
  for (int k = 0; k < shape.ndim(); ++k) {
    const bool flip = (k == ax.d && depth) || (k == ax.h && vertical) || (k == ax.w && horizontal);
    c.shape[k] = c.in_shape[k] = shape[k];
    c.out_stride[k] = stride[size_t(k)];
    c.in_stride[k] = flip ? -stride[size_t(k)] : stride[size_t(k)];
    if (flip && shape[k] > 0) offset += (shape[k] - 1) * stride[size_t(k)];
  }
  c.in = static_cast<const uint8_t*>(in) + size_t(offset) * element_size;
  return c;
}

}  // namespace stoker::ops
