#include "stoker/ops/filter/gaussian_blur.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>

#include "stoker/kernels/filter/gaussian_blur_cpu.hpp"
#include "stoker/kernels/filter/gaussian_blur_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class GaussianBlur : public Operator {
 public:
  explicit GaussianBlur(const OpSpec& spec) : Operator(spec) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const DType out_dtype = output_dtype(in);
    Batch& out = add_output(ws, out_dtype, shapes(in), in.layout());
    {
      std::lock_guard lock(mutex_);
      if (int(scratch_.size()) < ws.pool->num_threads())
        scratch_.resize(size_t(ws.pool->num_threads()));
    }
    for_each_sample(ws, n, [&](int i, int thread) {
      const auto& s = in.shape(i);
      const int64_t h = s[0], w = s[1], c = s.ndim() == 3 ? s[2] : 1;
      auto sigma = per_axis(ws, "sigma", i);
      auto window = per_axis(ws, "window_size", i);
      STOKER_ENFORCE(sigma[0] > 0 || window[0] > 0, ValueError,
                     "gaussian_blur: give sigma or window_size");
      auto ky = kernels::gaussian_window(sigma[0], int64_t(window[0]));
      auto kx = kernels::gaussian_window(sigma[1], int64_t(window[1]));
      visit_dtype<DType::kU8, DType::kI16, DType::kU16, DType::kF32>(
          in.dtype(), "gaussian_blur input", [&](auto it) {
            using In = typename decltype(it)::type;
            visit_dtype<DType::kU8, DType::kI16, DType::kU16, DType::kF32>(
                out_dtype, "gaussian_blur output", [&](auto ot) {
                  using Out = typename decltype(ot)::type;
                  kernels::gaussian_blur_cpu(in.data_as<const In>(i), h, w, c, ky, kx,
                                             out.data_as<Out>(i), scratch_[size_t(thread)]);
                });
          });
    });
  }

 protected:
  DType output_dtype(const Batch& in) const {
    return spec_.has_arg("dtype") ? dtype_from_name(spec_.arg<std::string>("dtype")) : in.dtype();
  }
  static std::vector<TensorShape> shapes(const Batch& in) {
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == 2 || in.shape(i).ndim() == 3, ValueError,
                     "gaussian_blur: expects HW or HWC samples, got shape ",
                     in.shape(i).to_string(), " for sample ", i);
      shapes.push_back(in.shape(i));
    }
    return shapes;
  }

  // One value for both axes or [height, width].
  std::array<double, 2> per_axis(const Workspace& ws, const char* name, int i) const {
    auto v = list_arg(ws, name, i);
    STOKER_ENFORCE(v.size() == 1 || v.size() == 2, ValueError, "gaussian_blur: ", name,
                   " needs 1 or 2 values (height, width), got ", v.size());
    return {v[0], v.size() == 2 ? v[1] : v[0]};
  }

  std::mutex mutex_;
  std::vector<std::vector<float>> scratch_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the windows of every sample and the descriptors go up in one copy; the
