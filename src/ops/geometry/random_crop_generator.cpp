#include "stoker/ops/geometry/random_crop_generator.hpp"

#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/random_crop_window.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class RandomCropGenerator final : public Operator {
 public:
  explicit RandomCropGenerator(const OpSpec& spec) : Operator(spec) {
    area_ = spec.arg<std::vector<double>>("random_area");
    aspect_ = spec.arg<std::vector<double>>("random_aspect_ratio");
    STOKER_ENFORCE(area_.size() == 2 && area_[0] > 0 && area_[0] <= area_[1], ValueError,
                   "random_crop_generator: random_area must be [min, max] with 0 < min <= max");
    STOKER_ENFORCE(aspect_.size() == 2 && aspect_[0] > 0 && aspect_[0] <= aspect_[1], ValueError,
                   "random_crop_generator: random_aspect_ratio must be [min, max] with "
                   "0 < min <= max");
    // At most kMaxAttempts tries (more act as that many): impossible constraints end.
    attempts_ = int(std::min(spec.arg<int64_t>("num_attempts"), kMaxAttempts));
    STOKER_ENFORCE(attempts_ >= 1, ValueError,
                   "random_crop_generator: num_attempts must be positive");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> two(static_cast<size_t>(n), TensorShape{2});
    Batch& anchor = add_output(ws, DType::kI32, two, TensorLayout());
    Batch& shape = add_output(ws, DType::kI32, two, TensorLayout());
    for_each_sample(ws, n, [&](int i, int) {
      const auto s = sample_as_doubles(in, i);
      STOKER_ENFORCE(in.shape(i).ndim() == 1 && s.size() >= 2 && s[0] >= 1 && s[1] >= 1,
                     ValueError, "random_crop_generator: sample ", i,
                     " must be an image's shape, [H, W] or [H, W, C], with H and W >= 1");
      auto rng = sample_rng(ws, i);
      const auto w = random_resized_crop_window(int64_t(s[0]), int64_t(s[1]), area_[0], area_[1],
                                                aspect_[0], aspect_[1], attempts_, rng);
      auto* a = static_cast<int32_t*>(anchor.data(i));
      auto* e = static_cast<int32_t*>(shape.data(i));
      a[0] = int32_t(w.y), a[1] = int32_t(w.x), e[0] = int32_t(w.height), e[1] = int32_t(w.width);
    });
  }

 private:
  std::vector<double> area_, aspect_;
  int attempts_ = 10;
};

}  // namespace

OpSchema random_crop_generator_schema() {
  return {
      .name = "random_crop_generator",
      .doc =
          "RandomResizedCrop windows (the algorithm of random_resized_crop and "
          "decoders.image_random_crop) for images of the given shapes ([H, W] or [H, W, C], "
          "any integer or float type): outputs anchor [y, x] and shape [h, w] (int32), to give "
          "slice (with axes [0, 1]) or another operator that takes a window, e.g. the same "
          "window to an image and its mask.",
      .inputs = {"shape"},
      .outputs = {"anchor", "shape"},
      .args = {{"random_area", ArgType::kFloatList, "Range of the window's area fraction.",
                std::vector<double>{0.08, 1.0}},
               {"random_aspect_ratio", ArgType::kFloatList, "Range of width / height.",
                std::vector<double>{3.0 / 4.0, 4.0 / 3.0}},
               {"num_attempts", ArgType::kInt, "Tries before the centred fallback.", int64_t{10}}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<RandomCropGenerator>(s); },
      .example = OpExample{.args = {}, .dtype = "int64", .layout = ""},
  };
}

}  // namespace stoker::ops
