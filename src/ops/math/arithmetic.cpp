// arithmetic: one operator evaluates a whole expression of pipeline values (`a * 2 + b`,
// comparisons, stoker.math functions), so an expression costs one pass over the data.
//
// The expression arrives as text in prefix form: fn(arg, ...), inputs as &k, constants as
// $value:type (type i32, f32 or b). Types follow the usual promotions: any float makes the
// result float (float64 > float32 > float16), integers widen to the larger (signed when
// mixed); `/` of integers gives float32; comparisons and logical operators give bool.
// The typed tree becomes a postfix program that both backends' kernels evaluate in double
// (integers beyond 2^53 lose precision), each node's values converted to its type (rounded half
// away from zero, saturated): kernels/math/arithmetic_cpu.hpp and arithmetic_gpu.
#include "stoker/ops/math/arithmetic.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "stoker/kernels/math/arithmetic_cpu.hpp"
#include "stoker/kernels/math/arithmetic_functions.hpp"
#include "stoker/kernels/math/arithmetic_gpu.hpp"
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
  // Deeper nesting is refused rather than recursed into (the parser, the typing and the
  // compilation recurse once per level; the stage threads' stacks, and the larger frames of a
  // sanitizer build, must hold it). Expressions built in Python stay within Python's own
  // recursion limit (1,000).
  static constexpr int kMaxNesting = 1024;

  [[noreturn]] void fail(std::string_view what) {
    const std::string_view shown = s_.substr(0, 120);
    throw ValueError(detail::concat("arithmetic: ", what, " at position ", pos_, " of '", shown,
                                    shown.size() < s_.size() ? "...'" : "'"));
  }
  Expr node() {
    if (pos_ >= s_.size()) fail("unexpected end");
    if (++depth_ > kMaxNesting)
      fail(detail::concat("the expression nests deeper than ", kMaxNesting, " levels"));
    Expr e = leaf_or_call();
    --depth_;
    return e;
  }
  Expr leaf_or_call() {
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
  int depth_ = 0;
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
    // DALI's rule: neg and abs keep the type; every other function (floor and ceil included)
    // gives floats, float64 only for float64.
    const bool keep = f == "neg" || f == "abs";
    e.type = keep ? (a == DType::kBool ? DType::kI32 : a)
                  : (a == DType::kF64 ? DType::kF64 : DType::kF32);
  } else if (f == "atan2" || f == "fpow") {
    e.type = promote(promote(a, e.args[1].type), DType::kF32);
  } else {
    e.type = promote(a, e.args[1].type);
    if (f == "clamp") e.type = promote(e.type, e.args[2].type);
  }
}

// The typed tree in postfix order: the program both backends' kernels evaluate.
void compile(const Expr& e, std::vector<kernels::ArithInstr>& program) {
  if (e.fn.empty()) {
    program.push_back(e.input >= 0 ? kernels::arith_input(e.input)
                                   : kernels::arith_constant(e.value));
    return;
  }
  for (const auto& a : e.args) compile(a, program);
  program.push_back(kernels::arith_call(e.code, e.type));
}

class Arithmetic : public Operator {
 public:
  explicit Arithmetic(const OpSpec& spec)
      : Operator(spec), tree_(Parser(spec.arg<std::string>("expr")).parse()) {}

  void run(Workspace& ws) override {
    const int k = int(ws.inputs.size());
    const Program program = typed_program(ws);
    const int n = ws.input(0).size();
    Batch& out = add_output(ws, program.out_type, shapes(ws), ws.input(0).layout());
    const size_t scratch_size =
        size_t(kernels::arith_stack_depth(program.code)) * size_t(kernels::kArithBlock);
    for_each_sample(ws, n, [&](int i, int) {
      std::vector<kernels::ArithOperand> in(static_cast<size_t>(k));
      for (int j = 0; j < k; ++j)
        in[size_t(j)] = {ws.input(j).data(i), ws.input(j).shape(i).volume(), ws.input(j).dtype()};
      std::vector<double> scratch(scratch_size);
      const auto status = kernels::arithmetic_cpu(program.code, in.data(), out.data(i), out.dtype(),
                                                  out.shape(i).volume(), scratch.data());
      STOKER_ENFORCE(status == kernels::ArithStatus::kOk, ValueError, "arithmetic: integer ",
                     status == kernels::ArithStatus::kIntegerDivisionByZero ? "division" : "modulo",
                     " by zero");
    });
  }

 protected:
  struct Program {
    std::vector<kernels::ArithInstr> code;
    DType out_type;
  };
  Program typed_program(const Workspace& ws) const {
    std::vector<DType> types;
    for (size_t j = 0; j < ws.inputs.size(); ++j) types.push_back(ws.input(int(j)).dtype());
    Expr tree = tree_;
    type_tree(tree, types);
    Program p{{}, tree.type};
    compile(tree, p.code);
    return p;
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
// The gpu backend: the same program, interpreted per element (kernels/math/arithmetic_gpu),
// one launch per batch; it travels by value, within the kernel's fixed sizes.
class ArithmeticGpu final : public Arithmetic {
 public:
  using Arithmetic::Arithmetic;
  void run(Workspace& ws) override {
    const int k = int(ws.inputs.size());
    const Program program = typed_program(ws);
    const int n = ws.input(0).size();
    Batch& out = add_output(ws, program.out_type, shapes(ws), ws.input(0).layout());
    STOKER_ENFORCE(k <= kernels::kArithMaxInputs, ValueError, "arithmetic (gpu): at most ",
                   kernels::kArithMaxInputs, " operands, got ", k);
    STOKER_ENFORCE(program.code.size() <= size_t(kernels::kArithMaxProgram), ValueError,
                   "arithmetic (gpu): the expression has more than ", kernels::kArithMaxProgram,
                   " steps");
    STOKER_ENFORCE(kernels::arith_stack_depth(program.code) <= kernels::kArithMaxStack, ValueError,
                   "arithmetic (gpu): the expression is too deeply nested");
    kernels::ArithProgram prog;
    std::copy(program.code.begin(), program.code.end(), prog.code);
    prog.length = int32_t(program.code.size());
    for (int j = 0; j < k; ++j) prog.input_type[j] = ws.input(j).dtype();
    prog.out_type = program.out_type;
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
