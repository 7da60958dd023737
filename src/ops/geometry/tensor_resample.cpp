#include "stoker/ops/geometry/tensor_resample.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "stoker/kernels/resize/resize_volume_cpu.hpp"
#include "stoker/ops/geometry/resample_gpu_plan.hpp"

namespace stoker::ops {
namespace {

// Sample i's tensor as frames x block x channels.
struct Frames {
  bool volume = false;  // a 3-D block
  int64_t count = 1, channels = 1;
  kernels::VolumeShape in, out;  // depth 1 for a 2-D block
  kernels::VolumeRoi roi{0, 1, {0, 0, 0, 0}};
};

// An axis's region for the kernels, which take double: one float32 could not widen (its ends
// equal) samples its point through a region of a thousandth of an element.
std::pair<double, double> region(const AxisResize& a) {
  return {a.lo, a.lo == a.hi ? double(a.hi) + 1e-3 : double(a.hi)};
}

Frames frames(const TensorPlan& p, int i) {
  const auto& s = p.in_shapes[size_t(i)];
  const auto& a = p.axes[size_t(i)];
  const int first = p.block.first, end = first + p.block.count;
  Frames f;
  for (int d = 0; d < first; ++d) f.count *= s[size_t(d)];
  for (int d = end; d < int(s.size()); ++d) f.channels *= s[size_t(d)];
  const int y = end - 2, x = end - 1;  // the plane's axes; a 3-D block adds the depth first
  f.in = {1, s[size_t(y)], s[size_t(x)], f.channels};
  f.out = {1, a[size_t(y)].out, a[size_t(x)].out, f.channels};
  const auto [y0, y1] = region(a[size_t(y)]);
  const auto [x0, x1] = region(a[size_t(x)]);
  f.roi.plane = {y0, y1, x0, x1};
  if (p.block.count == 3) {
    f.volume = true;
    f.in.depth = s[size_t(first)], f.out.depth = a[size_t(first)].out;
    std::tie(f.roi.z0, f.roi.z1) = region(a[size_t(first)]);
  }
  return f;
}

template <typename Out, typename In>
void resize_frames(const Frames& f, const In* in, Out* out, kernels::ResizeFilters filter,
                   bool antialias, std::vector<float>& slices, std::vector<float>& scratch) {
  const int64_t in_len = f.in.depth * f.in.plane(), out_len = f.out.depth * f.out.plane();
  for (int64_t k = 0; k < f.count; ++k) {
    if (!f.volume)
      kernels::resize_cpu<Out, In>(
          kernels::dense_image(out + k * out_len, f.out.height, f.out.width, f.channels),
          kernels::dense_image(in + k * in_len, f.in.height, f.in.width, f.channels), filter,
          antialias, scratch, f.roi.plane);
    else
      kernels::resize_volume_cpu<Out, In>(out + k * out_len, f.out, in + k * in_len, f.in, filter,
                                          antialias, f.roi, slices, scratch);
  }
}

}  // namespace

std::vector<TensorShape> planned_shapes(const TensorPlan& p) {
  std::vector<TensorShape> shapes;
  for (const auto& axes : p.axes) {
    std::vector<int64_t> dims;
    for (size_t d = size_t(p.added); d < axes.size(); ++d) dims.push_back(axes[d].out);
    shapes.emplace_back(std::move(dims));
  }
  return shapes;
}

DType resampled_dtype(const OpSpec& spec, DType input) {
  const DType out = resize_output_dtype(spec, input);
  const auto supported = [](DType t) {
    return t == DType::kU8 || t == DType::kU16 || t == DType::kI16 || t == DType::kF32;
  };
  STOKER_ENFORCE(supported(input) && supported(out), ValueError, spec.schema->name,
                 ": takes and gives uint8, uint16, int16 or float32 data, got ", dtype_name(input),
                 " to ", dtype_name(out));
  return out;
}

void TensorResampler::run_sample(const TensorPlan& p, const Batch& in, Batch& out, int i,
                                 int thread) {
  if (out.shape(i).volume() == 0) return;
  const Frames f = frames(p, i);
  visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(
      in.dtype(), "resize input", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kF32>(
            out.dtype(), "resize output", [&](auto out_tag) {
              using Out = typename decltype(out_tag)::type;
              resize_frames<Out, In>(f, static_cast<const In*>(in.data(i)),
                                     static_cast<Out*>(out.data(i)), filter_, antialias_,
                                     slices_.get(thread), scratch_.get(thread));
            });
      });
}

