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
// A sample's operands broadcast as DALI's (numpy's rules): DALI checks each one-function node
// and the fused expression checks all its leaves at once, which accepts and rejects the same
// expressions (an axis fails exactly when two leaves bring different extents > 1 to it). The
// output's layout is found node by node as DALI's (layout_of).
#include "stoker/ops/math/arithmetic.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
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

// The layout of node `e` and its number of axes (the most of its operands'), node by node as
// DALI lays out each of its one-function operators: the operands' layouts (constants have none)
// must be equal or one a suffix of the other, and the longest is kept if it has one letter per
// axis of the node, else none (so `Constant(255) - images` is HWC, an HWC image times a C
// vector too, but a (3,) "C" vector against an unlaid (H, W, 3) image has none).
struct NodeLayout {
  int ndim = 0;
  std::string layout;
};
NodeLayout layout_of(const Expr& e, const std::vector<NodeLayout>& inputs) {
  if (e.fn.empty()) return e.input >= 0 ? inputs[size_t(e.input)] : NodeLayout{};
  NodeLayout out;
  for (size_t k = 0; k < e.args.size(); ++k) {
    const NodeLayout a = layout_of(e.args[k], inputs);
    out.ndim = std::max(out.ndim, a.ndim);
    const std::string& l = a.layout;
    if (l.empty()) continue;
    const std::string& longer = l.size() > out.layout.size() ? l : out.layout;
    const std::string& shorter = l.size() > out.layout.size() ? out.layout : l;
    STOKER_ENFORCE(longer.ends_with(shorter), ValueError, "arithmetic: the layouts of the operands "
                   "of `", e.fn, "` are ", out.layout, " and ", l, " (operands ", k - 1, " and ", k,
                   "): they must be equal, or one a suffix of the other");
    out.layout = longer;
  }
  if (int(out.layout.size()) != out.ndim) out.layout.clear();
  return out;
}

std::string shapes_text(const std::vector<TensorShape>& shapes) {
  std::string text;
  for (size_t j = 0; j < shapes.size(); ++j)
    text += (j ? ", " : "") + shapes[j].to_string();
  return text;
}

class Arithmetic : public Operator {
 public:
  explicit Arithmetic(const OpSpec& spec)
      : Operator(spec), tree_(Parser(spec.arg<std::string>("expr")).parse()) {}

