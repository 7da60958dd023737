// normalize's CPU compute (the GPU twin: normalize_gpu.cu): per-group sums and squared
// deviations of a sample, and the normalised values (x - mean) * inv * scale + shift converted
// to the output type (integers rounded half away from zero and saturated). A group is a
// position of the axes not reduced; NormalizeReducer maps an element's flat index to it.
#pragma once

#include <cstdint>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/core/shape.hpp"

namespace stoker::kernels {

struct NormalizeReducer {
  std::vector<int64_t> stride, rstride, shape;
  std::vector<bool> reduced;
  int64_t groups = 1;
  // `axes` empty: every axis is reduced (one group).
  NormalizeReducer(const TensorShape& s, const std::vector<int64_t>& axes) {
    const int nd = s.ndim();
    shape.assign(s.dims().begin(), s.dims().end());
    reduced.assign(size_t(nd), axes.empty());
    for (auto a : axes) reduced[size_t(a)] = true;
    stride.assign(size_t(nd), 1);
    rstride.assign(size_t(nd), 1);
    for (int d = nd - 1; d > 0; --d) stride[size_t(d - 1)] = stride[size_t(d)] * shape[size_t(d)];
    for (int d = nd - 2; d >= 0; --d)
      rstride[size_t(d)] =
          rstride[size_t(d) + 1] * (reduced[size_t(d) + 1] ? 1 : shape[size_t(d) + 1]);
    for (int d = 0; d < nd; ++d)
      if (!reduced[size_t(d)]) groups *= shape[size_t(d)];
  }
  int64_t group(int64_t flat) const {
    int64_t g = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t coord = (flat / stride[d]) % shape[d];
      if (!reduced[d]) g += coord * rstride[d];
    }
    return g;
  }
};

// Calls f(first, g, n, step) for each innermost row of the sample, in order: its n elements
// from flat index `first` belong to groups g, g + step, ... (step 0: the last axis is reduced,
// the whole row is one group). The group is worked out once per row, not per element: the
// reductions visit every element of every group in the same order as a flat loop would.
template <typename F>
void for_each_normalize_row(int64_t count, const NormalizeReducer& r, F&& f) {
  if (count == 0) return;
  const int64_t n = r.shape.empty() ? 1 : r.shape.back();
  const int64_t step = r.shape.empty() || r.reduced.back() ? 0 : 1;
  for (int64_t first = 0; first < count; first += n) f(first, r.group(first), n, step);
}

// sum[g] += x over each group's elements (`sum`: r.groups values).
inline void normalize_sums_cpu(const double* x, int64_t count, const NormalizeReducer& r,
                               double* sum) {
  for_each_normalize_row(count, r, [&](int64_t first, int64_t g, int64_t n, int64_t step) {
    const double* row = x + first;
    if (step == 0) {
      double acc = sum[g];
      for (int64_t j = 0; j < n; ++j) acc += row[j];
      sum[g] = acc;
    } else {
      for (int64_t j = 0; j < n; ++j) sum[g + j] += row[j];
    }
  });
}

// sq[g] += (x - mean[g])^2 over each group's elements.
inline void normalize_squares_cpu(const double* x, int64_t count, const NormalizeReducer& r,
                                  const double* mean, double* sq) {
  for_each_normalize_row(count, r, [&](int64_t first, int64_t g, int64_t n, int64_t step) {
    const double* row = x + first;
    for (int64_t j = 0; j < n; ++j) {
      const double d = row[j] - mean[g + j * step];
      sq[g + j * step] += d * d;
    }
  });
}

// out = (x - mean[g]) * inv[g] * scale + shift, as Out.
template <typename Out>
void normalize_cpu(const double* x, int64_t count, const NormalizeReducer& r, const double* mean,
                   const double* inv, double scale, double shift, Out* out) {
  for_each_normalize_row(count, r, [&](int64_t first, int64_t g, int64_t n, int64_t step) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = first + j, gj = g + j * step;
      out[k] = cast_value<Out>((x[k] - mean[gj]) * inv[gj] * scale + shift);
    }
  });
}

}  // namespace stoker::kernels
