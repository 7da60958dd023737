// arithmetic: one operator evaluates a whole expression of pipeline values (`a * 2 + b`,
// comparisons, stoker.math functions), so an expression costs one pass over the data.
//
// The expression arrives as text in prefix form: fn(arg, ...), inputs as &k, constants as
// $value:type (type i32, f32 or b). Types follow the usual promotions: any float makes the
// result float (float64 > float32 > float16), integers widen to the larger (signed when
// mixed); `/` of integers gives float32; comparisons and logical operators give bool.
// Evaluation goes node by node over whole arrays in double (integers beyond 2^53 lose
// precision); each node's values are converted to its type (rounded half away from zero,
// saturated).
#include "stoker/ops/math/arithmetic.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "stoker/kernels/math/arithmetic_functions.hpp"
#include "stoker/kernels/math/arithmetic_gpu.hpp"
#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

struct Expr {
  std::string fn;  // "" for leaves
  int code = -1;   // fn's kernels::ArithCode (per-element dispatch without strings)
  int input = -1;  // leaf: input index, or -1 for a constant
  double value = 0;
  DType type = DType::kF32;
  std::vector<Expr> args;
};

int rank(DType d) {  // float ranks above every integer; wider ranks higher
  switch (d) {
    case DType::kF64:
      return 40;
    case DType::kF32:
      return 30;
    case DType::kF16:
    case DType::kBF16:
      return 20;
    default:
      return int(dtype_size(d));
  }
}

bool is_signed_int(DType d) {
  return d == DType::kI8 || d == DType::kI16 || d == DType::kI32 || d == DType::kI64;
}

DType promote(DType a, DType b) {
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    return rank(a) >= rank(b) ? a : b;
  }
  if (a == DType::kBool && b == DType::kBool) return DType::kI32;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool sa = is_signed_int(a), sb = is_signed_int(b);
  const size_t za = dtype_size(a), zb = dtype_size(b);
  if (sa == sb) return za >= zb ? a : b;
  const size_t size = std::max(sa ? za : 2 * za, sb ? zb : 2 * zb);  // signed that holds both
  return size >= 8 ? DType::kI64 : size == 4 ? DType::kI32 : size == 2 ? DType::kI16 : DType::kI8;
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  Expr parse() {
    Expr e = node();
    STOKER_ENFORCE(pos_ == s_.size(), ValueError, "arithmetic: trailing text in '", s_, "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw ValueError(detail::concat("arithmetic: ", what, " at position ", pos_, " of '", s_, "'"));
  }
  Expr node() {
    if (pos_ >= s_.size()) fail("unexpected end");
    Expr e;
    if (s_[pos_] == '&') {
      ++pos_;
      e.input = int(number());
      return e;
    }
    if (s_[pos_] == '$') {
      ++pos_;
      size_t colon = s_.find(':', pos_);
      if (colon == std::string_view::npos) fail("constant without a type");
      auto text = s_.substr(pos_, colon - pos_);
      auto r = std::from_chars(text.data(), text.data() + text.size(), e.value);
      if (r.ec != std::errc() || r.ptr != text.data() + text.size()) fail("bad constant");
      pos_ = colon + 1;
      size_t end = pos_;
      while (end < s_.size() && std::isalnum(static_cast<unsigned char>(s_[end]))) ++end;
      auto t = s_.substr(pos_, end - pos_);
      e.type = t == "i32" ? DType::kI32 : t == "b" ? DType::kBool : DType::kF32;
      if (t != "i32" && t != "b" && t != "f32") fail("unknown constant type");
      pos_ = end;
      return e;
    }
    size_t open = s_.find('(', pos_);
    if (open == std::string_view::npos) fail("expected a function");
    e.fn = std::string(s_.substr(pos_, open - pos_));
    e.code = 0;
    while (e.code < kernels::kArCount && e.fn != kernels::kArithFunctions[e.code].name) ++e.code;
    if (e.code == kernels::kArCount) fail("unknown function");
    pos_ = open + 1;
    for (int k = 0; k < kernels::kArithFunctions[e.code].arity; ++k) {
      if (k > 0) expect(',');
      e.args.push_back(node());
    }
    expect(')');
    return e;
  }
  void expect(char c) {
    if (pos_ >= s_.size() || s_[pos_] != c) fail(c == ')' ? "expected ')'" : "expected ','");
    ++pos_;
  }
  int64_t number() {
    int64_t v = 0;
    auto r = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v);
    if (r.ec != std::errc()) fail("expected an input number");
    pos_ = size_t(r.ptr - s_.data());
    return v;
  }
  std::string_view s_;
  size_t pos_ = 0;
};

