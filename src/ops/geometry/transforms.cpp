#include "stoker/ops/geometry/transforms.hpp"

#include <cmath>
#include <cstring>
#include <numbers>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// DALI's transforms have 1 to 6 dimensions (rotations and shears 2 or 3).
constexpr int kMaxDims = 6;

// An affine transform of n dimensions as a homogeneous (n+1) x (n+1) matrix, in float32 as DALI
// computes them (its outputs are the first n rows).
struct Affine {
  int n = 2;
  float m[kMaxDims + 1][kMaxDims + 1] = {};
  static Affine identity(int n) {
    Affine a;
    a.n = n;
    for (int i = 0; i <= n; ++i) a.m[i][i] = 1.f;
    return a;
  }
  // this x other: `other` applied first.
  Affine operator*(const Affine& o) const {
    Affine r;
    r.n = n;
    for (int i = 0; i <= n; ++i) {
      for (int j = 0; j <= n; ++j) {
        float s = 0.f;
        for (int k = 0; k <= n; ++k) s += m[i][k] * o.m[k][j];
        r.m[i][j] = s;
      }
    }
    return r;
  }
  // The linear part about `c`: its translation becomes c - M c.
  void about(const std::vector<double>& c) {
    for (int i = 0; i < n; ++i) {
      float mc = 0.f;
      for (int j = 0; j < n; ++j) mc += m[i][j] * float(c[size_t(j)]);
      m[i][n] = float(c[size_t(i)]) - mc;
    }
  }
};

enum class Kind { kTranslation, kScale, kRotation, kShear, kCrop, kCombine };

class Transform final : public Operator {
 public:
  Transform(const OpSpec& spec, Kind kind)
      : Operator(spec), kind_(kind), reverse_(spec.arg<bool>("reverse_order")) {}

  void run(Workspace& ws) override {
    const int inputs = int(ws.inputs.size());
    const int n_samples = ws.num_samples();
    STOKER_ENFORCE(kind_ != Kind::kCombine || inputs >= 2, ValueError,
                   name(), ": give at least two transforms to combine");
    std::vector<Affine> out(static_cast<size_t>(n_samples));
    for (int i = 0; i < n_samples; ++i) {
      std::vector<Affine> given;
      for (int k = 0; k < inputs; ++k) given.push_back(read_input(ws.input(k), i, k));
      const int hint = given.empty() ? 0 : given[0].n;
      if (kind_ == Kind::kCombine) {
        Affine t = given[0];  // the first input applied first
        for (size_t k = 1; k < given.size(); ++k) {
          STOKER_ENFORCE(given[k].n == t.n, ValueError, name(), ": sample ", i, ": input ", k,
                         " is ", given[k].n, "-D, input 0 ", t.n, "-D");
          t = reverse_ ? t * given[k] : given[k] * t;
        }
        out[size_t(i)] = t;
        continue;
      }
      Affine t = make(ws, i, hint);
      if (!given.empty()) {
        STOKER_ENFORCE(given[0].n == t.n, ValueError, name(), ": sample ", i, ": the input is ",
                       given[0].n, "-D, the transform ", t.n, "-D");
        t = reverse_ ? given[0] * t : t * given[0];
      }
      out[size_t(i)] = t;
    }
    std::vector<TensorShape> shapes;
    for (const auto& a : out) shapes.emplace_back(std::vector<int64_t>{a.n, a.n + 1});
    Batch& o = add_output(ws, DType::kF32, shapes, TensorLayout());
    for (int i = 0; i < n_samples; ++i) {
      const Affine& a = out[size_t(i)];
      auto* dst = static_cast<float*>(o.data(i));
      for (int r = 0; r < a.n; ++r) {
        for (int c = 0; c <= a.n; ++c) *dst++ = a.m[r][c];
      }
    }
  }

 private:
  const std::string& name() const { return spec_.schema->name; }