  void run(Workspace& ws) override {
    const int k = int(ws.inputs.size());
    const Program program = typed_program(ws);
    const Plan plan = plan_shapes(ws);
    const int n = int(plan.out.size());
    Batch& out = add_output(ws, program.out_type, plan.out, layout(ws));
    const size_t scratch_size =
        size_t(kernels::arith_stack_depth(program.code)) * size_t(kernels::kArithBlock);
    for_each_sample(ws, n, [&](int i, int) {
      const int64_t count = out.shape(i).volume();
      if (count == 0) return;
      std::vector<kernels::ArithOperand> in(static_cast<size_t>(k));
      for (int j = 0; j < k; ++j)
        in[size_t(j)] = {ws.input(j).data(i), ws.input(j).shape(i).volume(), ws.input(j).dtype()};
      std::vector<kernels::ArithBroadcast> strides;
      if (plan.broadcast[size_t(i)]) strided(ws, out.shape(i), i, in, strides);
      std::vector<double> scratch(scratch_size);
      const auto status = kernels::arithmetic_cpu(program.code, in.data(), out.data(i), out.dtype(),
                                                  count, scratch.data());
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

  TensorLayout layout(const Workspace& ws) const {
    std::vector<NodeLayout> inputs;
    for (size_t j = 0; j < ws.inputs.size(); ++j) {
      const Batch& b = ws.input(int(j));
      // An empty batch has no samples to count axes from: its layout stands for them.
      inputs.push_back({b.size() ? b.sample_ndim() : b.layout().ndim(), b.layout().str()});
    }
    return TensorLayout(layout_of(tree_, inputs).layout);
  }

  // Each sample's output shape, the broadcast of its operands' shapes (numpy's rules, as
  // DALI's), and whether an operand of it needs strides (neither the output's elements nor
  // one).
  struct Plan {
    std::vector<TensorShape> out;
    std::vector<bool> broadcast;
  };
  static Plan plan_shapes(const Workspace& ws) {
    const int k = int(ws.inputs.size());
    const int n = ws.input(0).size();
    for (int j = 1; j < k; ++j)
      STOKER_ENFORCE(ws.input(j).size() == n, ValueError, "arithmetic: operand ", j, " has ",
                     ws.input(j).size(), " samples and operand 0 has ", n,
                     " (every operand needs one per sample of the batch)");
    Plan plan;
    std::vector<TensorShape> shapes(static_cast<size_t>(k));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < k; ++j) shapes[size_t(j)] = ws.input(j).shape(i);
      TensorShape shape;
      int axis = 0;
      STOKER_ENFORCE(kernels::arith_broadcast_shape(shapes, shape, axis), ValueError,
                     "arithmetic: sample ", i, " has operands of shapes ", shapes_text(shapes),
                     ", which do not broadcast: aligned from the last axis, extents must be "
                     "equal or 1 (axis ", axis, " differs)");
      const int64_t volume = shape.volume();
      bool strided = false;
      for (const auto& s : shapes) strided |= s.volume() != 1 && s.volume() != volume;
      plan.out.push_back(std::move(shape));
      plan.broadcast.push_back(strided && volume > 0);
    }
    return plan;
  }

  // Points the operands of sample i that need strides at their plan (kept in `strides`).
  static void strided(const Workspace& ws, const TensorShape& out, int i,
                      std::vector<kernels::ArithOperand>& in,
                      std::vector<kernels::ArithBroadcast>& strides) {
    std::vector<TensorShape> shapes;
    for (size_t j = 0; j < in.size(); ++j) shapes.push_back(ws.input(int(j)).shape(i));
    strides.resize(in.size());
    const auto plan = kernels::arith_plan_broadcast(out, shapes, strides);
    STOKER_ENFORCE(plan != kernels::ArithPlan::kTooManyAxes, ValueError, "arithmetic: sample ", i,
                   " broadcasts operands of shapes ", shapes_text(shapes), " to ",
                   out.to_string(), " along more than ", kernels::kArithMaxDims,
                   " alternating groups of axes");
    const int64_t volume = out.volume();
    for (size_t j = 0; j < in.size(); ++j)
      if (in[j].count != 1 && in[j].count != volume) in[j].broadcast = &strides[j];
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
    const Plan plan = plan_shapes(ws);
    const int n = int(plan.out.size());
    Batch& out = add_output(ws, program.out_type, plan.out, layout(ws));
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
    std::vector<kernels::ArithBroadcast> plans;  // k per sample that broadcasts
    std::vector<size_t> plan_at(static_cast<size_t>(n), SIZE_MAX);
    int64_t largest = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      std::vector<kernels::ArithOperand> in(static_cast<size_t>(k));
      for (int j = 0; j < k; ++j) {
        d.in[j] = ws.input(j).data(i);
        d.in_count[j] = in[size_t(j)].count = ws.input(j).shape(i).volume();
      }
      d.out = out.data(i), d.count = out.shape(i).volume();
      if (plan.broadcast[size_t(i)]) {
        std::vector<kernels::ArithBroadcast> strides;
        strided(ws, out.shape(i), i, in, strides);
        for (int j = 0; j < k; ++j) d.strided[j] = in[size_t(j)].broadcast != nullptr;
        plan_at[size_t(i)] = plans.size();
        plans.insert(plans.end(), strides.begin(), strides.end());
      }
      largest = std::max(largest, d.count);
    }
    std::shared_ptr<Buffer> device_plans;
    if (!plans.empty()) {
      device_plans = upload(ws, plans);
      const auto* base = static_cast<const kernels::ArithBroadcast*>(device_plans->data());
      for (int i = 0; i < n; ++i)
        if (plan_at[size_t(i)] != SIZE_MAX) desc[size_t(i)].broadcast = base + plan_at[size_t(i)];
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
          "directly. A sample's operands broadcast as numpy's (and DALI's): shapes aligned from "
          "the last axis, extents equal or 1, missing axes 1; the output's layout is the "
          "operands' (equal, or one a suffix of the other) when it names every axis. Result "
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
