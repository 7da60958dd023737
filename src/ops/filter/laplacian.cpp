#include "stoker/ops/filter/laplacian.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/kernels/filter/laplacian.hpp"
#include "stoker/kernels/filter/laplacian_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// What the layout says, as DALI's convolution_utils: leading F and C letters are planes
// (filtered alike), then 1 to 3 spatial axes, then optionally channels (C, last). No layout:
// every axis is spatial.
struct Layout {
  int plane_dims = 0;
  int axes = 2;
  bool channels = false;
};

Layout parse_layout(const Batch& in) {
  const std::string l = in.layout().str();
  Layout out;
  if (l.empty()) {
    const int ndim = in.size() ? in.shape(0).ndim() : 2;
    STOKER_ENFORCE(ndim >= 1 && ndim <= 3, ValueError, "laplacian: samples without a layout ",
                   "must have 1 to 3 dimensions (every axis spatial), got ", ndim,
                   "; give a layout naming the channels or frames (HWC, CHW, FHWC)");
    out.axes = ndim;
    return out;
  }
  size_t k = 0;
  while (k < l.size() && (l[k] == 'F' || l[k] == 'C')) ++k;
  out.plane_dims = int(k);
  size_t end = l.size();
  if (end > k && l[end - 1] == 'C') --end, out.channels = true;
  out.axes = int(end - k);
  for (size_t j = k; j < end; ++j) {
    STOKER_ENFORCE(l[j] != 'F', ValueError, "laplacian: frames (F) must lead the layout, got '", l,
                   "'");
    STOKER_ENFORCE(l[j] != 'C', ValueError, "laplacian: channels must come first or last, got '", l,
                   "'");
  }
  STOKER_ENFORCE(out.axes >= 1 && out.axes <= 3, ValueError, "laplacian: layout '", l, "' has ",
                 out.axes, " spatial axes; 1 to 3 are supported");
  return out;
}

class Laplacian : public Operator {
 public:
  explicit Laplacian(const OpSpec& spec)
      : Operator(spec), normalized_(spec.arg<bool>("normalized_kernel")) {
    STOKER_ENFORCE(!normalized_ || !spec.given("scale"), ValueError,
                   "laplacian: scale cannot be given when normalized_kernel is True");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Plan plan = make_plan(ws);
    Batch& out = add_output(ws, plan.out_dtype, shapes(in), in.layout());
    {
      std::lock_guard lock(mutex_);
      if (int(scratch_.size()) < ws.pool->num_threads())
        scratch_.resize(size_t(ws.pool->num_threads()));
    }
    for_each_sample(ws, in.size(), [&](int i, int thread) {
      visit_types(in.dtype(), [&](auto it) {
        using In = typename decltype(it)::type;
        if (plan.out_dtype == in.dtype())
          kernels::laplacian_cpu(in.data_as<const In>(i), out.data_as<In>(i),
                                 plan.shapes[size_t(i)], scratch_[size_t(thread)]);
        else
          kernels::laplacian_cpu(in.data_as<const In>(i), out.data_as<float>(i),
                                 plan.shapes[size_t(i)], scratch_[size_t(thread)]);
      });
    });
  }

 protected:
  struct Plan {
    DType out_dtype;
    int axes = 2;
    std::vector<kernels::LaplacianShape> shapes;
  };

  template <typename F>
  static void visit_types(DType d, F&& f) {
    visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
                DType::kU64, DType::kI64, DType::kF16, DType::kF32>(d, "laplacian input",
                                                                    std::forward<F>(f));
  }

  static std::vector<TensorShape> shapes(const Batch& in) {
    std::vector<TensorShape> s;
    for (int i = 0; i < in.size(); ++i) s.push_back(in.shape(i));
    return s;
  }

