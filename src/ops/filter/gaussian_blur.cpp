#include "stoker/ops/filter/gaussian_blur.hpp"

#include <array>
#include <mutex>

#include "stoker/kernels/filter/gaussian_blur_cpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class GaussianBlur final : public Operator {
 public:
  explicit GaussianBlur(const OpSpec& spec) : Operator(spec) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const DType out_dtype =
        spec_.has_arg("dtype") ? dtype_from_name(spec_.arg<std::string>("dtype")) : in.dtype();
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == 2 || in.shape(i).ndim() == 3, ValueError,
                     "gaussian_blur: expects HW or HWC samples, got shape ",
                     in.shape(i).to_string(), " for sample ", i);
      shapes.push_back(in.shape(i));
    }
    Batch& out = add_output(ws, out_dtype, std::move(shapes), in.layout());
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

 private:
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
  };
}

}  // namespace stoker::ops
