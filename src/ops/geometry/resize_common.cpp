#include "stoker/ops/geometry/resize_common.hpp"

#include <algorithm>
#include <cmath>

#include "stoker/core/error.hpp"
#include "stoker/kernels/resize/resize_cpu.hpp"

namespace stoker::ops {

namespace {
int64_t round_extent(double v) { return std::max<int64_t>(1, int64_t(std::floor(v + 0.5))); }
}  // namespace

std::pair<int64_t, int64_t> resize_output_size(double in_h, double in_w, const ResizeRequest& r) {
  auto [h, w] = resize_exact_size(in_h, in_w, r);
  return {round_extent(h), round_extent(w)};
}

std::pair<double, double> resize_exact_size(double in_h, double in_w, const ResizeRequest& r) {
  double h = in_h, w = in_w;
  double oh, ow;
  if (r.shorter > 0) {
    double s = r.shorter / std::min(h, w);
    oh = h * s, ow = w * s;
  } else if (r.longer > 0) {
    double s = r.longer / std::max(h, w);
    oh = h * s, ow = w * s;
  } else if (r.resize_y > 0 && r.resize_x > 0) {
    if (r.mode == "not_larger" || r.mode == "not_smaller") {
      double sy = r.resize_y / h, sx = r.resize_x / w;
      double s = r.mode == "not_larger" ? std::min(sy, sx) : std::max(sy, sx);
      oh = h * s, ow = w * s;
    } else {
      oh = r.resize_y, ow = r.resize_x;
    }
  } else if (r.resize_y > 0) {
    oh = r.resize_y, ow = w * r.resize_y / h;
  } else if (r.resize_x > 0) {
    ow = r.resize_x, oh = h * r.resize_x / w;
  } else {
    oh = h, ow = w;
  }
  // max_size caps each extent, keeping the aspect ratio unless the mode stretches.
  double cap = 1.0;
  if (r.max_h > 0 && oh > r.max_h) cap = std::min(cap, r.max_h / oh);
  if (r.max_w > 0 && ow > r.max_w) cap = std::min(cap, r.max_w / ow);
  if (r.mode == "stretch") {
    if (r.max_h > 0) oh = std::min(oh, r.max_h);
    if (r.max_w > 0) ow = std::min(ow, r.max_w);
  } else {
    oh *= cap, ow *= cap;
  }
  return {oh, ow};
}

void resize_sample(const Batch& in, int i, int64_t y0, int64_t x0, int64_t h, int64_t w, Batch& out,
                   kernels::ResizeFilters filter, bool antialias, std::vector<float>& scratch,
                   const kernels::ResizeRoi* roi) {
  const auto& is = in.shape(i);
  const auto& os = out.shape(i);
  const int64_t C = is[2];
  visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(
      in.dtype(), "resize input", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        kernels::ImageView<const In> src{static_cast<const In*>(in.data(i)), is[0], is[1], C,
                                         is[1] * C};
        auto win = src.window(y0, x0, h, w);
        visit_dtype<DType::kU8, DType::kU16, DType::kI16,
                    DType::kF32>(out.dtype(), "resize output", [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          kernels::ImageView<Out> dst{static_cast<Out*>(out.data(i)), os[0], os[1], C, os[1] * C};
          if (roi)
            kernels::resize_cpu<Out, In>(dst, win, filter, antialias, scratch, *roi);
          else
            kernels::resize_cpu<Out, In>(dst, win, filter, antialias, scratch);
        });
      });
}

bool interp_is_linear(const OpSpec& spec) {
  const auto name = spec.arg<std::string>("interp_type");
  const auto f = [&] {
    try {
      return kernels::parse_filter(name);
    } catch (const ValueError& e) {
      throw ValueError(spec.schema->name + ": interp_type " + e.what());
    }
  }();
  STOKER_ENFORCE(f == kernels::Filter::kLinear || f == kernels::Filter::kNearest, ValueError,
                 spec.schema->name, ": interp_type must be 'linear' or 'nn', got '", name, "'");
  return f == kernels::Filter::kLinear;
}

}  // namespace stoker::ops
