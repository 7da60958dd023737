#include "stoker/ops/tensor/fill_ops.hpp"

#include <algorithm>

#include "stoker/kernels/tensor/fill_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/reshape.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"

namespace stoker::ops {
namespace {

// One operator for the six (DALI's ConstantValue): the shape comes from a "like" input or from
// `shape` (default: a scalar), the values from a fill input or a constant 0 or 1.
class Fill final : public Operator {
 public:
  Fill(const OpSpec& spec, bool like, bool fill_input, int value)
      : Operator(spec),
        op_(spec.schema->name),
        like_(like),
        fill_input_(fill_input),
        value_(value) {}

  void run(Workspace& ws) override {
    const Batch* like = like_ ? &ws.input(0) : nullptr;
    const Batch* fill = fill_input_ ? &ws.input(like_ ? 1 : 0) : nullptr;
    const int n = like ? like->size() : fill ? fill->size() : ws.num_samples();
    // dtype: the argument where given (ones and zeros default to int32), else the like input's,
    // else the fill's.
    DType dtype = like ? like->dtype() : fill ? fill->dtype() : DType::kI32;
    if (spec_.schema->find_arg("dtype") && (spec_.has_arg("dtype") || !like))
      dtype = dtype_from_name(spec_.arg<std::string>("dtype"));
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) shapes[size_t(i)] = like ? like->shape(i) : shape_arg(ws, i);
    TensorLayout layout = like ? like->layout() : TensorLayout();
    if (!like && spec_.has_arg("layout")) {
      layout = spec_.arg<std::string>("layout");
      for (int i = 0; i < n; ++i) check_layout_fits(op_, layout, i, shapes[size_t(i)]);
    }
    if (fill) {
      for (int i = 0; i < n; ++i)
        STOKER_ENFORCE(kernels::broadcasts_to(fill->shape(i).dims(), shapes[size_t(i)].dims()),
                       ValueError, op_, ": the fill_value of sample ", i, " has shape ",
                       fill->shape(i).to_string(), ", which does not broadcast to the output's ",
                       shapes[size_t(i)].to_string(),
                       " (each extent, from the innermost, must be the output's or 1)");
    }
    Batch& out = add_output(ws, dtype, shapes, layout, like ? like : fill);
    for_each_sample(
        ws, n,
        [&](int i, int) {
          visit_numeric(dtype, op_ + " output", [&](auto ot) {
            using Out = typename decltype(ot)::type;
            Out* o = out.data_as<Out>(i);
            if (!fill) {
              std::fill(o, o + shapes[size_t(i)].volume(), cast_value<Out>(int32_t(value_)));
              return;
            }
            visit_numeric(fill->dtype(), op_ + " fill_value", [&](auto it) {
              using In = typename decltype(it)::type;
              kernels::broadcast_fill_cpu(o, shapes[size_t(i)].dims(), fill->data_as<const In>(i),
                                          fill->shape(i).dims());
            });
          });
        },
        like ? like : fill);
  }

 private:
  // `shape` for sample i (a constant or a per-sample list); none: a scalar.
  TensorShape shape_arg(const Workspace& ws, int i) const {
    if (!spec_.given("shape")) return {};
    std::vector<int64_t> dims;
    for (double v : list_arg(ws, "shape", i)) {
      STOKER_ENFORCE(v >= 0, ValueError, op_, ": negative extent ", int64_t(v),
                     " in the shape of sample ", i);
      dims.push_back(int64_t(std::min(v, double(INT64_MAX / 2))));  // larger: refused below
    }
    STOKER_ENFORCE(dims.size() <= size_t(kMaxNdim), ValueError, op_, ": ", dims.size(),
                   " dimensions asked for; at most ", kMaxNdim, " are supported");
    check_arg_elements(op_, "shape", dims, i);
    return TensorShape(std::move(dims));
  }

  std::string op_;
  bool like_, fill_input_;
  int value_;
};

ArgSchema shape_arg_schema() {
  return optional_arg("shape", ArgType::kIntList,
                      "The shape of each output sample (a per-sample tensor allowed); default: "
                      "a scalar.");
}
ArgSchema layout_arg_schema() {
  return optional_arg("layout", ArgType::kString,
                      "The output's layout (when not empty, one name per axis).", false);
}

OpSchema::Factory factory(bool like, bool fill_input, int value) {
  return [=](const OpSpec& s) { return std::make_unique<Fill>(s, like, fill_input, value); };
}

// ones and zeros, with or without a like input.
OpSchema constant_fill(const std::string& name, int value, bool like) {
  const std::string what = value ? "ones" : "zeros";
  OpSchema s{
      .name = name,
      .outputs = {"output"},
      .make_cpu = factory(like, false, value),
  };
  if (like) {
    s.doc = "A tensor of " + what +
            " with the shape, dtype and layout of `data_like` (whose "
            "values are not read); `dtype` overrides the dtype.";
    s.inputs = {"data_like"};
    s.args = {
        optional_arg("dtype", ArgType::kDType, "The output dtype (default: data_like's).", false)};
    s.example = OpExample{};
  } else {
    s.doc = "A tensor of " + what + " per sample, of `shape` (default: a scalar) and `dtype`.";
    s.args = {shape_arg_schema(),
              {"dtype", ArgType::kDType, "The output dtype.", std::string("int32")},
              layout_arg_schema()};
    s.example = OpExample{.args = {{"shape", std::vector<int64_t>{2, 3}}}};
  }
  return s;
}

}  // namespace

OpSchema full_schema() {
  return {
      .name = "full",
      .doc =
          "A tensor of `shape` (default: a scalar) per sample, filled with that sample's "
          "`fill_value` broadcast numpy's way (each extent, from the innermost, equals the "
          "output's or is 1), of fill_value's dtype.",
      .inputs = {"fill_value"},
      .outputs = {"output"},
      .args = {shape_arg_schema(), layout_arg_schema()},
      .make_cpu = factory(false, true, 0),
      .example = OpExample{.args = {{"shape", std::vector<int64_t>{2, 3}}}, .layout = ""},
  };
}

OpSchema full_like_schema() {
  return {
      .name = "full_like",
      .doc =
          "A tensor with the shape, dtype and layout of `data_like` (whose values are not "
          "read), filled with `fill_value` broadcast as in full and converted with cast's rules.",
      .inputs = {"data_like", "fill_value"},
      .outputs = {"output"},
      .make_cpu = factory(true, true, 0),
      .example = OpExample{},
  };
}

OpSchema ones_schema() { return constant_fill("ones", 1, false); }
OpSchema ones_like_schema() { return constant_fill("ones_like", 1, true); }
OpSchema zeros_schema() { return constant_fill("zeros", 0, false); }
OpSchema zeros_like_schema() { return constant_fill("zeros_like", 0, true); }

}  // namespace stoker::ops
