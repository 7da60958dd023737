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

// sum[g] += x over each group's elements (`sum`: r.groups values).
inline void normalize_sums_cpu(const double* x, int64_t count, const NormalizeReducer& r,
                               double* sum) {
  for (int64_t k = 0; k < count; ++k) sum[r.group(k)] += x[k];
}

// sq[g] += (x - mean[g])^2 over each group's elements.
inline void normalize_squares_cpu(const double* x, int64_t count, const NormalizeReducer& r,
                                  const double* mean, double* sq) {
  for (int64_t k = 0; k < count; ++k) {
    const int64_t g = r.group(k);
    const double d = x[k] - mean[g];
    sq[g] += d * d;
  }
}

// out = (x - mean[g]) * inv[g] * scale + shift, as Out.
template <typename Out>
void normalize_cpu(const double* x, int64_t count, const NormalizeReducer& r, const double* mean,
                   const double* inv, double scale, double shift, Out* out) {
  for (int64_t k = 0; k < count; ++k) {
    const int64_t g = r.group(k);
    out[k] = cast_value<Out>((x[k] - mean[g]) * inv[g] * scale + shift);
  }
}

}  // namespace stoker::kernels