#ifdef STOKER_HAVE_CUDA
namespace {

// One resampling of a 2-D image (a frame, a slice, or a volume seen as slices x plane) on the
// device.
struct GpuImage {
  const void* in;
  TensorShape in_shape;  // HWC
  void* out;
  TensorShape out_shape;
  ResamplePlan plan;
};

// Runs the images on the resampling kernel: one launch per channel count (a launch takes one)
// and per 32768 images (the grid's limit is 65535 samples).
void launch(const Operator& op, Workspace& ws, const std::vector<GpuImage>& images, DType in_type,
            DType out_type) {
  std::map<int64_t, std::vector<const GpuImage*>> by_channels;
  for (const auto& g : images) by_channels[g.in_shape[2]].push_back(&g);
  constexpr size_t kChunk = 32768;
  for (const auto& [channels, all] : by_channels) {
    for (size_t at = 0; at < all.size(); at += kChunk) {
      const int m = int(std::min(kChunk, all.size() - at));
      Batch src = Batch::with_samples(m, in_type, "HWC", MemoryKind::kDevice);
      Batch dst = Batch::with_samples(m, out_type, "HWC", MemoryKind::kDevice);
      std::vector<ResamplePlan> plans;
      for (int k = 0; k < m; ++k) {
        const GpuImage& g = *all[at + size_t(k)];
        src.set_sample(k, nullptr, const_cast<void*>(g.in), g.in_shape);
        dst.set_sample(k, nullptr, g.out, g.out_shape);
        plans.push_back(g.plan);
      }
      run_resample_gpu(op, ws, src, dst, plans, identity_resample_params(src));
    }
  }
}

}  // namespace

void TensorResampler::run_gpu(const Operator& op, Workspace& ws, const Batch& in, Batch& out,
                              const TensorPlan& plan) const {
  const int n = in.size();
  const size_t in_size = dtype_size(in.dtype()), out_size = dtype_size(out.dtype());
  const auto plane_plan = [&](const Frames& f) {
    ResamplePlan p;
    p.roi = f.roi.plane;
    p.filter = filter_, p.antialias = antialias_;
    return p;
  };
  // Volumes go through a float intermediate, planes first or depth first as on the CPU.
  std::vector<GpuImage> direct, first, second;
  std::vector<std::pair<Frames, int>> volumes;
  int64_t temp = 0;
  for (int i = 0; i < n; ++i) {
    if (out.shape(i).volume() == 0) continue;
    const Frames f = frames(plan, i);
    if (f.volume) {
      volumes.emplace_back(f, i);
      const bool planes = kernels::planes_first(f.out, f.in);
      temp += f.count * (planes ? f.in.depth * f.out.plane() : f.out.depth * f.in.plane());
      continue;
    }
    for (int64_t k = 0; k < f.count; ++k)
      direct.push_back(
          {static_cast<const uint8_t*>(in.data(i)) + k * f.in.plane() * int64_t(in_size),
           TensorShape{f.in.height, f.in.width, f.channels},
           static_cast<uint8_t*>(out.data(i)) + k * f.out.plane() * int64_t(out_size),
           TensorShape{f.out.height, f.out.width, f.channels}, plane_plan(f)});
  }
  launch(op, ws, direct, in.dtype(), out.dtype());
  if (volumes.empty()) return;
  auto buffer = ws.device_pool->acquire_on(size_t(temp) * sizeof(float), ws.stream);
  float* t = static_cast<float*>(buffer->data());
  for (const auto& [f, i] : volumes) {
    const bool planes = kernels::planes_first(f.out, f.in);
    for (int64_t k = 0; k < f.count; ++k) {
      const auto* src = static_cast<const uint8_t*>(in.data(i)) +
                        k * f.in.depth * f.in.plane() * int64_t(in_size);
      auto* dst =
          static_cast<uint8_t*>(out.data(i)) + k * f.out.depth * f.out.plane() * int64_t(out_size);
      // The volume as rows of slices: depth x (plane / channels) x channels.
      const auto rows = [&](const kernels::VolumeShape& v) {
        return TensorShape{v.depth, v.height * v.width, v.channels};
      };
      ResamplePlan depth;
      depth.rows_only = true;
      depth.roi = {f.roi.z0, f.roi.z1, 0, 0};
      depth.filter = filter_, depth.antialias = antialias_;
      if (planes) {
        const kernels::VolumeShape mid{f.in.depth, f.out.height, f.out.width, f.channels};
        for (int64_t z = 0; z < f.in.depth; ++z)
          first.push_back({src + z * f.in.plane() * int64_t(in_size),
                           TensorShape{f.in.height, f.in.width, f.channels}, t + z * mid.plane(),
                           TensorShape{f.out.height, f.out.width, f.channels}, plane_plan(f)});
        second.push_back({t, rows(mid), dst, rows(f.out), depth});
        t += mid.depth * mid.plane();
      } else {
        const kernels::VolumeShape mid{f.out.depth, f.in.height, f.in.width, f.channels};
        first.push_back({src, rows(f.in), t, rows(mid), depth});
        for (int64_t z = 0; z < f.out.depth; ++z)
          second.push_back({t + z * mid.plane(), TensorShape{f.in.height, f.in.width, f.channels},
                            dst + z * f.out.plane() * int64_t(out_size),
                            TensorShape{f.out.height, f.out.width, f.channels}, plane_plan(f)});
        t += mid.depth * mid.plane();
      }
    }
  }
  launch(op, ws, first, in.dtype(), DType::kF32);
  launch(op, ws, second, DType::kF32, out.dtype());
}
#endif

}  // namespace stoker::ops