  Affine read_input(const Batch& b, int i, int k) const {
    STOKER_ENFORCE(b.dtype() == DType::kF32, TypeError, name(), ": input ", k,
                   " must be a float32 transform, got ", dtype_name(b.dtype()));
    const auto& s = b.shape(i);
    STOKER_ENFORCE(s.ndim() == 2 && s[0] >= 1 && s[0] <= kMaxDims && s[1] == s[0] + 1,
                   ValueError, name(), ": sample ", i, " of input ", k,
                   " must be an n x (n+1) affine matrix (n = 1 to ", kMaxDims, "), got ",
                   s.to_string());
    Affine a = Affine::identity(int(s[0]));
    const auto* v = static_cast<const float*>(b.data(i));
    for (int r = 0; r < a.n; ++r) {
      for (int c = 0; c <= a.n; ++c) a.m[r][c] = *v++;
    }
    return a;
  }

  std::vector<double> list(const Workspace& ws, const char* arg, int i) const {
    return list_arg(ws, arg, i);
  }

  // The number of dimensions from the arguments' lengths (or the input's, or `ndim`). As DALI:
  // translations, scalings and crops have 1 to 6 dimensions, and single values (or none) make
  // a 1-D one; rotations and shears have 2 or 3, and single values a 2-D one.
  int dims(std::initializer_list<std::pair<const char*, int>> args, const Workspace& ws, int i,
           int hint) const {
    const bool planar = kind_ == Kind::kRotation || kind_ == Kind::kShear;
    for (auto [arg, per] : args) {
      if (!spec_.given(arg)) continue;
      const auto v = list(ws, arg, i);
      if (v.size() > 1) {
        const int n = int(v.size()) / per;
        STOKER_ENFORCE(int(v.size()) == n * per && (planar ? n == 2 || n == 3 : n <= kMaxDims),
                       ValueError, name(), ": `", arg, "` has ", v.size(), " values: not a ",
                       planar ? "2-D or 3-D" : "1-D to 6-D", " transform");
        return n;
      }
    }
    if (hint) {
      STOKER_ENFORCE(!planar || hint == 2 || hint == 3, ValueError, name(), ": sample ", i,
                     ": the input is ", hint, "-D; a ", name(), " is 2-D or 3-D");
      return hint;
    }
    if (spec_.schema->find_arg("ndim") && spec_.given("ndim")) {
      const int n = int(spec_.arg<int64_t>("ndim"));
      STOKER_ENFORCE(n >= 1 && n <= kMaxDims, ValueError, name(), ": `ndim` is ", n,
                     ": give 1 to ", kMaxDims);
      return n;
    }
    return planar ? 2 : 1;
  }

  // A value per dimension: the list, or one value repeated.
  std::vector<double> per_dim(const Workspace& ws, const char* arg, int i, int n,
                              double missing) const {
    if (!spec_.given(arg) && !spec_.schema->find_arg(arg)->default_value) {
      return std::vector<double>(size_t(n), missing);
    }
    auto v = list(ws, arg, i);
    if (v.size() == 1) v.assign(size_t(n), v[0]);
    STOKER_ENFORCE(int(v.size()) == n, ValueError, name(), ": `", arg, "` has ", v.size(),
                   " values for a ", n, "-D transform");
    return v;
  }

