#include "stoker/ops/geometry/coord_transform.hpp"

#include <algorithm>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/geometry/coord_transform.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr int64_t kMaxComponents = kernels::kCoordMaxComponents;

// One sample's M (rows x cols, row-major) and T, in float32 as DALI applies them.
struct Affine {
  int64_t rows = 0, cols = 0;
  std::vector<float> m, t;
};

class CoordTransform : public Operator {
 public:
  explicit CoordTransform(const OpSpec& spec)
      : Operator(spec), dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {
    STOKER_ENFORCE(!(spec.given("MT") && (spec.given("M") || spec.given("T"))), ValueError,
                   "coord_transform: give MT, or M and T, not both");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes;
    auto samples = plan(ws, shapes);
    Batch& out = add_output(ws, dtype_, shapes, in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::CoordTransformSample s = samples[size_t(i)];
      s.out = out.data(i);
      visit_numeric(in.dtype(), "coord_transform", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        visit_numeric(dtype_, "coord_transform", [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          kernels::coord_transform_cpu<Out, In>(s);
        });
      });
    });
  }

 protected:
  // Each sample's map and points (out left unset) and the output shapes.
  std::vector<kernels::CoordTransformSample> plan(const Workspace& ws,
                                                  std::vector<TensorShape>& shapes) const {
    const Batch& in = ws.input(0);
    std::vector<kernels::CoordTransformSample> samples(static_cast<size_t>(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      const auto& sh = in.shape(i);
      STOKER_ENFORCE(sh.ndim() >= 1, ValueError, "coord_transform: sample ", i,
                     " must have an axis of components (the last), got a scalar");
      const Affine a = affine(ws, i, sh[sh.ndim() - 1]);
      auto d = sh.dims();
      d.back() = a.rows;
      shapes.emplace_back(d);
      auto& s = samples[size_t(i)];
      s.in = in.data(i);
      s.points = a.cols > 0 ? sh.volume() / a.cols : 0;
      s.rows = int32_t(a.rows), s.cols = int32_t(a.cols);
      std::copy(a.m.begin(), a.m.end(), s.m);
      std::copy(a.t.begin(), a.t.end(), s.t);
    }
    return samples;
  }

  DType dtype_;

 private:
  // M and T of sample i for points of `cols` components, from M/T or MT (scalars: a multiple
  // of the identity, a translation repeated).
  Affine affine(const Workspace& ws, int i, int64_t cols) const {
    STOKER_ENFORCE(cols >= 1 && cols <= kMaxComponents, ValueError, "coord_transform: sample ", i,
                   " has ", cols, " components a point; 1 to ", kMaxComponents, " are supported");
    Affine a;
    a.cols = cols;
    std::vector<double> m, t;
    bool from_mt = spec_.given("MT");
    if (from_mt) {
      m = list_arg(ws, "MT", i);
      if (m.size() == 1) {
        from_mt = false;  // a scalar MT is a scalar M
      } else {
        STOKER_ENFORCE(m.size() % size_t(cols + 1) == 0, ValueError, "coord_transform: sample ", i,
                       ": MT has ", m.size(), " values, not rows of ", cols + 1);
        a.rows = int64_t(m.size()) / (cols + 1);
        for (int64_t r = 0; r < a.rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) a.m.push_back(float(m[size_t(r * (cols + 1) + c)]));
          a.t.push_back(float(m[size_t(r * (cols + 1) + cols)]));
        }
      }
    } else if (spec_.given("M")) {
      m = list_arg(ws, "M", i);
    }
    if (!from_mt) {
      if (m.empty()) m = {1.0};
      if (m.size() == 1) {
        a.rows = cols;
        a.m.assign(size_t(cols * cols), 0.f);
        for (int64_t c = 0; c < cols; ++c) a.m[size_t(c * cols + c)] = float(m[0]);
      } else {
        STOKER_ENFORCE(m.size() % size_t(cols) == 0, ValueError, "coord_transform: sample ", i,
                       ": M has ", m.size(), " values, not rows of ", cols, " (the components)");
        a.rows = int64_t(m.size()) / cols;
        for (double v : m) a.m.push_back(float(v));
      }
      t = spec_.given("T") ? list_arg(ws, "T", i) : std::vector<double>{0.0};
      STOKER_ENFORCE(t.size() == 1 || int64_t(t.size()) == a.rows, ValueError,
                     "coord_transform: sample ", i, ": T has ", t.size(), " values for ", a.rows,
                     " output components");
      for (int64_t r = 0; r < a.rows; ++r) a.t.push_back(float(t[t.size() == 1 ? 0 : size_t(r)]));
    }
    STOKER_ENFORCE(a.rows >= 1 && a.rows <= kMaxComponents, ValueError, "coord_transform: ", a.rows,
                   " output components; 1 to ", kMaxComponents, " are supported");
    return a;
  }
};

#ifdef STOKER_HAVE_CUDA
// One launch for the batch: a thread per point.
class CoordTransformGpu final : public CoordTransform {
 public:
  using CoordTransform::CoordTransform;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes;
    auto samples = plan(ws, shapes);
    Batch& out = add_output(ws, dtype_, shapes, in.layout());
    int64_t most = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      samples[i].out = out.data(int(i));
      most = std::max(most, samples[i].points);
    }
    STOKER_ENFORCE(kernels::coord_transform_gpu_supports(in.dtype(), dtype_), TypeError,
                   "coord_transform (gpu): ", dtype_name(in.dtype()), " to ", dtype_name(dtype_),
                   " is not supported; inputs: bool, integers, float32/64; outputs: 8-32-bit "
                   "integers, float32/64 (the cpu backend takes every type)");
    if (samples.empty()) return;
    cuda_check(kernels::coord_transform_gpu(
                   static_cast<const kernels::CoordTransformSample*>(upload(ws, samples)->data()),
                   int(samples.size()), most, in.dtype(), dtype_, ws.stream),
               "coord_transform (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema coord_transform_schema() {
  return {
      .name = "coord_transform",
      .doc =
          "Applies out = M in + T to points or vectors (as DALI's coord_transform): the last "
          "axis of each sample holds a point's n components (1-6); M is m x n (m rows of n "
          "values, flattened; a scalar: that multiple of the identity; default the identity), "
          "T has m values (a scalar: repeated), or MT gives [M | T] (m rows of n + 1). The "
          "output has m components a point, in `dtype` (float32 by default; integers are "
          "rounded and saturated). Computed in float32. Feed it transforms.* matrices as MT.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {optional_arg("M", ArgType::kFloatList, "The matrix, row-major."),
               optional_arg("T", ArgType::kFloatList, "The translation."),
               optional_arg("MT", ArgType::kFloatList, "[M | T], row-major."),
               {"dtype", ArgType::kDType, "The output's type.", std::string("float32")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<CoordTransform>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<CoordTransformGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
