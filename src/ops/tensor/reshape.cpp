#include "stoker/ops/tensor/reshape.hpp"

#include <cmath>
#include <optional>

namespace stoker::ops {

Batch& add_view_output(Workspace& ws, const Batch& in, DType dtype,
                       const std::vector<TensorShape>& shapes, TensorLayout layout) {
  const int n = in.size();
  ws.outputs.push_back(Batch::with_samples(n, dtype, std::move(layout), in.memory()));
  Batch& out = ws.outputs.back();
  out.copy_source_info(in);
  // No copy: each output sample points at its input sample's bytes and keeps them alive.
  for (int i = 0; i < n; ++i) out.set_sample(i, in.owner(i), in.data(i), shapes[size_t(i)]);
  return out;
}

TensorShape shape_from_src_dims(const TensorShape& in, const std::vector<int64_t>& src_dims,
                                const std::string& op, int sample) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < src_dims.size(); ++d) {
    const int64_t s = src_dims[d];
    STOKER_ENFORCE(s >= -1 && s < in.ndim(), ValueError, op, ": src_dims[", d, "] = ", s,
                   " is not an axis of sample ", sample, " of shape ", in.to_string(),
                   " (expected 0 to ", in.ndim() - 1, ", or -1 for a new axis)");
    dims.push_back(s < 0 ? 1 : in[int(s)]);
  }
  return TensorShape(std::move(dims));
}

void check_same_volume(const std::string& op, int sample, const TensorShape& in,
                       const TensorShape& out) {
  STOKER_ENFORCE(out.volume() == in.volume(), ValueError, op, ": sample ", sample, " of shape ",
                 in.to_string(), " (", in.volume(), " elements) cannot become ", out.to_string(),
                 " (", out.volume(), ")");
}

void check_layout_fits(const std::string& op, const TensorLayout& layout, int sample,
                       const TensorShape& shape) {
  STOKER_ENFORCE(layout.empty() || layout.ndim() == shape.ndim(), ValueError, op, ": layout '",
                 layout.str(), "' has ", layout.ndim(), " axes but sample ", sample, " has the ",
                 shape.ndim(), "-D shape ", shape.to_string());
}