  Affine make(const Workspace& ws, int i, int hint) const {
    switch (kind_) {
      case Kind::kTranslation: {
        const int n = dims({{"offset", 1}}, ws, i, hint);
        Affine a = Affine::identity(n);
        const auto off = per_dim(ws, "offset", i, n, 0.0);
        for (int d = 0; d < n; ++d) a.m[d][n] = float(off[size_t(d)]);
        return a;
      }
      case Kind::kScale: {
        const int n = dims({{"scale", 1}, {"center", 1}}, ws, i, hint);
        Affine a = Affine::identity(n);
        const auto s = per_dim(ws, "scale", i, n, 1.0);
        for (int d = 0; d < n; ++d) a.m[d][d] = float(s[size_t(d)]);
        a.about(per_dim(ws, "center", i, n, 0.0));
        return a;
      }
      case Kind::kRotation: {
        const int n = spec_.given("axis") ? 3 : dims({{"center", 1}}, ws, i, hint);
        Affine a = Affine::identity(n);
        const float rad = float(scalar_arg(ws, "angle", i)) * float(std::numbers::pi / 180.0);
        const float c = std::cos(rad), s = std::sin(rad);
        if (n == 2) {
          a.m[0][0] = c, a.m[0][1] = -s, a.m[1][0] = s, a.m[1][1] = c;
        } else {
          auto axis = per_dim(ws, "axis", i, 3, 0.0);
          const double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
          STOKER_ENFORCE(len > 0, ValueError, name(), ": sample ", i, ": `axis` has no length");
          // Rodrigues' formula in double: c I + s [u]x + (1 - c) u u^T.
          const double u[3] = {axis[0] / len, axis[1] / len, axis[2] / len};
          const double rd = scalar_arg(ws, "angle", i) * std::numbers::pi / 180.0;
          const double cd = std::cos(rd), sd = std::sin(rd);
          const double cross[3][3] = {{0, -u[2], u[1]}, {u[2], 0, -u[0]}, {-u[1], u[0], 0}};
          for (int r = 0; r < 3; ++r) {
            for (int q = 0; q < 3; ++q) {
              a.m[r][q] = float((1 - cd) * u[r] * u[q] + sd * cross[r][q] + (r == q ? cd : 0.0));
            }
          }
        }
        a.about(per_dim(ws, "center", i, n, 0.0));
        return a;
      }
      case Kind::kShear: {
        STOKER_ENFORCE(spec_.given("shear") != spec_.given("angles"), ValueError, name(),
                       ": give `shear` or `angles` (one of them)");
        const char* arg = spec_.given("shear") ? "shear" : "angles";
        auto v = list(ws, arg, i);
        STOKER_ENFORCE(v.size() == 2 || v.size() == 6, ValueError, name(), ": `", arg,
                       "` has ", v.size(), " values: 2 for 2-D ([sx, sy]), 6 for 3-D");
        if (!spec_.given("shear")) {
          for (auto& x : v) x = std::tan(x * std::numbers::pi / 180.0);
        }
        const int n = v.size() == 2 ? 2 : 3;
        Affine a = Affine::identity(n);
        size_t k = 0;
        for (int r = 0; r < n; ++r) {
          for (int q = 0; q < n; ++q) {
            if (r != q) a.m[r][q] = float(v[k++]);
          }
        }
        a.about(per_dim(ws, "center", i, n, 0.0));
        return a;
      }
      case Kind::kCrop: {
        const int n = dims({{"from_start", 1}, {"from_end", 1}, {"to_start", 1}, {"to_end", 1}},
                           ws, i, hint);
        Affine a = Affine::identity(n);
        auto fs = per_dim(ws, "from_start", i, n, 0.0), fe = per_dim(ws, "from_end", i, n, 1.0);
        auto ts = per_dim(ws, "to_start", i, n, 0.0), te = per_dim(ws, "to_end", i, n, 1.0);
        for (int d = 0; d < n; ++d) {
          if (spec_.arg<bool>("absolute")) {  // start and end in order
            if (fs[size_t(d)] > fe[size_t(d)]) std::swap(fs[size_t(d)], fe[size_t(d)]);
            if (ts[size_t(d)] > te[size_t(d)]) std::swap(ts[size_t(d)], te[size_t(d)]);
          }
          const float from = float(fe[size_t(d)]) - float(fs[size_t(d)]);
          STOKER_ENFORCE(from != 0.f, ValueError, name(), ": sample ", i,
                         ": the `from` window has no extent along axis ", d);
          const float scale = (float(te[size_t(d)]) - float(ts[size_t(d)])) / from;
          a.m[d][d] = scale;
          a.m[d][n] = float(ts[size_t(d)]) - float(fs[size_t(d)]) * scale;
        }
        return a;
      }
      case Kind::kCombine:
        break;
    }
    return Affine::identity(2);
  }

  Kind kind_;
  bool reverse_;
};

