#include "stoker/ops/geometry/roi_random_crop.hpp"

#include <algorithm>
#include <cstdint>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class RoiRandomCrop final : public Operator {
 public:
  explicit RoiRandomCrop(const OpSpec& spec) : Operator(spec) {
    STOKER_ENFORCE(!(spec_.given("roi_end") && spec_.given("roi_shape")), ValueError,
                   "roi_random_crop: give roi_end or roi_shape, not both");
    STOKER_ENFORCE(spec_.given("roi_end") || spec_.given("roi_shape"), ValueError,
                   "roi_random_crop: give roi_end or roi_shape");
  }

  void run(Workspace& ws) override {
    const bool data = !ws.inputs.empty();
    STOKER_ENFORCE(!(data && spec_.given("in_shape")), ValueError,
                   "roi_random_crop: give in_shape or the data input, not both");
    const int n = ws.num_samples();
    std::vector<std::vector<int64_t>> anchors(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) { anchors[size_t(i)] = anchor(ws, i, data); });
    std::vector<TensorShape> shapes;
    for (const auto& a : anchors) shapes.emplace_back(std::vector<int64_t>{int64_t(a.size())});
    Batch& out = add_output(ws, DType::kI64, shapes, TensorLayout());
    for (int i = 0; i < n; ++i) {
      std::copy(anchors[size_t(i)].begin(), anchors[size_t(i)].end(),
                static_cast<int64_t*>(out.data(i)));
    }
  }

 private:
  std::vector<int64_t> ints(const Workspace& ws, const char* name, int i) const {
    std::vector<int64_t> v;
    for (double d : list_arg(ws, name, i)) v.push_back(int64_t(d));
    return v;
  }

  std::vector<int64_t> anchor(const Workspace& ws, int i, bool data) const {
    const auto crop = ints(ws, "crop_shape", i);
    const auto start = ints(ws, "roi_start", i);
    auto end = spec_.given("roi_end") ? ints(ws, "roi_end", i) : ints(ws, "roi_shape", i);
    const size_t nd = crop.size();
    STOKER_ENFORCE(start.size() == nd && end.size() == nd, ValueError, "roi_random_crop: sample ",
                   i, ": crop_shape, roi_start and roi_end/roi_shape need one value per axis (",
                   nd, ", ", start.size(), ", ", end.size(), ")");
    if (!spec_.given("roi_end")) {
      for (size_t d = 0; d < nd; ++d) end[d] += start[d];
    }
    std::vector<int64_t> bounds;
    if (data) {
      bounds = ws.input(0).shape(i).dims();
    } else if (spec_.given("in_shape")) {
      bounds = ints(ws, "in_shape", i);
    }
    STOKER_ENFORCE(bounds.empty() || bounds.size() == nd, ValueError, "roi_random_crop: sample ", i,
                   ": the input has ", bounds.size(), " axes, crop_shape ", nd);
    auto rng = sample_rng(ws, i);
    std::vector<int64_t> out(nd);
    for (size_t d = 0; d < nd; ++d) {
      STOKER_ENFORCE(crop[d] >= 0 && end[d] >= start[d], ValueError, "roi_random_crop: sample ", i,
                     ": axis ", d, " has crop ", crop[d], " and ROI [", start[d], ", ", end[d], ")");
      // The window holds the ROI, or lies inside it when the ROI is the larger.
      int64_t lo = crop[d] >= end[d] - start[d] ? end[d] - crop[d] : start[d];
      int64_t hi = crop[d] >= end[d] - start[d] ? start[d] : end[d] - crop[d];
      if (!bounds.empty()) {
        STOKER_ENFORCE(crop[d] <= bounds[d] && start[d] >= 0 && end[d] <= bounds[d], ValueError,
                       "roi_random_crop: sample ", i, ": axis ", d, " of extent ", bounds[d],
                       " must hold the crop (", crop[d], ") and the ROI [", start[d], ", ", end[d],
                       ")");
        lo = std::max<int64_t>(lo, 0);
        hi = std::min(hi, bounds[d] - crop[d]);
      }
      STOKER_ENFORCE(hi - lo < int64_t(UINT32_MAX), ValueError, "roi_random_crop: sample ", i,
                     ": axis ", d, " allows ", hi - lo + 1, " places; at most 2^32 - 1");
      out[d] = lo + int64_t(rng.below(uint32_t(hi - lo + 1)));
    }
    return out;
  }
};

}  // namespace

OpSchema roi_random_crop_schema() {
  return {
      .name = "roi_random_crop",
      .doc =
          "A window of `crop_shape` placed at random (uniformly over the places allowed, as "
          "DALI's roi_random_crop) so that it holds the region of interest [roi_start, roi_end) "
          "(or roi_start + roi_shape), or lies inside it where the ROI is larger; with the data "
          "input or `in_shape`, also inside the input. Outputs the window's start (int64, one "
          "per axis), for slice with `shape=crop_shape`.",
      .inputs = {"input"},
      .optional_inputs = 1,
      .outputs = {"anchor"},
      .args = {{"crop_shape", ArgType::kIntList, "The window's extents.", std::nullopt, true},
               {"roi_start", ArgType::kIntList, "The region's start.", std::nullopt, true},
               optional_arg("roi_end", ArgType::kIntList, "The region's end (exclusive)."),
               optional_arg("roi_shape", ArgType::kIntList, "The region's extents."),
               optional_arg("in_shape", ArgType::kIntList,
                            "The input's extents (or give the input).")},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<RoiRandomCrop>(s); },
      .example = OpExample{.args = {{"crop_shape", std::vector<int64_t>{1, 1, 1}},
                                    {"roi_start", std::vector<int64_t>{0, 0, 0}},
                                    {"roi_shape", std::vector<int64_t>{0, 0, 0}}},
                           .dtype = "uint8",
                           .layout = "HWC"},
  };
}

}  // namespace stoker::ops
