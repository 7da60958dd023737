// erase (CPU): fills rectangular regions of HWC images.
#include "stoker/ops/geometry/erase.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stoker/kernels/geometry/fill_paste_cpu.hpp"
#include "stoker/ops/geometry/fill_value.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"

namespace stoker::ops {
namespace {

// The axes of anchor/shape values: `axis_names` ("HW", "W"...) when given (it takes precedence,
// as in DALI), else `axes`.
std::vector<int64_t> axes_of(const OpSpec& spec) {
  const auto names = spec.arg<std::string>("axis_names");
  if (names.empty()) return spec.arg<std::vector<int64_t>>("axes");
  std::vector<int64_t> axes;
  for (char c : names) {
    STOKER_ENFORCE(c == 'H' || c == 'W', ValueError,
                   "erase: axis_names may name H and W (HWC images), got '", names, "'");
    axes.push_back(c == 'H' ? 0 : 1);
  }
  return axes;
}

class Erase : public Operator {
 public:
  explicit Erase(const OpSpec& spec)
      : Operator(spec), axes_(axes_of(spec)), fill_(spec.arg<std::vector<double>>("fill_value")) {
    for (auto a : axes_)
      STOKER_ENFORCE(a == 0 || a == 1, ValueError,
                     "erase: axes may name 0 (height) and 1 (width), got ", a);
    STOKER_ENFORCE(!axes_.empty(), ValueError, "erase: axes is empty");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, "erase");
      const size_t es = dtype_size(in.dtype());
      std::memcpy(out.sample(i).data, in.sample(i).data,
                  size_t(s.height * s.width * s.channels) * es);
      auto fill = fill_pixel(in.dtype(), s.channels, fill_, "erase");
      for (const auto& [y0, y1, x0, x1] : regions(ws, i, s))
        kernels::fill_rect_cpu(out.sample(i).data, s.width, fill.size(), y0, y1, x0, x1,
                               fill.data());
    });
  }

 protected:
  struct Region {
    int64_t y0, y1, x0, x1;  // clipped to the image
  };
  // Sample i's regions (anchor/shape groups, pixels or fractions, maybe centred), clipped.
  std::vector<Region> regions(const Workspace& ws, int i, const ImageShape& s) const {
    const bool norm_a = spec_.arg<bool>("normalized_anchor") || spec_.arg<bool>("normalized");
    const bool norm_s = spec_.arg<bool>("normalized_shape") || spec_.arg<bool>("normalized");
    const bool centered = spec_.arg<bool>("centered_anchor");
    auto anchor = list_arg(ws, "anchor", i), shape = list_arg(ws, "shape", i);
    const size_t k = axes_.size();
    STOKER_ENFORCE(anchor.size() == shape.size() && !anchor.empty() && anchor.size() % k == 0,
                   ValueError,
                   "erase: anchor and shape need the same number of values, a "
                   "multiple of the ",
                   k, " axes (one group per region); got ", anchor.size(), " and ", shape.size());
    std::vector<Region> out;
    for (size_t r = 0; r < anchor.size() / k; ++r) {
      int64_t lo[2] = {0, 0}, hi[2] = {s.height, s.width};
      for (size_t j = 0; j < k; ++j) {
        // As DALI: in float32, start and end truncated toward zero (the window's pixels are
        // those whose index is at least the start and below the end, cut down).
        const int64_t a = axes_[j];
        const float extent = float(a == 0 ? s.height : s.width);
        const float len = norm_s ? float(shape[r * k + j]) * extent : float(shape[r * k + j]);
        float start = norm_a ? float(anchor[r * k + j]) * extent : float(anchor[r * k + j]);
        if (centered) start -= len / 2;
        lo[a] = static_cast<int64_t>(start);
        hi[a] = static_cast<int64_t>(start + len);
      }
      out.push_back({std::max<int64_t>(0, lo[0]), std::min(s.height, hi[0]),
                     std::max<int64_t>(0, lo[1]), std::min(s.width, hi[1])});
    }
    return out;
  }

  std::vector<int64_t> axes_;
  std::vector<double> fill_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: one launch copies every sample, a second fills every region (a descriptor
// per region and channel, reading nothing).
class EraseGpu final : public Erase {
 public:
  using Erase::Erase;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    const size_t es = dtype_size(in.dtype());
    std::vector<kernels::StridedCopy> copies, fills;
    for (int i = 0; i < n; ++i) {
      auto s = image_shape(in, i, "erase");
      const int64_t count = s.height * s.width * s.channels;
      copies.push_back(copy_desc(in.data(i), out.data(i), {count}, {1}, {1}, {count}, "erase"));
      auto fill = fill_pixel(in.dtype(), s.channels, fill_, "erase");
      for (const auto& r : regions(ws, i, s)) {
        if (r.y1 <= r.y0 || r.x1 <= r.x0) continue;
        for (int64_t c = 0; c < s.channels; ++c) {
          const uint64_t bits = fill_channel_bits(fill, c, es);
          auto* at = static_cast<uint8_t*>(out.data(i)) +
                     size_t((r.y0 * s.width + r.x0) * s.channels + c) * es;
          fills.push_back(copy_desc(nullptr, at, {r.y1 - r.y0, r.x1 - r.x0},
                                    {s.width * s.channels, s.channels}, {0, 0}, {0, 0}, "erase", {},
                                    bits));
        }
      }
    }
    run_copies(*this, ws, copies, es);
    run_copies(*this, ws, fills, es);  // after the copies: same stream
  }
};
#endif

}  // namespace

OpSchema erase_schema() {
  return {
      .name = "erase",
      .doc =
          "Fills regions of HWC images with fill_value (one value or one per channel). "
          "`anchor` and `shape` hold one group of values per region, each value along the "
          "matching entry of `axes` (0 height, 1 width; default [0, 1]); in pixels, or as "
          "fractions of the extents with normalized(_anchor/_shape); centered_anchor puts the "
          "anchor at the region's centre. Start and end are computed in float32 and truncated "
          "toward zero (as DALI), and the region cut to the image.",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"anchor", ArgType::kFloatList, "Region starts.", std::nullopt, true},
               {"shape", ArgType::kFloatList, "Region extents.", std::nullopt, true},
               {"axes", ArgType::kIntList, "Axes of anchor/shape values.",
                std::vector<int64_t>{0, 1}},
               {"axis_names", ArgType::kString,
                "Axes of anchor/shape values by name ('HW', 'WH', 'W'...); takes precedence "
                "over axes.",
                std::string()},
               {"fill_value", ArgType::kFloatList, "Fill: one value or per channel.",
                std::vector<double>{0.0}},
               {"normalized", ArgType::kBool, "Both anchor and shape are fractions.", false},
               {"normalized_anchor", ArgType::kBool, "Anchor as fractions.", false},
               {"normalized_shape", ArgType::kBool, "Shape as fractions.", false},
               {"centered_anchor", ArgType::kBool, "The anchor is the region's centre.", false}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Erase>(sp); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) { return std::make_unique<EraseGpu>(sp); },
#endif
      .sequences = true,
      .example = OpExample{.args = {{"anchor", std::vector<double>{0, 0}},
                                    {"shape", std::vector<double>{1, 1}}}},
  };
}

}  // namespace stoker::ops
