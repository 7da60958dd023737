#include "stoker/ops/geometry/coord_transform.hpp"

#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr int64_t kMaxComponents = 6;

// One sample's M (rows x cols, row-major) and T, in float32 as DALI applies them.
struct Affine {
  int64_t rows = 0, cols = 0;
  std::vector<float> m, t;
};

class CoordTransform final : public Operator {
 public:
  explicit CoordTransform(const OpSpec& spec)
      : Operator(spec), dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {
    STOKER_ENFORCE(!(spec.given("MT") && (spec.given("M") || spec.given("T"))), ValueError,
                   "coord_transform: give MT, or M and T, not both");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<Affine> maps(static_cast<size_t>(n));
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() >= 1, ValueError, "coord_transform: sample ", i,
                     " must have an axis of components (the last), got a scalar");
      maps[size_t(i)] = affine(ws, i, s[s.ndim() - 1]);
      auto d = s.dims();
      d.back() = maps[size_t(i)].rows;
      shapes.emplace_back(d);
    }
    Batch& out = add_output(ws, dtype_, shapes, in.layout());
    for_each_sample(ws, n, [&](int i, int) {
      const Affine& a = maps[size_t(i)];
      const int64_t points = a.cols > 0 ? in.shape(i).volume() / a.cols : 0;
      visit_numeric(in.dtype(), "coord_transform", [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        visit_numeric(dtype_, "coord_transform", [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          const In* src = static_cast<const In*>(in.data(i));
          Out* dst = static_cast<Out*>(out.data(i));
          float v[kMaxComponents];
          for (int64_t p = 0; p < points; ++p, src += a.cols, dst += a.rows) {
            for (int64_t c = 0; c < a.cols; ++c) v[c] = cast_value<float>(src[c]);
            for (int64_t r = 0; r < a.rows; ++r) {
              float acc = 0.f;  // M in, then + T: DALI's order of the sums
              for (int64_t c = 0; c < a.cols; ++c) acc += a.m[size_t(r * a.cols + c)] * v[c];
              dst[r] = cast_value<Out>(acc + a.t[size_t(r)]);
            }
          }
        });
      });
    });
  }

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
        STOKER_ENFORCE(m.size() % size_t(cols + 1) == 0, ValueError, "coord_transform: sample ",
                       i, ": MT has ", m.size(), " values, not rows of ", cols + 1);
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
    STOKER_ENFORCE(a.rows >= 1 && a.rows <= kMaxComponents, ValueError, "coord_transform: ",
                   a.rows, " output components; 1 to ", kMaxComponents, " are supported");
    return a;
  }

  DType dtype_;
};

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
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
