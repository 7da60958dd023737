#include "stoker/ops/normalize/normalize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stoker/kernels/memory/fill_gpu.hpp"
#include "stoker/kernels/normalize/normalize_cpu.hpp"
#include "stoker/kernels/normalize/normalize_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Normalize : public Operator {
 public:
  explicit Normalize(const OpSpec& spec)
      : Operator(spec),
        axes_(spec.arg<std::vector<int64_t>>("axes")),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = checked_shapes(in);
    Batch& out = add_output(ws, dtype_, shapes, in.layout());
    const bool given_mean = spec_.has_arg("mean") || ws.arg_inputs.count("mean");
    const bool given_std = spec_.has_arg("stddev") || ws.arg_inputs.count("stddev");
    const bool batch = spec_.arg<bool>("batch");
    const double eps = spec_.arg<double>("epsilon"), scale = spec_.arg<double>("scale"),
                 shift = spec_.arg<double>("shift");
    const int64_t ddof = spec_.arg<int64_t>("ddof");
    // Per sample (or, with batch, shared) sums per reduced group.
    std::vector<std::vector<double>> sum(static_cast<size_t>(n)), sq(static_cast<size_t>(n));
    std::vector<int64_t> count(static_cast<size_t>(n), 0);
    if (!given_mean || !given_std) {
      for_each_sample(ws, n, [&](int i, int) {
        kernels::NormalizeReducer r(in.shape(i), axes_);
        auto x = values(in, i);
        sum[size_t(i)].assign(size_t(r.groups), 0.0);
        kernels::normalize_sums_cpu(x.data(), int64_t(x.size()), r, sum[size_t(i)].data());
        count[size_t(i)] = r.groups ? int64_t(x.size()) / r.groups : 0;
      });
    }
    auto combine = [&](std::vector<std::vector<double>>& v) {  // batch: one set for all samples
      if (!batch || n == 0) return;
      for (int i = 1; i < n; ++i) {
        STOKER_ENFORCE(v[size_t(i)].size() == v[0].size(), ValueError,
                       "normalize: batch=True needs samples that agree on the non-reduced axes");
        for (size_t g = 0; g < v[0].size(); ++g) v[0][g] += v[size_t(i)][g];
      }
      for (int i = 1; i < n; ++i) v[size_t(i)] = v[0];
    };
    int64_t batch_count = 0;
    for (auto c : count) batch_count += c;
    combine(sum);
    // Sample i's mean per group: the argument, or the sums over the count.
    auto means = [&](int i, int64_t groups) {
      std::vector<double> m(static_cast<size_t>(groups));
      const double c = double(batch ? batch_count : count[size_t(i)]);
      for (size_t g = 0; g < m.size(); ++g)
        m[g] = given_mean ? scalar_arg(ws, "mean", i) : c > 0 ? sum[size_t(i)][g] / c : 0.0;
      return m;
    };
    if (!given_std) {
      for_each_sample(ws, n, [&](int i, int) {
        kernels::NormalizeReducer r(in.shape(i), axes_);
        auto x = values(in, i);
        sq[size_t(i)].assign(size_t(r.groups), 0.0);
        kernels::normalize_squares_cpu(x.data(), int64_t(x.size()), r, means(i, r.groups).data(),
                                       sq[size_t(i)].data());
      });
      combine(sq);
    }
    for_each_sample(ws, n, [&](int i, int) {
      kernels::NormalizeReducer r(in.shape(i), axes_);
      auto x = values(in, i);
      const double c = double(batch ? batch_count : count[size_t(i)]);
      const std::vector<double> mean = means(i, r.groups);
      std::vector<double> inv(static_cast<size_t>(r.groups));
      for (size_t g = 0; g < inv.size(); ++g) {
        if (given_std) {
          const double sd = scalar_arg(ws, "stddev", i);
          inv[g] = 1.0 / std::sqrt(sd * sd + eps);
        } else {
          const double var = c - double(ddof) > 0 ? sq[size_t(i)][g] / (c - double(ddof)) : 0.0;
          inv[g] = var + eps > 0 ? 1.0 / std::sqrt(var + eps) : 0.0;  // constant data: 0
        }
      }
      visit_dtype<DType::kF32, DType::kF16, DType::kU8, DType::kI8, DType::kI16, DType::kI32>(
          dtype_, "normalize output", [&](auto tag) {
            using T = typename decltype(tag)::type;
            kernels::normalize_cpu(x.data(), int64_t(x.size()), r, mean.data(), inv.data(), scale,
                                   shift, out.data_as<T>(i));
          });
    });
  }

 protected:
  static std::vector<double> values(const Batch& b, int i) { return sample_as_doubles(b, i); }

  // The output shapes (the input's), once every sample has the axes to reduce.
  std::vector<TensorShape> checked_shapes(const Batch& in) const {
    for (int i = 0; i < in.size(); ++i)
      for (auto a : axes_)
        STOKER_ENFORCE(a >= 0 && a < in.shape(i).ndim(), ValueError, "normalize: axis ", a,
                       " of a ", in.shape(i).ndim(), "-D sample");
    return in.shapes();
  }

  std::vector<int64_t> axes_;
  DType dtype_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend (kernels/normalize/normalize_gpu): the same statistics and formula, three