namespace {

// How many negative (inferred) extents a list has.
template <typename T>
int negatives(const std::vector<T>& v) {
  int k = 0;
  for (T e : v) k += e < 0;
  return k;
}

// reshape and reinterpret (DALI registers one class for both): the new shape comes from
// `shape`, `rel_shape`, the shape input, `src_dims` or none of them (reinterpret's dtype alone).
class Reshape final : public Operator {
 public:
  explicit Reshape(const OpSpec& spec) : Operator(spec), op_(spec.schema->name) {
    const bool from_input = spec.inputs.size() > 1;
    const bool shape = spec.given("shape"), rel = spec.given("rel_shape");
    STOKER_ENFORCE(int(from_input) + int(shape) + int(rel) <= 1, ValueError, op_,
                   ": the shape input, `shape` and `rel_shape` are mutually exclusive; give one "
                   "of them");
    if (spec.schema->find_arg("dtype") && spec.has_arg("dtype"))
      dtype_ = dtype_from_name(spec.arg<std::string>("dtype"));
    if (spec.has_arg("src_dims")) src_dims_ = spec.arg<std::vector<int64_t>>("src_dims");
    // DALI refuses an operator that would change nothing.
    STOKER_ENFORCE(from_input || shape || rel || dtype_ || src_dims_ || spec.has_arg("layout"),
                   ValueError, op_, ": nothing to do: give `shape`, `rel_shape`, a shape input, ",
                   "`src_dims`", spec.schema->find_arg("dtype") ? ", `dtype`" : "", " or `layout`");
    source_ = from_input ? Source::kInput
              : rel      ? Source::kRelative
              : shape    ? Source::kShape
                         : Source::kNone;
    // Constant shapes are checked once, as DALI does (a per-sample one may hold zeros).
    if (spec.has_arg("shape")) {
      auto v = spec.arg<std::vector<int64_t>>("shape");
      STOKER_ENFORCE(negatives(v) <= 1, ValueError, op_, ": `shape` ", format_arg_value(v),
                     " has more than one negative extent (only one can be inferred)");
      for (int64_t e : v)
        STOKER_ENFORCE(e != 0, ValueError, op_, ": `shape` ", format_arg_value(v),
                       " has an extent of 0");
    }
    if (spec.has_arg("rel_shape")) {
      auto v = spec.arg<std::vector<double>>("rel_shape");
      STOKER_ENFORCE(!v.empty(), ValueError, op_, ": `rel_shape` is empty");
      STOKER_ENFORCE(negatives(v) <= 1, ValueError, op_, ": `rel_shape` ", format_arg_value(v),
                     " has more than one negative extent (only one can be inferred)");
      for (double e : v)
        STOKER_ENFORCE(e != 0, ValueError, op_, ": `rel_shape` ", format_arg_value(v),
                       " has an extent of 0");
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const DType dtype = dtype_.value_or(in.dtype());
    const int64_t in_size = int64_t(dtype_size(in.dtype())), out_size = int64_t(dtype_size(dtype));
    if (source_ == Source::kInput) {
      const DType t = ws.input(1).dtype();
      STOKER_ENFORCE(!is_float(t) && t != DType::kBool, TypeError, op_,
                     ": the shape input must hold integers, got ", dtype_name(t));
    }
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      shapes[size_t(i)] = sample_shape(ws, in.shape(i), i, in_size, out_size);
    add_view_output(ws, in, dtype, shapes, out_layout(in, shapes));
  }

 private:
  enum class Source { kNone, kShape, kRelative, kInput };

  TensorShape sample_shape(const Workspace& ws, const TensorShape& s, int i, int64_t in_size,
                           int64_t out_size) const {
    std::vector<int64_t> dims;
    if (source_ == Source::kRelative) {
      // out[d] = rel[d] * in[src_dims[d] or d], computed in float32 and rounded as DALI does
      // ([480, 640, 3] with [0.5, -1] gives [240, 3840]).
      auto r = list_arg(ws, "rel_shape", i);
      if (src_dims_) {
        STOKER_ENFORCE(r.size() == src_dims_->size(), ValueError, op_, ": `rel_shape` has ",
                       r.size(), " values but `src_dims` has ", src_dims_->size());
      } else {
        // One extra trailing axis is allowed when it is the inferred one.
        const bool extra = int(r.size()) == s.ndim() + 1 && r.back() < 0;
        STOKER_ENFORCE(int(r.size()) <= s.ndim() || extra, ValueError, op_, ": rel_shape has ",
                       r.size(), " values for sample ", i, " of shape ", s.to_string(),
                       " (use `src_dims` to add axes)");
      }
      const TensorShape src = src_dims_ ? shape_from_src_dims(s, *src_dims_, op_, i) : s;
      for (size_t k = 0; k < r.size(); ++k) {
        const float base = int(k) < src.ndim() ? float(src[int(k)]) : 1.f;
        dims.push_back(r[k] < 0 ? -1 : std::llround(float(r[k]) * base));
      }
    } else if (source_ == Source::kShape || source_ == Source::kInput) {
      const Batch* given = source_ == Source::kInput ? &ws.input(1) : nullptr;
      if (given) {
        // DALI also takes one 2-D tensor of one row per sample (here: a batch of one).
        const TensorShape& g = given->shape(i);
        STOKER_ENFORCE(g.ndim() == 1 || (g.ndim() == 2 && g[0] == 1), ValueError, op_,
                       ": the shape input of sample ", i,
                       " must be a 1-D list of extents, got shape ", g.to_string());
      }
      for (double v : given ? sample_as_doubles(*given, i) : list_arg(ws, "shape", i))
        dims.push_back(int64_t(v));
    } else {
      dims = src_dims_ ? shape_from_src_dims(s, *src_dims_, op_, i).dims() : s.dims();
    }
    STOKER_ENFORCE(dims.size() <= size_t(kMaxNdim), ValueError, op_, ": ", dims.size(),
                   " dimensions asked for; at most ", kMaxNdim, " are supported");
    if (source_ == Source::kNone) {
      TensorShape shape(dims);
      if (src_dims_) check_same_volume(op_, i, s, shape);
      return fit_innermost(std::move(shape), s, i, in_size, out_size);
    }
    // One negative extent takes what the others leave (in bytes: reinterpret may change the
    // element size).
    int wild = -1;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (dims[k] < 0) {
        STOKER_ENFORCE(wild < 0, ValueError, op_, ": more than one negative extent in the shape ",
                       TensorShape(dims).to_string(), " of sample ", i);
        wild = int(k);
      }
    }
    const int64_t bytes = s.bytes(in_size);
    if (wild >= 0) {
      std::vector<int64_t> others = dims;
      others.erase(others.begin() + wild);
      // Checked: the other extents' bytes past int64 leave no room for the inferred one.
      const int64_t known = TensorShape(std::move(others)).bytes(out_size);
      STOKER_ENFORCE(known > 0, ValueError, op_, ": cannot infer the negative extent of ",
                     TensorShape(dims).to_string(), " for sample ", i, " of shape ", s.to_string(),
                     ": the other extents hold no elements");
      dims[size_t(wild)] = bytes / known;
    }
    TensorShape shape(dims);
    if (in_size == out_size) {
      check_same_volume(op_, i, s, shape);
    } else {
      const int64_t out_bytes = shape.bytes(out_size);
      STOKER_ENFORCE(out_bytes == bytes, ValueError, op_, ": sample ", i, " of shape ",
                     s.to_string(), " (", bytes, " bytes) cannot become ", shape.to_string(),
                     " of ", out_size, "-byte elements (", out_bytes, " bytes)");
    }
    return shape;
  }