  // An argument of one value (all axes) or one per axis, for sample i.
  std::vector<double> per_axis(const Workspace& ws, const char* name, int i, int axes) const {
    auto v = list_arg(ws, name, i);
    STOKER_ENFORCE(v.size() == 1 || int(v.size()) == axes, ValueError, "laplacian: ", name,
                   " of sample ", i, " needs 1 or ", axes, " values (one per spatial axis), got ",
                   v.size());
    if (v.size() == 1) v.assign(size_t(axes), v[0]);
    return v;
  }

  int window_size(double v, const char* name, int lo, int i) const {
    STOKER_ENFORCE(
        v == std::floor(v) && v >= lo && v <= kernels::kLaplacianMaxWindow && int(v) % 2 == 1,
        ValueError, "laplacian: ", name, " must be an odd integer between ", lo, " and ",
        kernels::kLaplacianMaxWindow, ", got ", v, " for sample ", i);
    return int(v);
  }

  Plan make_plan(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    Plan plan;
    const DType t = in.dtype();
    visit_types(t, [](auto) {});  // the input type's check, naming the operator
    plan.out_dtype = t;
    if (spec_.has_arg("dtype")) {
      plan.out_dtype = dtype_from_name(spec_.arg<std::string>("dtype"));
      STOKER_ENFORCE(plan.out_dtype == t || plan.out_dtype == DType::kF32, TypeError,
                     "laplacian: dtype must be the input's (", dtype_name(t), ") or float32, got ",
                     dtype_name(plan.out_dtype));
    }
    const Layout layout = parse_layout(in);
    plan.axes = layout.axes;
    const int ndim = layout.plane_dims + layout.axes + int(layout.channels);
    const bool smoothing = spec_.given("smoothing_size");
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == ndim, ValueError, "laplacian: sample ", i, " has shape ",
                     s.to_string(), ", which layout '", in.layout().str(), "' does not describe");
      kernels::LaplacianShape k;
      k.axes = layout.axes;
      k.planes = 1;
      for (int d = 0; d < layout.plane_dims; ++d) k.planes *= s[d];
      for (int a = 0; a < layout.axes; ++a) k.extent[a] = s[layout.plane_dims + a];
      k.channels = layout.channels ? s[s.ndim() - 1] : 1;
      const auto deriv = per_axis(ws, "window_size", i, k.axes);
      std::vector<double> smooth;
      if (smoothing) smooth = per_axis(ws, "smoothing_size", i, k.axes);
      for (int p = 0; p < k.axes; ++p) {
        const int d = window_size(deriv[size_t(p)], "window_size", 3, i);
        for (int a = 0; a < k.axes; ++a)
          k.window[p][a] =
              a == p || !smoothing ? d : window_size(smooth[size_t(a)], "smoothing_size", 1, i);
      }
      if (normalized_) {
        // DALI: 2^-(sum of the partial's window sizes - axes - 2).
        for (int p = 0; p < k.axes; ++p) {
          int exponent = -k.axes - 2;
          for (int a = 0; a < k.axes; ++a) exponent += k.window[p][a];
          k.scale[p] = std::exp2f(float(-exponent));
        }
      } else {
        const auto scale = per_axis(ws, "scale", i, k.axes);
        for (int p = 0; p < k.axes; ++p) k.scale[p] = float(scale[size_t(p)]);
      }
      k.half = t == DType::kF16;
      plan.shapes.push_back(k);
    }
    return plan;
  }

  bool normalized_;
  std::mutex mutex_;
  std::vector<std::vector<float>> scratch_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the same plan; descriptors and the window table go up in one copy, the float
