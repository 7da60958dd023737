// Connected regions ("blobs") of a label map and their bounding boxes, for
// segmentation.random_object_bbox. A blob is a maximal set of elements with the same value,
// other than the background, connected through faces (2 * ndim neighbours: 4 in 2-D, 6 in 3-D;
// diagonal neighbours are separate blobs, as in DALI). Blobs are numbered in the raster order
// of their first element.
//
// One raster pass of union-find over all values at once (a link only joins equal neighbours),
// then a second pass gives each element its blob and grows the boxes. Each union links the
// larger root to the smaller, so every parent index is below its child's: in the second pass
// an element's parent has already been resolved to its root, which found it in one step.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "stoker/core/error.hpp"

namespace stoker::kernels {

struct Blobs {
  int ndim = 0;
  std::vector<int64_t> values;  // each blob's value
  std::vector<int64_t> boxes;   // per blob: lo[ndim] then hi[ndim] (one past the end)
  int64_t count() const { return int64_t(values.size()); }
  const int64_t* lo(int64_t b) const { return &boxes[size_t(b * 2 * ndim)]; }
  const int64_t* hi(int64_t b) const { return lo(b) + ndim; }
  // The box's volume (the product of its extents).
  int64_t box_volume(int64_t b) const {
    int64_t v = 1;
    for (int d = 0; d < ndim; ++d) v *= hi(b)[d] - lo(b)[d];
    return v;
  }
};

namespace detail {

// Index: a signed type that holds the element count (int32 where it fits: half the memory).
template <typename Index, typename T>
Blobs find_blobs(const T* data, std::span<const int64_t> shape, std::optional<T> background) {
  const int ndim = int(shape.size());
  int64_t volume = 1;
  for (int64_t s : shape) volume *= s;
  Blobs out;
  out.ndim = ndim;
  if (volume == 0) return out;
  std::vector<int64_t> stride(size_t(ndim), 1);
  for (int d = ndim - 2; d >= 0; --d)
    stride[size_t(d)] = stride[size_t(d + 1)] * shape[size_t(d + 1)];

  // The odometer of the current element's coordinates, for both passes.
  std::vector<int64_t> pos(size_t(ndim), 0);
  auto advance = [&] {
    for (int d = ndim - 1; d >= 0 && ++pos[size_t(d)] == shape[size_t(d)]; --d) pos[size_t(d)] = 0;
  };

  // Pass 1: union-find; background elements are -1.
  std::vector<Index> parent(static_cast<size_t>(volume));
  auto find = [&](Index x) {
    while (parent[size_t(x)] != x) {
      parent[size_t(x)] = parent[size_t(parent[size_t(x)])];  // path halving
      x = parent[size_t(x)];
    }
    return x;
  };
  for (int64_t i = 0; i < volume; ++i, advance()) {
    const T v = data[i];
    if (background && v == *background) {
      parent[size_t(i)] = -1;
      continue;
    }
    parent[size_t(i)] = Index(i);
    for (int d = 0; d < ndim; ++d) {
      if (pos[size_t(d)] == 0) continue;
      const int64_t j = i - stride[size_t(d)];
      if (data[j] != v) continue;
      const Index a = find(Index(i)), b = find(Index(j));
      if (a == b) continue;
      if (a < b)
        parent[size_t(b)] = a;
      else
        parent[size_t(a)] = b;
    }
  }

  // Pass 2: roots (first elements of their blobs, in raster order) get blob numbers, stored
  // as -2 - number; the rest point straight at their root.
  std::fill(pos.begin(), pos.end(), 0);
  for (int64_t i = 0; i < volume; ++i, advance()) {
    const Index p = parent[size_t(i)];
    if (p == -1) continue;
    int64_t blob;
    if (p == Index(i)) {
      blob = out.count();
      parent[size_t(i)] = Index(-2 - blob);
      out.values.push_back(int64_t(data[i]));
      out.boxes.insert(out.boxes.end(), pos.begin(), pos.end());
      for (int d = 0; d < ndim; ++d) out.boxes.push_back(pos[size_t(d)] + 1);
      continue;
    }
    const Index q = parent[size_t(p)];
    const Index root = q < 0 ? p : q;
    parent[size_t(i)] = root;
    blob = -2 - int64_t(parent[size_t(root)]);
    int64_t* box = &out.boxes[size_t(blob * 2 * ndim)];
    for (int d = 0; d < ndim; ++d) {
      const int64_t c = pos[size_t(d)];
      if (c < box[d]) box[d] = c;
      if (c + 1 > box[ndim + d]) box[ndim + d] = c + 1;
    }
  }
  return out;
}

}  // namespace detail

// The blobs of `data` (row-major, `shape`), elements equal to `background` excluded (none
// without one).
template <typename T>
Blobs find_blobs(const T* data, std::span<const int64_t> shape, std::optional<T> background) {
  int64_t volume = 1;
  for (int64_t s : shape) {
    STOKER_ENFORCE(s >= 0, ValueError, "find_blobs: negative extent ", s);
    volume *= s;
  }
  if (volume < std::numeric_limits<int32_t>::max())
    return detail::find_blobs<int32_t>(data, shape, background);
  return detail::find_blobs<int64_t>(data, shape, background);
}

}  // namespace stoker::kernels
