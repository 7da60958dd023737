#include "stoker/kernels/math/arithmetic_gpu.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/math/arithmetic_cpu.hpp"

namespace stoker::kernels {
namespace {

// A ragged batch (0 to 1,000 elements; a uint8, a float16 and an int32 operand and a broadcast
// float32) through a program with int16, float32, float16, int32 and bool nodes and correctly
// rounded functions only (the GPU's pow or sin may differ from the CPU's in the last bit):
// x = sqrt(max(|a - b| as int16, c / 3)) * scale as float16, then ((x // 2 + 1) % 5 < 3) * c:
// the GPU equals the CPU.
TEST(ArithmeticGpu, RaggedBatchMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const std::vector<ArithInstr> code{arith_input(0),
                                     arith_input(1),
                                     arith_call(kArSub, DType::kF32),
                                     arith_call(kArAbs, DType::kI16),
                                     arith_input(2),
                                     arith_constant(3),
                                     arith_call(kArDiv, DType::kF32),
                                     arith_call(kArMax, DType::kF32),
                                     arith_call(kArSqrt, DType::kF32),
                                     arith_input(3),
                                     arith_call(kArMul, DType::kF16),
                                     arith_constant(2),
                                     arith_call(kArFdiv, DType::kI32),
                                     arith_constant(1),
                                     arith_call(kArAdd, DType::kI32),
                                     arith_constant(5),
                                     arith_call(kArMod, DType::kI32),
                                     arith_constant(3),
                                     arith_call(kArLt, DType::kBool),
                                     arith_input(2),
                                     arith_call(kArMul, DType::kF32)};
  ArithProgram program;
  std::copy(code.begin(), code.end(), program.code);
  program.length = int32_t(code.size());
  program.input_type[0] = DType::kU8, program.input_type[1] = DType::kF16;
  program.input_type[2] = DType::kI32, program.input_type[3] = DType::kF32;
  program.out_type = DType::kF32;

  std::mt19937 rng(11);
  const std::vector<int64_t> counts{0, 1, 1000, 300};
  const float scale = 0.37f;
  MemoryPool pool(make_device_allocator(0));
  auto d_scale = pool.acquire(sizeof(float));
  cudaMemcpy(d_scale->data(), &scale, sizeof(float), cudaMemcpyHostToDevice);
  std::vector<std::shared_ptr<Buffer>> buffers;
  auto to_device = [&](const void* p, size_t bytes) {
    buffers.push_back(pool.acquire(std::max<size_t>(bytes, 4)));
    cudaMemcpy(buffers.back()->data(), p, bytes, cudaMemcpyHostToDevice);
    return buffers.back()->data();
  };
  std::vector<ArithGpuSample> desc;
  std::vector<std::vector<float>> expected;
  for (int64_t count : counts) {
    const size_t c = static_cast<size_t>(count);
    std::vector<uint8_t> a(c);
    std::vector<float16> b(c);
    std::vector<int32_t> i(c);
    for (size_t k = 0; k < c; ++k) {
      a[k] = uint8_t(rng() % 256);
      b[k] = float16(float(int(rng() % 2001) - 1000) / 7.f);
      i[k] = int32_t(rng() % 60001) - 30000;
    }
    const std::vector<ArithOperand> in{{a.data(), count, DType::kU8},
                                       {b.data(), count, DType::kF16},
                                       {i.data(), count, DType::kI32},
                                       {&scale, 1, DType::kF32}};
    expected.emplace_back(c);
    std::vector<double> scratch(size_t(arith_stack_depth(code)) * size_t(kArithBlock));
    ASSERT_EQ(
        arithmetic_cpu(code, in.data(), expected.back().data(), DType::kF32, count, scratch.data()),
        ArithStatus::kOk);
    ArithGpuSample s;
    s.in[0] = to_device(a.data(), c), s.in_count[0] = count;
    s.in[1] = to_device(b.data(), c * sizeof(float16)), s.in_count[1] = count;
    s.in[2] = to_device(i.data(), c * sizeof(int32_t)), s.in_count[2] = count;
    s.in[3] = d_scale->data(), s.in_count[3] = 1;
    buffers.push_back(pool.acquire(std::max<size_t>(c * sizeof(float), 4)));
    s.out = buffers.back()->data(), s.count = count;
    desc.push_back(s);
  }
  auto d_desc = pool.acquire(desc.size() * sizeof(ArithGpuSample));
  cudaMemcpy(d_desc->data(), desc.data(), desc.size() * sizeof(ArithGpuSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(arithmetic_gpu(static_cast<const ArithGpuSample*>(d_desc->data()), int(desc.size()),
                           1000, program, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t k = 0; k < desc.size(); ++k) {
    std::vector<float> got(expected[k].size());
    cudaMemcpy(got.data(), desc[k].out, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, expected[k]) << "sample " << k;
  }
}

// Broadcast operands (a per-channel float32 vector, a uint8 mask of one channel, a scalar, an
// alternating pattern), a * b - c in float32 per sample of a ragged batch: the GPU's
// per-element index equals the CPU's block walk.
TEST(ArithmeticGpu, BroadcastingMatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const std::vector<ArithInstr> code{arith_input(0), arith_input(1), arith_call(kArMul, DType::kF32),
                                     arith_input(2), arith_call(kArSub, DType::kF32)};
  ArithProgram program;
  std::copy(code.begin(), code.end(), program.code);
  program.length = int32_t(code.size());
  program.input_type[0] = DType::kF32, program.input_type[1] = DType::kF32;
  program.input_type[2] = DType::kU8;
  program.out_type = DType::kF32;
  const std::vector<std::vector<TensorShape>> samples{{{40, 50, 3}, {3}, {40, 50, 1}},
                                                      {{1, 1, 3}, {2, 1}, {}},
                                                      {{2, 1, 4, 1, 3}, {5, 1, 2, 1}, {3}},
                                                      {{0, 3}, {3}, {1}}};
  std::mt19937 rng(13);
  MemoryPool pool(make_device_allocator(0));
  std::vector<std::shared_ptr<Buffer>> buffers;
  auto to_device = [&](const void* p, size_t bytes) {
    buffers.push_back(pool.acquire(std::max<size_t>(bytes, 4)));
    cudaMemcpy(buffers.back()->data(), p, bytes, cudaMemcpyHostToDevice);
    return buffers.back()->data();
  };
  std::vector<ArithGpuSample> desc;
  std::vector<std::vector<float>> expected;
  int64_t largest = 0;
  for (const auto& shapes : samples) {
    TensorShape out;
    int axis = 0;
    ASSERT_TRUE(arith_broadcast_shape(shapes, out, axis));
    std::vector<float> a(size_t(shapes[0].volume())), b(size_t(shapes[1].volume()));
    std::vector<uint8_t> c(size_t(shapes[2].volume()));
    for (auto& x : a) x = float(int(rng() % 2001) - 1000) / 8.f;
    for (auto& x : b) x = float(int(rng() % 201) - 100) / 4.f;
    for (auto& x : c) x = uint8_t(rng() % 256);
    std::vector<ArithOperand> in{{a.data(), int64_t(a.size()), DType::kF32},
                                 {b.data(), int64_t(b.size()), DType::kF32},
                                 {c.data(), int64_t(c.size()), DType::kU8}};
    std::vector<ArithBroadcast> plan(3);
    ArithGpuSample s;
    const bool strided = arith_plan_broadcast(out, shapes, plan) == ArithPlan::kStrided;
    for (size_t j = 0; j < 3; ++j) {
      if (strided && in[j].count != 1 && in[j].count != out.volume()) {
        in[j].broadcast = &plan[j];
        s.strided[j] = true;
      }
      s.in_count[j] = in[j].count;
    }
    if (strided) s.broadcast = static_cast<const ArithBroadcast*>(
                     to_device(plan.data(), plan.size() * sizeof(ArithBroadcast)));
    const int64_t count = out.volume();
    expected.emplace_back(size_t(count));
    std::vector<double> scratch(size_t(arith_stack_depth(code)) * size_t(kArithBlock));
    ASSERT_EQ(
        arithmetic_cpu(code, in.data(), expected.back().data(), DType::kF32, count, scratch.data()),
        ArithStatus::kOk);
    s.in[0] = to_device(a.data(), a.size() * sizeof(float));
    s.in[1] = to_device(b.data(), b.size() * sizeof(float));
    s.in[2] = to_device(c.data(), c.size());
    buffers.push_back(pool.acquire(std::max<size_t>(size_t(count) * sizeof(float), 4)));
    s.out = buffers.back()->data(), s.count = count;
    largest = std::max(largest, count);
    desc.push_back(s);
  }
  auto d_desc = pool.acquire(desc.size() * sizeof(ArithGpuSample));
  cudaMemcpy(d_desc->data(), desc.data(), desc.size() * sizeof(ArithGpuSample),
             cudaMemcpyHostToDevice);
  ASSERT_EQ(arithmetic_gpu(static_cast<const ArithGpuSample*>(d_desc->data()), int(desc.size()),
                           largest, program, nullptr),
            0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t k = 0; k < desc.size(); ++k) {
    std::vector<float> got(expected[k].size());
    cudaMemcpy(got.data(), desc[k].out, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
    EXPECT_EQ(got, expected[k]) << "sample " << k;
  }
}

}  // namespace
}  // namespace stoker::kernels