// launches per batch; group slots for the sums live in one zeroed device buffer.
class NormalizeGpu final : public Normalize {
 public:
  using Normalize::Normalize;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = checked_shapes(in);
    for (const auto& sh : shapes)
      STOKER_ENFORCE(sh.ndim() <= kernels::kNormalizeMaxDims, ValueError,
                     "normalize (gpu): at most ", kernels::kNormalizeMaxDims, " dimensions");
    Batch& out = add_output(ws, dtype_, shapes, in.layout());
    if (n == 0) return;
    const bool batch = spec_.arg<bool>("batch");
    const bool given_mean = spec_.has_arg("mean") || ws.arg_inputs.count("mean");
    const bool given_std = spec_.has_arg("stddev") || ws.arg_inputs.count("stddev");
    std::vector<kernels::NormalizeGpuSample> desc(static_cast<size_t>(n));
    std::vector<size_t> slot(static_cast<size_t>(n), 0);
    size_t slots = 0;
    double batch_count = 0;
    for (int i = 0; i < n; ++i) {
      kernels::NormalizeReducer r(in.shape(i), axes_);
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i), d.elements = in.shape(i).volume();
      d.ndim = int32_t(in.shape(i).ndim());
      for (int k = 0; k < d.ndim; ++k) {
        d.shape[k] = r.shape[size_t(k)], d.stride[k] = r.stride[size_t(k)];
        d.rstride[k] = r.reduced[size_t(k)] ? 0 : r.rstride[size_t(k)];
      }
      d.count = r.groups ? double(d.elements) / double(r.groups) : 0.0;  // a whole number
      batch_count += d.count;
      if (batch) {
        STOKER_ENFORCE(i == 0 || size_t(r.groups) == slots, ValueError,
                       "normalize: batch=True needs samples that agree on the non-reduced axes");
        slots = size_t(r.groups);
      } else {
        slot[size_t(i)] = slots, slots += size_t(r.groups);
      }
      d.has_mean = given_mean, d.has_stddev = given_std;
      if (given_mean) d.mean = scalar_arg(ws, "mean", i);
      if (given_std) d.stddev = scalar_arg(ws, "stddev", i);
    }
    STOKER_ENFORCE(in.dtype() == DType::kU8 || in.dtype() == DType::kU16 ||
                       in.dtype() == DType::kI16 || in.dtype() == DType::kI32 ||
                       in.dtype() == DType::kF16 || in.dtype() == DType::kF32,
                   TypeError, "normalize (gpu): unsupported input dtype ", dtype_name(in.dtype()));
    auto stats =
        ws.device_pool->acquire_on(std::max<size_t>(slots, 1) * 2 * sizeof(double), ws.stream);
    auto* sums = static_cast<double*>(stats->data());
    cuda_check(kernels::fill_bytes_gpu(sums, std::max<size_t>(slots, 1) * 2 * sizeof(double), 0,
                                       ws.stream),
               "normalize (gpu): clearing the statistics");
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.sum = sums + slot[size_t(i)];
      d.sq = sums + std::max<size_t>(slots, 1) + slot[size_t(i)];
      if (batch) d.count = batch_count;
    }
    auto device = upload(ws, desc);
    kernels::NormalizeGpuParams p;
    p.epsilon = spec_.arg<double>("epsilon"), p.scale = spec_.arg<double>("scale");
    p.shift = spec_.arg<double>("shift"), p.ddof = spec_.arg<int64_t>("ddof");
    p.in_type = in.dtype(), p.out_type = dtype_;
    int64_t most = 0;
    for (const auto& d : desc) most = std::max(most, d.elements);
    cuda_check(
        kernels::normalize_gpu(static_cast<const kernels::NormalizeGpuSample*>(device->data()), n,
                               most, p, ws.stream),
        "normalize (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema normalize_schema() {
  ArgSchema mean{
      "mean", ArgType::kFloat, "Mean to subtract (default: computed).", std::nullopt, true, true};
  ArgSchema stddev{
      "stddev", ArgType::kFloat, "Standard deviation (default: computed).", std::nullopt, true,
      true};
  return {
      .name = "normalize",
      .doc =
          "out = (x - mean) / sqrt(stddev^2 + epsilon) * scale + shift. Unless given, mean and "
          "stddev are computed over `axes` (default: all) for each sample, or over the whole "
          "batch with batch=True (samples must agree on the other axes); the variance divides "
          "by (count - ddof). A group of constant values (variance 0, epsilon 0) gives 0. "
          "Computed in double; integer outputs rounded half away from zero and saturated.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"axes", ArgType::kIntList, "Axes to reduce (default: all).",
                std::vector<int64_t>{}},
               mean,
               stddev,
               {"batch", ArgType::kBool, "Statistics over the whole batch.", false},
               {"scale", ArgType::kFloat, "Multiplier of the result.", 1.0},
               {"shift", ArgType::kFloat, "Added to the result.", 0.0},
               {"epsilon", ArgType::kFloat, "Added to the variance.", 0.0},
               {"ddof", ArgType::kInt, "Delta degrees of freedom of the variance.", int64_t{0}},
               {"dtype", ArgType::kDType, "Output dtype.", std::string("float32")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Normalize>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<NormalizeGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
