// erase (CPU): fills rectangular regions of HWC images.
#include <cmath>
#include <cstring>

#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/geometry/fill_value.hpp"
#include "stoker/ops/geometry/geometry_ops.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Erase final : public Operator {
 public:
  explicit Erase(const OpSpec& spec)
      : Operator(spec),
        axes_(spec.arg<std::vector<int64_t>>("axes")),
        fill_(spec.arg<std::vector<double>>("fill_value")) {
    for (auto a : axes_)
      STOKER_ENFORCE(a == 0 || a == 1, ValueError,
                     "erase: axes may name 0 (height) and 1 (width), got ", a);
    STOKER_ENFORCE(!axes_.empty(), ValueError, "erase: axes is empty");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) shapes.push_back(in.shape(i));
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    const bool norm_a = spec_.arg<bool>("normalized_anchor") || spec_.arg<bool>("normalized");
    const bool norm_s = spec_.arg<bool>("normalized_shape") || spec_.arg<bool>("normalized");
    const bool centered = spec_.arg<bool>("centered_anchor");
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, "erase");
      const size_t es = dtype_size(in.dtype());
      std::memcpy(out.sample(i).data, in.sample(i).data,
                  size_t(s.height * s.width * s.channels) * es);
      auto anchor = list_arg(ws, "anchor", i), shape = list_arg(ws, "shape", i);
      const size_t k = axes_.size();
      STOKER_ENFORCE(anchor.size() == shape.size() && !anchor.empty() && anchor.size() % k == 0,
                     ValueError,
                     "erase: anchor and shape need the same number of values, a "
                     "multiple of the ",
                     k, " axes (one group per region); got ", anchor.size(), " and ", shape.size());
      auto fill = fill_pixel(in.dtype(), s.channels, fill_, "erase");
      auto* data = static_cast<uint8_t*>(out.sample(i).data);
      for (size_t r = 0; r < anchor.size() / k; ++r) {
        int64_t lo[2] = {0, 0}, hi[2] = {s.height, s.width};
        for (size_t j = 0; j < k; ++j) {
          const int64_t a = axes_[j];
          const double extent = double(a == 0 ? s.height : s.width);
          const double len = norm_s ? shape[r * k + j] * extent : shape[r * k + j];
          double start = norm_a ? anchor[r * k + j] * extent : anchor[r * k + j];
          if (centered) start -= len / 2;
          lo[a] = std::llround(start);
          hi[a] = std::llround(start + len);
        }
        const int64_t y0 = std::max<int64_t>(0, lo[0]), y1 = std::min(s.height, hi[0]);
        const int64_t x0 = std::max<int64_t>(0, lo[1]), x1 = std::min(s.width, hi[1]);
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t x = x0; x < x1; ++x)
            std::memcpy(data + size_t((y * s.width + x) * s.channels) * es, fill.data(),
                        fill.size());
      }
    });
  }

 private:
  std::vector<int64_t> axes_;
  std::vector<double> fill_;
};

}  // namespace

OpSchema erase_schema() {
  return {
      .name = "erase",
      .doc =
          "Fills regions of HWC images with fill_value (one value or one per channel). "
          "`anchor` and `shape` hold one group of values per region, each value along the "
          "matching entry of `axes` (0 height, 1 width; default [0, 1]); in pixels, or as "
          "fractions of the extents with normalized(_anchor/_shape); centered_anchor puts the "
          "anchor at the region's centre. Start and end are rounded to the nearest pixel and "
          "the region cut to the image.",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"anchor", ArgType::kFloatList, "Region starts.", std::nullopt, true},
               {"shape", ArgType::kFloatList, "Region extents.", std::nullopt, true},
               {"axes", ArgType::kIntList, "Axes of anchor/shape values.",
                std::vector<int64_t>{0, 1}},
               {"fill_value", ArgType::kFloatList, "Fill: one value or per channel.",
                std::vector<double>{0.0}},
               {"normalized", ArgType::kBool, "Both anchor and shape are fractions.", false},
               {"normalized_anchor", ArgType::kBool, "Anchor as fractions.", false},
               {"normalized_shape", ArgType::kBool, "Shape as fractions.", false},
               {"centered_anchor", ArgType::kBool, "The anchor is the region's centre.", false}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Erase>(sp); },
  };
}

}  // namespace stoker::ops