// horizontal pass writes float scratch from the device pool, the vertical pass the output.
class GaussianBlurGpu final : public GaussianBlur {
 public:
  using GaussianBlur::GaussianBlur;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const DType out_dtype = output_dtype(in);
    Batch& out = add_output(ws, out_dtype, shapes(in), in.layout());
    for (DType d : {in.dtype(), out_dtype})
      STOKER_ENFORCE(d == DType::kU8 || d == DType::kI16 || d == DType::kU16 || d == DType::kF32,
                     TypeError, "gaussian_blur (gpu): unsupported dtype ", dtype_name(d));
    if (n == 0) return;
    std::vector<std::vector<float>> kx(static_cast<size_t>(n)), ky(static_cast<size_t>(n));
    std::vector<kernels::BlurGpuSample> desc(static_cast<size_t>(n));
    size_t taps = 0, scratch = 0;
    int64_t max_h = 0, max_row = 0;
    for_each_sample(ws, n, [&](int i, int) {
      auto sigma = per_axis(ws, "sigma", i);
      auto window = per_axis(ws, "window_size", i);
      STOKER_ENFORCE(sigma[0] > 0 || window[0] > 0, ValueError,
                     "gaussian_blur: give sigma or window_size");
      ky[size_t(i)] = kernels::gaussian_window(sigma[0], int64_t(window[0]));
      kx[size_t(i)] = kernels::gaussian_window(sigma[1], int64_t(window[1]));
    });
    std::vector<size_t> tap_at(static_cast<size_t>(n)), scratch_at(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      auto& d = desc[size_t(i)];
      d.in = in.data(i), d.out = out.data(i);
      d.h = s[0], d.w = s[1], d.c = s.ndim() == 3 ? s[2] : 1;
      d.rx = int32_t(kx[size_t(i)].size() / 2), d.ry = int32_t(ky[size_t(i)].size() / 2);
      tap_at[size_t(i)] = taps, taps += kx[size_t(i)].size() + ky[size_t(i)].size();
      scratch_at[size_t(i)] = scratch, scratch += size_t(d.h * d.w * d.c);
      max_h = std::max(max_h, d.h), max_row = std::max(max_row, d.w * d.c);
    }
    const size_t desc_bytes = (desc.size() * sizeof(kernels::BlurGpuSample) + 255) / 256 * 256;
    const size_t total = desc_bytes + taps * 4;
    auto device = ws.device_pool->acquire_on(total, ws.stream);
    auto work = ws.device_pool->acquire_on(std::max<size_t>(scratch, 1) * 4, ws.stream);
    auto* dev = static_cast<uint8_t*>(device->data());
    auto* taps_dev = reinterpret_cast<float*>(dev + desc_bytes);
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      d.kx = taps_dev + tap_at[size_t(i)];
      d.ky = d.kx + kx[size_t(i)].size();
      d.scratch = static_cast<float*>(work->data()) + scratch_at[size_t(i)];
    }
    auto staging = ws.pinned_pool->acquire(total);
    auto* h = static_cast<uint8_t*>(staging->data());
    std::memcpy(h, desc.data(), desc.size() * sizeof(kernels::BlurGpuSample));
    auto* taps_host = reinterpret_cast<float*>(h + desc_bytes);
    for (int i = 0; i < n; ++i) {
      std::memcpy(taps_host + tap_at[size_t(i)], kx[size_t(i)].data(), kx[size_t(i)].size() * 4);
      std::memcpy(taps_host + tap_at[size_t(i)] + kx[size_t(i)].size(), ky[size_t(i)].data(),
                  ky[size_t(i)].size() * 4);
    }
    copy_to_device_async(dev, h, total, ws.stream);
    staging->record_stream(ws.stream);
    cuda_check(kernels::gaussian_blur_gpu(reinterpret_cast<const kernels::BlurGpuSample*>(dev), n,
                                          max_h, max_row, in.dtype(), out_dtype, ws.stream),
               "gaussian_blur (gpu): launching the kernels");
  }
};
#endif

}  // namespace

OpSchema gaussian_blur_schema() {
  ArgSchema dtype{"dtype",
                  ArgType::kDType,
                  "Output dtype (uint8, int16, uint16, float32; default: the input's).",
                  std::nullopt,
                  false,
                  true};
  return {
      .name = "gaussian_blur",
      .doc =
          "Blurs HWC (or HW) samples with a separable Gaussian, as DALI: window 2r + 1 with "
          "r = ceil(3 sigma) when only sigma is given; sigma = (r - 1) * 0.3 + 0.8 when only "
          "window_size is; weights normalised; borders reflect-101 (mirrored without "
          "repeating the edge, OpenCV's default). Float arithmetic, rounded half away from "
          "zero and saturated for integer outputs.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"sigma", ArgType::kFloatList, "Standard deviation: one value or [h, w].",
                std::vector<double>{0.0}, true},
               {"window_size", ArgType::kIntList,
                "Odd window: one value or [h, w] (0: from sigma).", std::vector<int64_t>{0}, true},
               dtype},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<GaussianBlur>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<GaussianBlurGpu>(s); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"sigma", std::vector<double>{1.0}}}},
  };
}

}  // namespace stoker::ops
