// Subscript plans run by the GPU's strided copy against the CPU's (subscript_test.cpp checks
// that one against the definition): a ragged batch with negative steps, indices and more axes
// than one copy takes, all in one launch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "stoker/core/memory.hpp"
#include "stoker/kernels/tensor/copy_gpu.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"
#include "stoker/kernels/tensor/subscript.hpp"

namespace stoker::kernels {
namespace {

TEST(SubscriptGpu, RaggedBatchEqualsTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  MemoryPool device(make_device_allocator(0));
  constexpr std::optional<int64_t> kNone = std::nullopt;
  struct Sample {
    std::vector<int64_t> shape;
    std::vector<AxisPick> picks;
  };
  const std::vector<Sample> samples = {
      {{7, 5, 3}, {slice_pick(7, kNone, kNone, -2), {1, 1, 1}, slice_pick(3, kNone, kNone, -1)}},
      {{4, 11, 3}, {slice_pick(4, 1, kNone, 1), slice_pick(11, 9, 2, -3), {2, 1, 1}}},
      {{2, 2, 2, 2, 2, 2, 2, 3},  // 8 axes, none merging: two leading axes enumerated
       {slice_pick(2, kNone, kNone, -1),
        slice_pick(2, kNone, kNone, 1),
        {1, 1, 1},
        slice_pick(2, kNone, kNone, -1),
        slice_pick(2, kNone, kNone, 1),
        slice_pick(2, kNone, kNone, -1),
        slice_pick(2, kNone, kNone, 1),
        slice_pick(3, kNone, kNone, 2)}},
  };
  std::vector<std::shared_ptr<Buffer>> keep;
  std::vector<StridedCopy> all;
  std::vector<std::vector<int64_t>> expected;
  std::vector<std::pair<void*, size_t>> outs;
  int64_t most = 0;
  for (const auto& s : samples) {
    int64_t volume = 1;
    for (auto e : s.shape) volume *= e;
    std::vector<int64_t> host(static_cast<size_t>(volume));
    std::iota(host.begin(), host.end(), int64_t(1000));
    auto in = device.acquire(host.size() * sizeof(int64_t));
    ASSERT_EQ(cudaMemcpy(in->data(), host.data(), host.size() * 8, cudaMemcpyHostToDevice),
              cudaSuccess);
    const SubscriptPlan plan = plan_subscript(s.shape, s.picks);
    auto out = device.acquire(size_t(plan.volume) * sizeof(int64_t));
    std::vector<int64_t> ref(size_t(plan.volume));
    for (const auto& c : subscript_copies(plan, host.data(), ref.data(), 8)) strided_copy_cpu(c, 8);
    for (const auto& c : subscript_copies(plan, in->data(), out->data(), 8)) {
      all.push_back(c);
      most = std::max(most, c.count);
    }
    expected.push_back(ref);
    outs.emplace_back(out->data(), ref.size());
    keep.push_back(in), keep.push_back(out);
  }
  auto d = device.acquire(all.size() * sizeof(StridedCopy));
  ASSERT_EQ(
      cudaMemcpy(d->data(), all.data(), all.size() * sizeof(StridedCopy), cudaMemcpyHostToDevice),
      cudaSuccess);
  ASSERT_EQ(strided_copy_gpu(static_cast<const StridedCopy*>(d->data()), int(all.size()), most, 8,
                             nullptr),
            0);
  for (size_t s = 0; s < samples.size(); ++s) {
    std::vector<int64_t> got(outs[s].second);
    ASSERT_EQ(cudaMemcpy(got.data(), outs[s].first, got.size() * 8, cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(got, expected[s]) << "sample " << s;
  }
}

}  // namespace
}  // namespace stoker::kernels