  // Without a new shape, a new element size rescales the innermost extent (DALI's rule).
  TensorShape fit_innermost(TensorShape shape, const TensorShape& s, int i, int64_t in_size,
                            int64_t out_size) const {
    if (in_size == out_size) return shape;
    STOKER_ENFORCE(shape.ndim() > 0, ValueError, op_, ": sample ", i,
                   " is a scalar: it has no innermost extent to hold ", out_size,
                   "-byte elements; give `shape`");
    int64_t& inner = shape[shape.ndim() - 1];
    STOKER_ENFORCE(inner * in_size % out_size == 0, ValueError, op_, ": the innermost extent of ",
                   "sample ", i, " of shape ", s.to_string(), " holds ", inner * in_size,
                   " bytes, not a multiple of the ", out_size, "-byte output element");
    inner = inner * in_size / out_size;
    return shape;
  }

  // `layout` when given (empty: none); else the input's where the number of axes is unchanged.
  TensorLayout out_layout(const Batch& in, const std::vector<TensorShape>& shapes) const {
    if (spec_.has_arg("layout")) {
      TensorLayout l = spec_.arg<std::string>("layout");
      for (size_t i = 0; i < shapes.size(); ++i) check_layout_fits(op_, l, int(i), shapes[i]);
      return l;
    }
    if (shapes.empty())
      return source_ == Source::kNone && !src_dims_ ? in.layout() : TensorLayout();
    for (const auto& s : shapes)
      if (s.ndim() != in.layout().ndim()) return {};
    return in.layout();
  }

  std::string op_;
  Source source_ = Source::kNone;
  std::optional<DType> dtype_;
  std::optional<std::vector<int64_t>> src_dims_;
};

std::vector<ArgSchema> reshape_args() {
  return {
      optional_arg("shape", ArgType::kIntList,
                   "The new shape; one negative extent is inferred from the volume (an input of "
                   "[480, 640, 3] with [240, -1] gives [240, 3840]). Constant extents may not be "
                   "0."),
      optional_arg("rel_shape", ArgType::kFloatList,
                   "The new shape as multiples of the input's extents: out[d] = in[d] * "
                   "rel_shape[d] (in[src_dims[d]] with `src_dims`), rounded; one negative value "
                   "takes what the volume leaves ([480, 640, 3] with [0.5, -1] gives [240, "
                   "3840]). At most as many values as input axes, or one more when the last is "
                   "negative."),
      optional_arg("src_dims", ArgType::kIntList,
                   "Output axis d takes input axis src_dims[d] (-1: a new axis of extent 1): "
                   "reorders, removes or inserts axes ([300, 200, 1] with [-1, 1, 0] gives [1, "
                   "200, 300]). With `rel_shape`, the extents it scales.",
                   false),
      optional_arg("layout", ArgType::kString,
                   "The output's layout; an empty string clears it. Default: the input's when "
                   "the number of axes is unchanged, else none.",
                   false),
  };
}

}  // namespace

OpSchema reshape_schema() {
  return {
      .name = "reshape",
      .doc =
          "Gives each sample a new shape with the same number of elements, without copying "
          "(the output views the input's memory): from `shape`, `rel_shape`, the optional "
          "shape input (a CPU list of integers per sample, as `shape`) or `src_dims`.",
      .inputs = {"data", "shape_input"},
      .optional_inputs = 1,
      .host_inputs = 1,
      .outputs = {"output"},
      .args = reshape_args(),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      // No data moves: the same operator views device memory as well.
      .make_gpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      .example = OpExample{.args = {{"shape", std::vector<int64_t>{-1}}}},
  };
}

OpSchema reinterpret_schema() {
  auto args = reshape_args();
  args.push_back(optional_arg(
      "dtype", ArgType::kDType,
      "The output's element type: the bytes are reinterpreted, not converted. The sample's size "
      "in bytes is kept: without a new shape the innermost extent is rescaled (and must hold a "
      "whole number of output elements); a negative extent is inferred in bytes.",
      false));
  return {
      .name = "reinterpret",
      .doc =
          "reshape that may also change the element type (`dtype`): each sample's bytes seen "
          "as another type, shape or layout, without copying.",
      .inputs = {"data", "shape_input"},
      .optional_inputs = 1,
      .host_inputs = 1,
      .outputs = {"output"},
      .args = std::move(args),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      .make_gpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      .example = OpExample{.args = {{"dtype", std::string("int8")}}},
  };
}

}  // namespace stoker::ops