// Fills in the result type of every node from the inputs' dtypes.
void type_tree(Expr& e, const std::vector<DType>& inputs) {
  if (e.fn.empty()) {
    if (e.input >= 0) {
      STOKER_ENFORCE(e.input < int(inputs.size()), ValueError, "arithmetic: input &", e.input,
                     " of ", inputs.size());
      e.type = inputs[size_t(e.input)];
    }
    return;
  }
  for (auto& a : e.args) type_tree(a, inputs);
  const auto& f = e.fn;
  const DType a = e.args[0].type;
  if (f == "eq" || f == "ne" || f == "lt" || f == "le" || f == "gt" || f == "ge") {
    e.type = DType::kBool;
  } else if (f == "and" || f == "or" || f == "xor") {
    const DType b = e.args[1].type;
    STOKER_ENFORCE(!is_float(a) && !is_float(b), TypeError,
                   "arithmetic: &, | and ^ need "
                   "integer or bool operands, got ",
                   dtype_name(a), " and ", dtype_name(b));
    e.type = a == DType::kBool && b == DType::kBool ? DType::kBool : promote(a, b);
  } else if (f == "div") {
    e.type = is_float(a) || is_float(e.args[1].type) ? promote(a, e.args[1].type) : DType::kF32;
  } else if (e.args.size() == 1) {
    const bool keep = f == "neg" || f == "abs" || f == "floor" || f == "ceil";
    e.type = keep ? (a == DType::kBool ? DType::kI32 : a)
                  : (a == DType::kF64 ? DType::kF64 : DType::kF32);
  } else if (f == "atan2") {
    e.type = promote(promote(a, e.args[1].type), DType::kF32);
  } else {
    e.type = promote(a, e.args[1].type);
    if (f == "clamp") e.type = promote(e.type, e.args[2].type);
  }
}

// Function `code` (kernels::arith_apply, shared with the GPU), raising on integer division
// or modulo by zero.
double apply(int code, double x, double y, double z, DType t) {
  if ((code == kernels::kArFdiv || code == kernels::kArMod) && !is_float(t))
    STOKER_ENFORCE(y != 0, ValueError, "arithmetic: integer ",
                   code == kernels::kArFdiv ? "division" : "modulo", " by zero");
  return kernels::arith_apply(code, x, y, z, !is_float(t));
}

// Rounds a node's value to its type, so that integer and float32 intermediates behave as
// those types would (e.g. int32 / int32 division happens on whole numbers).
void to_type(std::vector<double>& v, DType t) {
  visit_dtype<DType::kBool, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8,
              DType::kI16, DType::kI32, DType::kI64, DType::kF16, DType::kBF16, DType::kF32,
              DType::kF64>(t, "arithmetic", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (auto& x : v) {
      if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        x = double(float(kernels::cast_value<T>(x)));
      } else {
        x = double(kernels::cast_value<T>(x));
      }
    }
  });
}

// Evaluates `e` over a whole sample, node by node: each node's values as one array (a single
// value when all its operands are single values, which broadcast).
std::vector<double> evaluate(const Expr& e, const std::vector<std::vector<double>>& in) {
  if (e.fn.empty()) return e.input < 0 ? std::vector<double>{e.value} : in[size_t(e.input)];
  std::vector<std::vector<double>> a;
  size_t n = 1;  // one element broadcasts; every other operand has the sample's size (maybe 0)
  for (const auto& arg : e.args) {
    a.push_back(evaluate(arg, in));
    if (a.back().size() != 1) n = a.back().size();
  }
  auto at = [&](size_t k, size_t p) { return k < a.size() ? a[k][a[k].size() == 1 ? 0 : p] : 0.0; };
  std::vector<double> out(n);
  for (size_t p = 0; p < n; ++p) out[p] = apply(e.code, at(0, p), at(1, p), at(2, p), e.type);
  to_type(out, e.type);
  return out;
}

class Arithmetic : public Operator {
 public:
  explicit Arithmetic(const OpSpec& spec)
      : Operator(spec), tree_(Parser(spec.arg<std::string>("expr")).parse()) {}

  void run(Workspace& ws) override {
    const int k = int(ws.inputs.size());
    const Expr tree = typed_tree(ws);
    const int n = ws.input(0).size();
    Batch& out = add_output(ws, tree.type, shapes(ws), ws.input(0).layout());
    for_each_sample(ws, n, [&](int i, int) {
      const int64_t count = out.shape(i).volume();
      std::vector<std::vector<double>> in(static_cast<size_t>(k));
      for (int j = 0; j < k; ++j) in[size_t(j)] = sample_as_doubles(ws.input(j), i);
      std::vector<double> result = evaluate(tree, in);
      visit_dtype<DType::kBool, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kI8,
                  DType::kI16, DType::kI32, DType::kI64, DType::kF16, DType::kBF16, DType::kF32,
                  DType::kF64>(tree.type, "arithmetic output", [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* o = out.data_as<T>(i);
        for (int64_t p = 0; p < count; ++p)
          o[p] = kernels::cast_value<T>(result[result.size() == 1 ? 0 : size_t(p)]);
      });
    });
  }