// scratch (three planes' worth per sample) comes from the device pool.
class LaplacianGpu final : public Laplacian {
 public:
  using Laplacian::Laplacian;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Plan plan = make_plan(ws);
    Batch& out = add_output(ws, plan.out_dtype, shapes(in), in.layout());
    const int n = in.size();
    if (n == 0) return;
    std::vector<kernels::LaplacianGpuSample> desc(static_cast<size_t>(n));
    std::vector<size_t> at(static_cast<size_t>(n));
    size_t floats = 0;
    int64_t max_elems = 0;
    for (int i = 0; i < n; ++i) {
      const auto& k = plan.shapes[size_t(i)];
      const int64_t elems = k.planes * kernels::laplacian_plane_size(k);
      at[size_t(i)] = floats;
      floats += size_t(3 * elems);
      max_elems = std::max(max_elems, elems);
    }
    if (max_elems == 0) return;
    auto work = ws.device_pool->acquire_on(floats * sizeof(float), ws.stream);
    auto* base = static_cast<float*>(work->data());
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      const auto& k = plan.shapes[size_t(i)];
      const int64_t elems = k.planes * kernels::laplacian_plane_size(k);
      d.in = in.data(i), d.out = out.data(i), d.shape = k;
      d.a = base + at[size_t(i)], d.b = d.a + elems, d.acc = d.b + elems;
    }
    const size_t desc_bytes = (desc.size() * sizeof(kernels::LaplacianGpuSample) + 255) / 256 * 256;
    std::vector<uint8_t> host(desc_bytes + kernels::kLaplacianWindowTableSize * sizeof(float));
    std::memcpy(host.data(), desc.data(), desc.size() * sizeof(kernels::LaplacianGpuSample));
    kernels::laplacian_window_table(reinterpret_cast<float*>(host.data() + desc_bytes));
    auto device = upload(ws, host);
    auto* dev = static_cast<uint8_t*>(device->data());
    cuda_check(kernels::laplacian_gpu(reinterpret_cast<const kernels::LaplacianGpuSample*>(dev),
                                      reinterpret_cast<const float*>(dev + desc_bytes), n,
                                      plan.axes, max_elems, in.dtype(), plan.out_dtype, ws.stream),
               "laplacian (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema laplacian_schema() {
  ArgSchema dtype{"dtype",
                  ArgType::kDType,
                  "Output type: the input's (default) or float32. Integer outputs are rounded half "
                  "away from zero and saturated.",
                  std::nullopt,
                  false,
                  true};
  return {
      .name = "laplacian",
      .doc =
          "The Laplacian of each sample, as DALI's fn.laplacian: the sum over the spatial axes of "
          "second partial derivatives, each a separable convolution with a derivative window "
          "(size window_size) along its axis and binomial smoothing windows along the others "
          "(size smoothing_size, or the derivative's when not given; 1: none), borders "
          "mirrored without repeating the edge (reflect-101), in float32 with DALI's order of "
          "operations (bit-exact). Partial i is scaled by scale[i], or by "
          "2^-(s - n - 2) with normalized_kernel (s: the sum of its window sizes, n: the "
          "number of spatial axes). Samples: 1-D to 3-D (W, HW, DHW), channels first or last "
          "(HWC, CHW, DHWC), sequences (FHWC, FCHW, CFHW); without a layout every axis is "
          "spatial. Types: 8- to 64-bit integers, float16 (with DALI's float16 rounding of "
          "every product and intermediate), float32.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"window_size", ArgType::kIntList,
                "Size of the derivative windows: one value or one per spatial axis (odd, 3 to "
                "31).",
                std::vector<int64_t>{3}, true},
               optional_arg("smoothing_size", ArgType::kIntList,
                            "Size of the smoothing windows: one value or one per spatial axis "
                            "(odd, 1 to 31). Default: each partial derivative smooths with its "
                            "derivative window's size."),
               {"scale", ArgType::kFloatList,
                "Factors of the partial derivatives: one value or one per spatial axis.",
                std::vector<double>{1.0}, true},
               {"normalized_kernel", ArgType::kBool,
                "Scale each partial derivative by 2^-(s - n - 2) (s: the sum of its window "
                "sizes, n: the spatial axes); scale must not be given then.",
                false},
               dtype},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Laplacian>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<LaplacianGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{.args = {}},
  };
}

}  // namespace stoker::ops