// A per-sample float list, optional without a default.
ArgSchema list_arg_schema(const char* name, const char* doc, std::optional<ArgValue> def) {
  if (!def) return optional_arg(name, ArgType::kFloatList, doc);
  return {name, ArgType::kFloatList, doc, std::move(def), /*per_sample=*/true};
}

OpSchema transform_schema(const char* name, const char* doc, Kind kind,
                          std::vector<ArgSchema> args) {
  args.push_back({"reverse_order", ArgType::kBool,
                  "Apply this transform before the input's (default: after).", false});
  OpSchema s{
      .name = name,
      .doc = std::string(doc) +
             " Outputs a float32 affine matrix, n x (n+1) for n dimensions (1 to 6; 2x3 and "
             "3x4 for warp_affine, any for coord_transform); with "
             "an input matrix, the transform is applied after it (before, with reverse_order). "
             "Computed in float32, as DALI's transforms.",
      .inputs = {"transform"},
      .optional_inputs = 1,
      .outputs = {"transform"},
      .args = std::move(args),
      .make_cpu = [kind](const OpSpec& sp) { return std::make_unique<Transform>(sp, kind); },
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
  return s;
}

}  // namespace

OpSchema translation_transform_schema() {
  auto s = transform_schema("transforms.translation", "A translation by `offset`.",
                            Kind::kTranslation,
                            {list_arg_schema("offset", "The shift per dimension.", std::nullopt)});
  s.deprecated_names = {"transform_translation"};
  return s;
}

OpSchema scale_transform_schema() {
  return transform_schema(
      "transforms.scale", "A scaling by `scale` about `center`.", Kind::kScale,
      {list_arg_schema("scale", "The factor per dimension.", std::nullopt),
       list_arg_schema("center", "The fixed point (default: the origin).", std::nullopt),
       optional_arg("ndim", ArgType::kInt,
                    "Dimensions (1 to 6) when the arguments do not say; otherwise 1.",
                    /*per_sample=*/false)});
}

OpSchema rotation_transform_schema() {
  return transform_schema(
      "transforms.rotation", "A rotation by `angle` degrees about `center` (3-D: about `axis`).",
      Kind::kRotation,
      {{"angle", ArgType::kFloat, "Rotation angle, degrees.", std::nullopt, true},
       list_arg_schema("axis", "3-D: the rotation axis.", std::nullopt),
       list_arg_schema("center", "The fixed point (default: the origin).", std::nullopt)});
}

OpSchema shear_transform_schema() {
  return transform_schema(
      "transforms.shear",
      "A shear by `shear` factors ([sx, sy]; 3-D [sxy, sxz, syx, syz, szx, szy]) or `angles` "
      "(degrees: their tangents) about `center`.",
      Kind::kShear,
      {list_arg_schema("shear", "Shear factors.", std::nullopt),
       list_arg_schema("angles", "Shear angles, degrees.", std::nullopt),
       list_arg_schema("center", "The fixed point (default: the origin).", std::nullopt)});
}

OpSchema crop_transform_schema() {
  return transform_schema(
      "transforms.crop", "Maps the window [from_start, from_end] onto [to_start, to_end].",
      Kind::kCrop,
      {list_arg_schema("from_start", "Source window start.", std::vector<double>{0.0}),
       list_arg_schema("from_end", "Source window end.", std::vector<double>{1.0}),
       list_arg_schema("to_start", "Target window start.", std::vector<double>{0.0}),
       list_arg_schema("to_end", "Target window end.", std::vector<double>{1.0}),
       {"absolute", ArgType::kBool, "Swap starts and ends given in reverse.", false}});
}

OpSchema combine_transform_schema() {
  OpSchema s = transform_schema(
      "transforms.combine", "The composition of the input transforms, the first applied first.",
      Kind::kCombine, {});
  s.inputs = {"first", "then"};  // and more: the last repeats
  s.optional_inputs = 0;
  s.variadic_inputs = true;
  return s;
}

}  // namespace stoker::ops
