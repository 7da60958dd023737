#include "stoker/ops/segmentation/random_mask_pixel.hpp"

#include <cstdint>

#include "stoker/core/dtype.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class RandomMaskPixel final : public Operator {
 public:
  explicit RandomMaskPixel(const OpSpec& spec) : Operator(spec) {
    by_value_ = spec.given("value");
    const bool by_threshold = spec.given("threshold");
    STOKER_ENFORCE(!(by_value_ && by_threshold), ValueError,
                   "segmentation.random_mask_pixel: give `value` or `threshold`, not both");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) shapes.emplace_back(std::vector<int64_t>{in.shape(i).ndim()});
    Batch& out = add_output(ws, DType::kI64, shapes, TensorLayout());
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      const int64_t count = s.volume();
      STOKER_ENFORCE(count <= int64_t(UINT32_MAX), ValueError,
                     "segmentation.random_mask_pixel: sample ", i, " has ", count,
                     " pixels; at most 2^32 - 1 are supported");
      STOKER_ENFORCE(count > 0, ValueError, "segmentation.random_mask_pixel: sample ", i,
                     " is empty, ", s.to_string());
      auto rng = sample_rng(ws, i);
      const bool foreground = scalar_arg(ws, "foreground", i) != 0;
      const double threshold = by_value_ ? 0.0 : scalar_arg(ws, "threshold", i);
      const double value = by_value_ ? scalar_arg(ws, "value", i) : 0.0;
      int64_t pick = -1;
      if (foreground) {
        visit_numeric(in.dtype(), "segmentation.random_mask_pixel", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* m = static_cast<const T*>(in.data(i));
          auto is_fg = [&](int64_t k) {
            const double v = cast_value<double>(m[k]);
            return by_value_ ? v == value : v > threshold;
          };
          int64_t total = 0;
          for (int64_t k = 0; k < count; ++k) total += is_fg(k) ? 1 : 0;
          if (total == 0) return;  // no foreground: any pixel
          int64_t target = rng.below(uint32_t(total));
          for (int64_t k = 0; k < count; ++k) {
            if (is_fg(k) && target-- == 0) {
              pick = k;
              break;
            }
          }
        });
      }
      if (pick < 0) pick = rng.below(uint32_t(count));
      auto* o = static_cast<int64_t*>(out.data(i));
      for (int d = s.ndim() - 1; d >= 0; --d) {  // the flat index as coordinates
        o[d] = pick % s[d];
        pick /= s[d];
      }
    });
  }

 private:
  bool by_value_ = false;
};

}  // namespace

OpSchema random_mask_pixel_schema() {
  ArgSchema value{"value", ArgType::kInt, "Foreground is this value (instead of `threshold`)."};
  value.optional = true;
  value.per_sample = true;
  return {
      .name = "segmentation.random_mask_pixel",
      .doc =
          "A random position in each mask (as DALI's segmentation.random_mask_pixel): with "
          "`foreground` non-zero, uniform over the foreground pixels (above `threshold`, or "
          "equal to `value`), or over all pixels when there are none; else uniform over all "
          "pixels. Outputs the position's coordinates, one per axis of the mask (int64), e.g. "
          "as the centre of a crop (roi_random_crop).",
      .inputs = {"mask"},
      .outputs = {"position"},
      .args = {{"foreground", ArgType::kInt, "Draw among the foreground pixels.", int64_t{0}, true},
               {"threshold", ArgType::kFloat, "Pixels above this are foreground.", 0.0, true},
               value},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<RandomMaskPixel>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = "HWC"},
  };
}

}  // namespace stoker::ops