 protected:
  Expr typed_tree(const Workspace& ws) const {
    std::vector<DType> types;
    for (size_t j = 0; j < ws.inputs.size(); ++j) types.push_back(ws.input(int(j)).dtype());
    Expr tree = tree_;
    type_tree(tree, types);
    return tree;
  }

  static std::vector<TensorShape> shapes(const Workspace& ws) {
    const int k = int(ws.inputs.size());
    const int n = ws.input(0).size();
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      // Every input of a sample has one shape, or a single element (broadcast).
      TensorShape shape{};
      bool any = false;
      for (int j = 0; j < k; ++j) {
        const auto& s = ws.input(j).shape(i);
        if (s.volume() == 1) {  // broadcast, unless nothing larger comes
          if (!any) shape = s;
          continue;
        }
        STOKER_ENFORCE(!any || s == shape, ValueError, "arithmetic: sample ", i,
                       " has operands of shapes ", shape.to_string(), " and ", s.to_string(),
                       " (they must agree, or have one element)");
        shape = s;
        any = true;
      }
      shapes.push_back(shape);
    }
    return shapes;
  }

  Expr tree_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the typed tree becomes a postfix program interpreted per element
// (kernels/math/arithmetic_gpu), one launch per batch.
class ArithmeticGpu final : public Arithmetic {
 public:
  using Arithmetic::Arithmetic;
  void run(Workspace& ws) override {
    const int k = int(ws.inputs.size());
    const Expr tree = typed_tree(ws);
    const int n = ws.input(0).size();
    Batch& out = add_output(ws, tree.type, shapes(ws), ws.input(0).layout());
    STOKER_ENFORCE(k <= kernels::kArithMaxInputs, ValueError, "arithmetic (gpu): at most ",
                   kernels::kArithMaxInputs, " operands, got ", k);
    kernels::ArithProgram prog;
    int depth = 0, most = 0;
    compile(tree, prog, depth, most);
    STOKER_ENFORCE(most <= kernels::kArithMaxStack, ValueError,
                   "arithmetic (gpu): the expression is too deeply nested");
    for (int j = 0; j < k; ++j) prog.input_type[j] = ws.input(j).dtype();
    prog.out_type = tree.type;
    if (n == 0) return;
    std::vector<kernels::ArithGpuSample> desc(static_cast<size_t>(n));
    int64_t largest = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      for (int j = 0; j < k; ++j) {
        d.in[j] = ws.input(j).data(i);
        d.in_count[j] = ws.input(j).shape(i).volume();
      }
      d.out = out.data(i), d.count = out.shape(i).volume();
      largest = std::max(largest, d.count);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::arithmetic_gpu(static_cast<const kernels::ArithGpuSample*>(device->data()),
                                       n, largest, prog, ws.stream),
               "arithmetic (gpu): launching the kernel");
  }

 private:
  // Postfix code for `e`; tracks the stack depth.
  static void compile(const Expr& e, kernels::ArithProgram& p, int& depth, int& most) {
    STOKER_ENFORCE(p.length < kernels::kArithMaxProgram, ValueError,
                   "arithmetic (gpu): the expression has more than ", kernels::kArithMaxProgram,
                   " steps");
    if (e.fn.empty()) {
      kernels::ArithInstr ins;
      if (e.input >= 0)
        ins.op = -1, ins.arg = e.input;
      else
        ins.op = -2, ins.value = e.value;
      p.code[p.length++] = ins;
      most = std::max(most, ++depth);
      return;
    }
    for (const auto& a : e.args) compile(a, p, depth, most);
    STOKER_ENFORCE(p.length < kernels::kArithMaxProgram, ValueError,
                   "arithmetic (gpu): the expression has more than ", kernels::kArithMaxProgram,
                   " steps");
    kernels::ArithInstr ins;
    ins.op = e.code, ins.arity = int32_t(e.args.size()), ins.type = e.type;
    p.code[p.length++] = ins;
    depth -= ins.arity - 1;
  }
};
#endif

}  // namespace

OpSchema arithmetic_schema() {
  return {
      .name = "arithmetic",
      .doc =
          "Evaluates an expression of pipeline values in one pass; made by Python operators "
          "on DataNodes (a * 2 + b, a < 3, a & b, -a) and stoker.math functions, not called "
          "directly. Operands of a sample must have the same shape or one element. Result "
          "types: any float operand makes the result float (float64 > float32 > float16), "
          "integers widen to the larger (signed when mixed), `/` of integers is float32, "
          "`//` and `%` floor as Python does, comparisons give bool. Computed in double per "
          "element (integers beyond 2^53 lose precision), each intermediate rounded to its "
          "type; integers saturate.",
      .inputs = {"input"},
      .variadic_inputs = true,
      .outputs = {"output"},
      .args = {{"expr", ArgType::kString, "The expression in prefix form (see above)."}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Arithmetic>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<ArithmeticGpu>(s); },
#endif
      .example = OpExample{.args = {{"expr", std::string("add(&0,$2:i32)")}}},
  };
}

}  // namespace stoker::ops
