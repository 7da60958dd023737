#include "stoker/kernels/math/arithmetic_cpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace stoker::kernels {
namespace {

// The slow reference: one element at a time, from the definition (a stack of doubles, each
// function's result converted to its node's type by cast_value).
double node_value(double v, DType t) {
  switch (t) {
    case DType::kU8:
      return double(cast_value<uint8_t>(v));
    case DType::kI16:
      return double(cast_value<int16_t>(v));
    case DType::kI32:
      return double(cast_value<int32_t>(v));
    case DType::kF16:
      return double(float(cast_value<float16>(v)));
    case DType::kF32:
      return double(float(v));
    case DType::kBool:
      return v != 0 ? 1.0 : 0.0;
    default:
      return v;
  }
}
double reference(const std::vector<ArithInstr>& program, const std::vector<std::vector<double>>& in,
                 size_t p) {
  std::vector<double> stack;
  for (const auto& ins : program) {
    if (ins.op == -1) {
      const auto& a = in[size_t(ins.arg)];
      stack.push_back(a.size() == 1 ? a[0] : a[p]);
    } else if (ins.op == -2) {
      stack.push_back(ins.value);
    } else {
      std::vector<double> args(stack.end() - ins.arity, stack.end());
      stack.resize(stack.size() - size_t(ins.arity));
      args.resize(3, 0.0);
      stack.push_back(node_value(
          arith_apply(ins.op, args[0], args[1], args[2], !is_float(ins.type)), ins.type));
    }
  }
  return stack.back();
}

std::vector<double> run(const std::vector<ArithInstr>& program,
                        const std::vector<ArithOperand>& operands, DType out_type, int64_t count,
                        ArithStatus* status = nullptr) {
  std::vector<double> scratch(size_t(arith_stack_depth(program)) * size_t(kArithBlock));
  std::vector<double> out(static_cast<size_t>(count));
  std::vector<float> out_f32(static_cast<size_t>(count));
  std::vector<uint8_t> out_u8(static_cast<size_t>(count));
  void* dst = out_type == DType::kF64   ? static_cast<void*>(out.data())
              : out_type == DType::kF32 ? static_cast<void*>(out_f32.data())
                                        : static_cast<void*>(out_u8.data());
  const ArithStatus s =
      arithmetic_cpu(program, operands.data(), dst, out_type, count, scratch.data());
  if (status) *status = s;
  for (size_t k = 0; k < size_t(count); ++k)
    if (out_type == DType::kF32)
      out[k] = out_f32[k];
    else if (out_type == DType::kU8)
      out[k] = out_u8[k];
  return out;
}

TEST(ArithmeticCpu, StackDepth) {
  // (a + b) * (c - 2): a b add c 2 sub mul
  std::vector<ArithInstr> p{arith_input(0),
                            arith_input(1),
                            arith_call(kArAdd, DType::kF32),
                            arith_input(2),
                            arith_constant(2),
                            arith_call(kArSub, DType::kF32),
                            arith_call(kArMul, DType::kF32)};
  EXPECT_EQ(arith_stack_depth(p), 3);
  EXPECT_EQ(arith_stack_depth(std::vector<ArithInstr>{arith_input(0)}), 1);
}

// Several blocks and a partial one, mixed input types, a broadcast operand and a constant,
// intermediates rounded to float16 and int16: equal to the element-at-a-time reference.
TEST(ArithmeticCpu, BlocksEqualTheElementAtATimeReference) {
  const int64_t count = 3 * kArithBlock + 17;
  std::mt19937 rng(3);
  std::vector<uint8_t> a(static_cast<size_t>(count));
  std::vector<float16> b(static_cast<size_t>(count));
  std::vector<int32_t> c(static_cast<size_t>(count));
  const float scale = 0.37f;
  std::vector<std::vector<double>> as_doubles(4);
  for (int64_t k = 0; k < count; ++k) {
    a[size_t(k)] = uint8_t(rng() % 256);
    b[size_t(k)] = float16(float(int(rng() % 2001) - 1000) / 7.f);
    c[size_t(k)] = int32_t(rng() % 60001) - 30000;
    as_doubles[0].push_back(a[size_t(k)]);
    as_doubles[1].push_back(cast_value<double>(b[size_t(k)]));
    as_doubles[2].push_back(c[size_t(k)]);
  }
  as_doubles[3] = {double(scale)};
  const std::vector<ArithOperand> operands{{a.data(), count, DType::kU8},
                                           {b.data(), count, DType::kF16},
                                           {c.data(), count, DType::kI32},
                                           {&scale, 1, DType::kF32}};
  // clamp(a * b, -100, 100) in float16, + (c // 7) in int16 (saturating), * scale, then
  // floor, in float32; and a second output: (a + c) % 5 < 3 as uint8 through bool.
  const std::vector<ArithInstr> p1{arith_input(0),
                                   arith_input(1),
                                   arith_call(kArMul, DType::kF16),
                                   arith_constant(-100),
                                   arith_constant(100),
                                   arith_call(kArClamp, DType::kF16),
                                   arith_input(2),
                                   arith_constant(7),
                                   arith_call(kArFdiv, DType::kI16),
                                   arith_call(kArAdd, DType::kF32),
                                   arith_input(3),
                                   arith_call(kArMul, DType::kF32),
                                   arith_call(kArFloor, DType::kF32)};
  const std::vector<ArithInstr> p2{arith_input(0),
                                   arith_input(2),
                                   arith_call(kArAdd, DType::kI32),
                                   arith_constant(5),
                                   arith_call(kArMod, DType::kI32),
                                   arith_constant(3),
                                   arith_call(kArLt, DType::kBool)};
  const auto got1 = run(p1, operands, DType::kF32, count);
  const auto got2 = run(p2, operands, DType::kU8, count);
  for (int64_t k = 0; k < count; ++k) {
    ASSERT_EQ(got1[size_t(k)], double(float(reference(p1, as_doubles, size_t(k)))))
        << "element " << k;
    ASSERT_EQ(got2[size_t(k)], reference(p2, as_doubles, size_t(k))) << "element " << k;
  }
}

TEST(ArithmeticCpu, DefinitionsByHand) {
  const std::vector<int32_t> x{-7, 7, 200, -200};
  const ArithOperand in{x.data(), 4, DType::kI32};
  // Python's floor division and modulo; uint8 saturation; int division of floats to int.
  EXPECT_EQ(run({arith_input(0), arith_constant(2), arith_call(kArFdiv, DType::kI32)}, {in},
                DType::kF64, 4),
            (std::vector<double>{-4, 3, 100, -100}));
  EXPECT_EQ(run({arith_input(0), arith_constant(3), arith_call(kArMod, DType::kI32)}, {in},
                DType::kF64, 4),
            (std::vector<double>{2, 1, 2, 1}));
  EXPECT_EQ(run({arith_input(0), arith_constant(2), arith_call(kArMul, DType::kU8)}, {in},
                DType::kF64, 4),
            (std::vector<double>{0, 14, 255, 0}));
  // Half away from zero at every integer node: -7 / 2 = -3.5 -> -4, 7 / 2 -> 4.
  EXPECT_EQ(run({arith_input(0), arith_constant(2), arith_call(kArDiv, DType::kI32)}, {in},
                DType::kF64, 4),
            (std::vector<double>{-4, 4, 100, -100}));
  // NaN to an integer node gives 0.
  EXPECT_EQ(run({arith_constant(-1), arith_call(kArSqrt, DType::kI32)}, {in}, DType::kF64, 1),
            (std::vector<double>{0}));
  // Nothing to evaluate: nothing written, no error even for a zero divisor.
  ArithStatus status = ArithStatus::kIntegerModuloByZero;
  EXPECT_TRUE(run({arith_input(0), arith_constant(0), arith_call(kArFdiv, DType::kI32)}, {in},
                  DType::kF64, 0, &status)
                  .empty());
  EXPECT_EQ(status, ArithStatus::kOk);
}

TEST(ArithmeticCpu, IntegerDivisionAndModuloByZeroStop) {
  std::vector<int32_t> x(600, 5), y(600, 1);
  y[555] = 0;  // in the third block
  const std::vector<ArithOperand> in{{x.data(), 600, DType::kI32}, {y.data(), 600, DType::kI32}};
  ArithStatus status = ArithStatus::kOk;
  run({arith_input(0), arith_input(1), arith_call(kArFdiv, DType::kI32)}, in, DType::kF64, 600,
      &status);
  EXPECT_EQ(status, ArithStatus::kIntegerDivisionByZero);
  run({arith_input(0), arith_input(1), arith_call(kArMod, DType::kI32)}, in, DType::kF64, 600,
      &status);
  EXPECT_EQ(status, ArithStatus::kIntegerModuloByZero);
  // Float nodes divide by zero as IEEE does.
  const auto r = run({arith_input(0), arith_input(1), arith_call(kArDiv, DType::kF64)}, in,
                     DType::kF64, 600, &status);
  EXPECT_EQ(status, ArithStatus::kOk);
  EXPECT_TRUE(std::isinf(r[555]));
}

// Broadcasting, from numpy's definition: output element p at coordinates c reads, from an
// operand of shape s (aligned from the last axis), the element at c[d] where s[d] > 1 and 0
// where s[d] == 1.
int64_t numpy_index(const TensorShape& out, const TensorShape& s, int64_t p) {
  int64_t index = 0, stride = 1;
  for (int d = out.ndim() - 1, j = s.ndim() - 1; j >= 0; --d, --j) {
    const int64_t c = p % out[d];
    p /= out[d];
    if (s[j] != 1) index += c * stride;
    stride *= s[j];
  }
  return index;
}

// Operands of several shapes (float32, int16 and uint8), through (a * b - c) and clamp(a, b, c)
// as float32: every element equal to the element-at-a-time reference reading the operands by
// numpy's definition, for per-channel vectors, masks, alternating extents, rank extension,
// scalars and samples crossing block boundaries.
TEST(ArithmeticCpu, BroadcastingEqualsNumpysDefinition) {
  const std::vector<std::vector<TensorShape>> cases{
      {{4, 5, 3}, {3}, {}},
      {{4, 5, 3}, {1, 1, 3}, {4, 5, 1}},
      {{4, 1, 3}, {1, 5, 1}, {1}},
      {{2, 1, 4, 1, 3}, {5, 1, 2, 1}, {3}},
      {{7, 300}, {300}, {7, 1}},
      {{300, 7}, {300, 1}, {1, 7}},
      {{1, 4, 5, 3}, {4, 5, 3}, {1, 1, 1, 1}},
      {{6, 1, 5}, {1, 4, 1}, {5}},
      {{3, 1}, {1, 600}, {3, 600}},
  };
  std::mt19937 rng(5);
  for (const auto& shapes : cases) {
    TensorShape out;
    int axis = 0;
    ASSERT_TRUE(arith_broadcast_shape(shapes, out, axis));
    std::vector<float> a(size_t(shapes[0].volume()));
    std::vector<int16_t> b(size_t(shapes[1].volume()));
    std::vector<uint8_t> c(size_t(shapes[2].volume()));
    for (auto& x : a) x = float(int(rng() % 2001) - 1000) / 8.f;
    for (auto& x : b) x = int16_t(int(rng() % 401) - 200);
    for (auto& x : c) x = uint8_t(rng() % 256);
    std::vector<ArithOperand> in{{a.data(), int64_t(a.size()), DType::kF32},
                                 {b.data(), int64_t(b.size()), DType::kI16},
                                 {c.data(), int64_t(c.size()), DType::kU8}};
    std::vector<ArithBroadcast> plan(3);
    if (arith_plan_broadcast(out, shapes, plan) == ArithPlan::kStrided)
      for (size_t j = 0; j < 3; ++j)
        if (in[j].count != 1 && in[j].count != out.volume()) in[j].broadcast = &plan[j];
    const std::vector<ArithInstr> p1{arith_input(0), arith_input(1), arith_call(kArMul, DType::kF32),
                                     arith_input(2), arith_call(kArSub, DType::kF32)};
    const std::vector<ArithInstr> p2{arith_input(0), arith_input(1), arith_input(2),
                                     arith_call(kArClamp, DType::kF32)};
    const int64_t count = out.volume();
    const auto got1 = run(p1, in, DType::kF64, count), got2 = run(p2, in, DType::kF64, count);
    for (int64_t p = 0; p < count; ++p) {
      const double x = a[size_t(numpy_index(out, shapes[0], p))];
      const double y = b[size_t(numpy_index(out, shapes[1], p))];
      const double z = c[size_t(numpy_index(out, shapes[2], p))];
      ASSERT_EQ(got1[size_t(p)], double(float(float(x * y) - z)))
          << out.to_string() << " element " << p;
      ASSERT_EQ(got2[size_t(p)], double(float(std::min(std::max(x, y), z))))
          << out.to_string() << " element " << p;
    }
  }
}

TEST(ArithmeticCpu, BroadcastShapesFollowNumpy) {
  auto shape = [](std::vector<TensorShape> shapes, int* bad = nullptr) {
    TensorShape out;
    int axis = 0;
    const bool ok = arith_broadcast_shape(shapes, out, axis);
    if (bad) *bad = ok ? 0 : axis;
    return ok ? out.to_string() : std::string("error");
  };
  EXPECT_EQ(shape({{4, 5, 3}, {3}}), "(4, 5, 3)");
  EXPECT_EQ(shape({{4, 5, 3}, {1, 1, 1, 1}}), "(1, 4, 5, 3)");  // the larger rank wins
  EXPECT_EQ(shape({{4, 1, 3}, {1, 5, 1}}), "(4, 5, 3)");
  EXPECT_EQ(shape({{4, 5, 3}, {}}), "(4, 5, 3)");
  EXPECT_EQ(shape({{0, 3}, {1, 3}}), "(0, 3)");  // 0 meets 1 or 0 only
  EXPECT_EQ(shape({{0}, {1, 1}}), "(1, 0)");
  int bad = 0;
  EXPECT_EQ(shape({{0, 3}, {2, 3}}, &bad), "error");
  EXPECT_EQ(bad, -2);
  EXPECT_EQ(shape({{4, 5, 3}, {4, 1}}, &bad), "error");
  EXPECT_EQ(bad, -2);
  EXPECT_EQ(shape({{4, 5, 3}, {2}}, &bad), "error");
  EXPECT_EQ(bad, -1);
}

TEST(ArithmeticCpu, BroadcastPlansCollapseAxes) {
  const std::vector<TensorShape> image{{4, 5, 3}, {3}};
  std::vector<ArithBroadcast> plan(2);
  ASSERT_EQ(arith_plan_broadcast(TensorShape{4, 5, 3}, image, plan), ArithPlan::kStrided);
  EXPECT_EQ(plan[1].ndim, 2);  // (H*W, 3): broadcast along H and W alike
  EXPECT_EQ(plan[1].extent[0], 20);
  EXPECT_EQ(plan[1].extent[1], 3);
  EXPECT_EQ(plan[1].stride[0], 0);
  EXPECT_EQ(plan[1].stride[1], 1);
  EXPECT_EQ(plan[0].stride[0], 3);
  // Same shapes and single elements take the fast path.
  const std::vector<TensorShape> plain{{4, 5, 3}, {1, 4, 5, 3}, {1, 1}};
  EXPECT_EQ(arith_plan_broadcast(TensorShape{1, 4, 5, 3}, plain, plan), ArithPlan::kNone);
  // Seven alternating groups: more than kArithMaxDims.
  const std::vector<TensorShape> zebra{{2, 1, 2, 1, 2, 1, 2}, {1, 2, 1, 2, 1, 2, 1}};
  EXPECT_EQ(arith_plan_broadcast(TensorShape{2, 2, 2, 2, 2, 2, 2}, zebra, plan),
            ArithPlan::kTooManyAxes);
}

}  // namespace
}  // namespace stoker::kernels
