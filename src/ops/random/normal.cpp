#include "stoker/ops/random/normal.hpp"

#include <algorithm>
#include <vector>

#include "stoker/kernels/random/normal_draws.hpp"
#include "stoker/kernels/random/normal_gpu.hpp"

#include "stoker/ops/operator.hpp"
#include "stoker/ops/random/dtype_arg.hpp"
#include "stoker/ops/random/shape_arg.hpp"

namespace stoker::ops {
namespace {

// Draws come from kernels/random/normal_draws.hpp: element e from block e / 4 (float) or e / 2
// (double) of the sample's stream, so the cpu and gpu backends compute the same values.
class Normal : public Operator {
 public:
  explicit Normal(const OpSpec& spec)
      : Operator(spec), shape_(shape_arg(spec)), dtype_(random_dtype(spec)) {}
  void run(Workspace& ws) override {
    const auto desc = describe(ws);
    const bool wide = draws_in_double(dtype_);
    for_each_sample(ws, ws.num_samples(), [&](int i, int) {
      kernels::normal_cpu(desc[size_t(i)], dtype_, wide);
    });
  }

 protected:
  // The output and every sample's descriptor: its arguments checked, its stream's key and
  // counter.
  std::vector<kernels::NormalSample> describe(Workspace& ws) const {
    const int n = ws.num_samples();
    const std::vector<TensorShape> shapes = sample_shapes(spec_, ws, shape_);
    Batch& out = add_output(ws, dtype_, shapes, {});
    std::vector<kernels::NormalSample> desc(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const double mean = scalar_arg(ws, "mean", i), stddev = scalar_arg(ws, "stddev", i);
      STOKER_ENFORCE(stddev >= 0, ValueError, "stddev must be >= 0, got ", stddev);
      const RandomStream rng = sample_rng(ws, i);
      kernels::NormalSample& s = desc[size_t(i)];
      s.out = out.data(i), s.count = shapes[size_t(i)].volume();
      s.key0 = rng.key()[0], s.key1 = rng.key()[1];
      s.ctr1 = rng.counter()[1], s.ctr2 = rng.counter()[2], s.ctr3 = rng.counter()[3];
      s.mean = float(mean), s.stddev = float(stddev);
      s.mean_wide = double(s.mean), s.stddev_wide = double(s.stddev);
    }
    return desc;
  }
  TensorShape shape_;
  DType dtype_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the descriptors go up in one copy, one launch covers the batch.
class NormalGpu final : public Normal {
 public:
  using Normal::Normal;
  void run(Workspace& ws) override {
    std::vector<kernels::NormalSample> desc;
    int64_t most = 0;
    for (const auto& s : describe(ws)) {
      if (s.count == 0) continue;
      desc.push_back(s);
      most = std::max(most, s.count);
    }
    const bool wide = draws_in_double(dtype_);
    for (size_t first = 0; first < desc.size(); first += 65535) {  // the grid's y limit
      std::vector<kernels::NormalSample> part(
          desc.begin() + ptrdiff_t(first),
          desc.begin() + ptrdiff_t(std::min(desc.size(), first + 65535)));
      auto device = upload(ws, part);
      cuda_check(kernels::normal_gpu(static_cast<const kernels::NormalSample*>(device->data()),
                                     int(part.size()), most, dtype_, wide, ws.stream),
                 "random.normal (gpu): launching the kernel");
    }
  }
};
#endif

}  // namespace

OpSchema normal_schema() {
  return {
      .name = "random.normal",
      .doc =
          "Normal draws with `mean` and `stddev`, one tensor of `shape` (or of the shape_like "
          "input's shape) per sample, of `dtype` (float32 by default; integers are the draws "
          "rounded half away from zero and saturated, as DALI's). Box-Muller on the sample's "
          "Philox stream, element e from the stream's block e / 4 (float32 draws: 24-bit "
          "uniforms, |z| <= 5.77) or e / 2 (double draws, for float64 and 32/64-bit integers: "
          "53-bit uniforms), so the cpu and gpu backends give the same values.",
      .inputs = {"shape_like"},
      .optional_inputs = 1,
      .outputs = {"values"},
      .args = {{"mean", ArgType::kFloat, "Mean.", 0.0, true},
               {"stddev", ArgType::kFloat, "Standard deviation (>= 0).", 1.0, true},
               {"shape", ArgType::kIntList, "Shape of each sample ([] for a scalar).",
                std::vector<int64_t>{}},
               random_dtype_arg()},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Normal>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<NormalGpu>(s); },
#endif
      .example = OpExample{},
      .deprecated_names = {"normal_distribution"},
  };
}

}  // namespace stoker::ops
