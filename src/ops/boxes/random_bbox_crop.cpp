#include "stoker/ops/boxes/random_bbox_crop.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "stoker/kernels/boxes/boxes.hpp"
#include "stoker/ops/boxes/box_layout.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::BoxNd;

// Without total_num_attempts, DALI searches forever; stoker stops here and keeps the best
// window found, so that an impossible request cannot hang the pipeline.
constexpr int64_t kAttemptLimit = 100000;

struct Range {
  float min = 0.f, max = 0.f;
  bool contains(float v) const { return v >= min && v <= max; }
};

struct Crop {
  BoxNd window;                // what the anchor and shape outputs give
  std::vector<BoxNd> boxes;    // kept, in the window's coordinates
  std::vector<int32_t> kept;   // their indices in the input
};

std::vector<std::string> output_names(const OpSpec& spec) {
  std::vector<std::string> names{"anchor", "shape", "bboxes"};
  if (spec.inputs.size() > 1) names.push_back("labels");
  if (spec.arg<bool>("output_bbox_indices")) names.push_back("bbox_indices");
  return names;
}

class RandomBBoxCrop final : public Operator {
 public:
  explicit RandomBBoxCrop(const OpSpec& spec) : Operator(spec) {
    thresholds_ = spec.arg<std::vector<double>>("thresholds");
    STOKER_ENFORCE(!thresholds_.empty(), ValueError,
                   "random_bbox_crop: give at least one value in `thresholds`");
    for (double t : thresholds_) {
      STOKER_ENFORCE(t >= 0.0 && t <= 1.0, ValueError,
                     "random_bbox_crop: thresholds must be in [0, 1], got ", t);
    }
    const auto type = spec.arg<std::string>("threshold_type");
    STOKER_ENFORCE(type == "iou" || type == "overlap", ValueError,
                   "random_bbox_crop: threshold_type must be 'iou' or 'overlap', got '", type, "'");
    overlap_ = type == "overlap";
    attempts_ = spec.arg<int64_t>("num_attempts");
    STOKER_ENFORCE(attempts_ > 0, ValueError, "random_bbox_crop: num_attempts must be positive");
    total_ = spec.arg<int64_t>("total_num_attempts");
    STOKER_ENFORCE(total_ == -1 || total_ > 0, ValueError,
                   "random_bbox_crop: total_num_attempts must be positive (or -1: no limit)");
    const auto scaling = spec.arg<std::vector<double>>("scaling");
    STOKER_ENFORCE(scaling.size() == 2 && scaling[0] >= 0 && scaling[0] <= scaling[1], ValueError,
                   "random_bbox_crop: scaling must be [min, max] with 0 <= min <= max");
    scale_ = {float(scaling[0]), float(scaling[1])};
    const auto ratios = spec.arg<std::vector<double>>("aspect_ratio");
    STOKER_ENFORCE(ratios.size() == 2 || ratios.size() == 6, ValueError,
                   "random_bbox_crop: aspect_ratio must be [min, max] (or 3 ranges for 3-D "
                   "boxes), got ", ratios.size(), " values");
    for (size_t k = 0; k < ratios.size(); k += 2) {
      STOKER_ENFORCE(ratios[k] >= 0 && ratios[k] <= ratios[k + 1], ValueError,
                     "random_bbox_crop: aspect_ratio ranges need 0 <= min <= max");
      aspect_.push_back({float(ratios[k]), float(ratios[k + 1])});
    }
    fixed_shape_ = spec.given("crop_shape");
    STOKER_ENFORCE(fixed_shape_ == spec.given("input_shape"), ValueError,
                   "random_bbox_crop: give crop_shape and input_shape together");
    allow_no_crop_ = spec.arg<bool>("allow_no_crop") && !(fixed_shape_ && !spec.has_arg("allow_no_crop"));
    STOKER_ENFORCE(!(fixed_shape_ && allow_no_crop_), ValueError,
                   "random_bbox_crop: allow_no_crop cannot be combined with crop_shape");
    STOKER_ENFORCE(!(fixed_shape_ && (spec.has_arg("scaling") || spec.has_arg("aspect_ratio"))),
                   ValueError,
                   "random_bbox_crop: scaling and aspect_ratio cannot be combined with crop_shape");
    STOKER_ENFORCE(!(spec.has_arg("ltrb") && spec.has_arg("bbox_layout")), ValueError,
                   "random_bbox_crop: give bbox_layout or the older ltrb, not both");
    layout_text_ = spec.arg<std::string>("bbox_layout");
    ltrb_ = spec.arg<bool>("ltrb");
    all_boxes_ = spec.arg<bool>("all_boxes_above_threshold");
    prune_ = spec.has_arg("bbox_prune_threshold") ? spec.arg<double>("bbox_prune_threshold") : -1.0;
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError,
                   "random_bbox_crop: the boxes must be float32, got ", dtype_name(in.dtype()));
    const bool labels = ws.inputs.size() > 1;
    const int n = in.size();
    int64_t coords = 4;
    if (n > 0) {
      STOKER_ENFORCE(in.shape(0).ndim() == 2, ValueError, "random_bbox_crop: sample 0 is ",
                     in.shape(0).to_string(), "; boxes are [boxes, 4] (or 6 for 3-D boxes)");
      coords = in.shape(0)[1];
    }
    for (int i = 0; i < n; ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == 2 && in.shape(i)[1] == coords, ValueError,
                     "random_bbox_crop: sample ", i, " is ", in.shape(i).to_string(),
                     "; boxes are [boxes, ", coords, "] for every sample");
      if (labels) {
        const Batch& l = ws.input(1);
        STOKER_ENFORCE(l.dtype() == DType::kI32, TypeError,
                       "random_bbox_crop: the labels must be int32, got ", dtype_name(l.dtype()));
        STOKER_ENFORCE(l.shape(i).ndim() >= 1 && l.shape(i)[0] == in.shape(i)[0], ValueError,
                       "random_bbox_crop: sample ", i, " has ", in.shape(i)[0], " boxes and ",
                       l.shape(i).ndim() ? l.shape(i)[0] : 0, " labels");
      }
    }
    const BoxLayout layout = parse_box_layout(
        layout_text_.empty() && !ltrb_ ? (coords == 4 ? "xyWH" : "xyzWHD") : layout_text_, coords,
        "random_bbox_crop");
    STOKER_ENFORCE(aspect_.size() == 1 || layout.ndim == 3, ValueError,
                   "random_bbox_crop: 3 aspect_ratio ranges are for 3-D boxes");
    std::vector<Crop> crops(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) { crops[size_t(i)] = find_crop(ws, in, i, layout); });

    const int nd = layout.ndim;
    std::vector<TensorShape> fixed(static_cast<size_t>(n), TensorShape{int64_t(nd)});
    std::vector<TensorShape> box_shapes, label_shapes, index;
    for (int i = 0; i < n; ++i) {
      const auto m = int64_t(crops[size_t(i)].kept.size());
      box_shapes.emplace_back(std::vector<int64_t>{m, coords});
      index.emplace_back(std::vector<int64_t>{m});
      if (labels) {
        auto d = ws.input(1).shape(i).dims();
        d[0] = m;
        label_shapes.emplace_back(d);
      }
    }
    Batch& anchor = add_output(ws, DType::kF32, fixed, TensorLayout());
    Batch& shape = add_output(ws, DType::kF32, fixed, TensorLayout());
    Batch& boxes = add_output(ws, DType::kF32, box_shapes, TensorLayout());
    Batch* labels_out = labels ? &add_output(ws, DType::kI32, label_shapes, TensorLayout()) : nullptr;
    Batch* index_out = spec_.arg<bool>("output_bbox_indices")
                           ? &add_output(ws, DType::kI32, index, TensorLayout())
                           : nullptr;
    for (int i = 0; i < n; ++i) {
      const Crop& c = crops[size_t(i)];
      for (int d = 0; d < nd; ++d) {
        static_cast<float*>(anchor.data(i))[d] = c.window.lo[d];
        static_cast<float*>(shape.data(i))[d] = c.window.hi[d] - c.window.lo[d];
      }
      auto* b = static_cast<float*>(boxes.data(i));
      for (size_t k = 0; k < c.boxes.size(); ++k) write_box(b + k * size_t(coords), c.boxes[k], layout);
      if (labels_out) {
        const Batch& l = ws.input(1);
        const int64_t per = l.shape(i).volume() / std::max<int64_t>(l.shape(i)[0], 1);
        const auto* src = static_cast<const int32_t*>(l.data(i));
        auto* dst = static_cast<int32_t*>(labels_out->data(i));
        for (int32_t k : c.kept) {
          std::memcpy(dst, src + k * per, size_t(per) * sizeof(int32_t));
          dst += per;
        }
      }
      if (index_out) std::copy(c.kept.begin(), c.kept.end(), static_cast<int32_t*>(index_out->data(i)));
    }
  }

 private:
  // crop_shape or input_shape of sample i in x, y, z order (shape_layout names its order).
  std::vector<double> shape_arg(const Workspace& ws, const char* name, int i, int nd) const {
    const auto v = list_arg(ws, name, i);
    STOKER_ENFORCE(int(v.size()) == nd, ValueError, "random_bbox_crop: ", name, " has ", v.size(),
                   " values for ", nd, "-D boxes");
    std::string order = spec_.arg<std::string>("shape_layout");
    const std::string axes = nd == 2 ? "WH" : "WHD";
    if (order.empty()) order = axes;
    std::vector<double> out(static_cast<size_t>(nd));
    for (int k = 0; k < nd; ++k) {
      const auto a = axes.find(order[size_t(k)]);
      STOKER_ENFORCE(int(order.size()) == nd && a != std::string::npos, ValueError,
                     "random_bbox_crop: shape_layout '", order, "' is not a permutation of '", axes,
                     "'");
      out[a] = v[size_t(k)];
    }
    return out;
  }

  // When a pair's aspect ratio range is a single value, sets one side from the other (the
  // pairs in random order), then rescales so the largest extent stays.
  void fix_aspect_ratios(float* shape, int nd, RandomStream& rng) const {
    bool fixed = false;
    for (const auto& r : aspect_) fixed = fixed || r.min == r.max;
    if (!fixed) return;
    int order[3] = {0, 1, 2};
    for (int k = nd - 1; k > 0; --k) std::swap(order[k], order[rng.below(uint32_t(k + 1))]);
    float largest = 0.f;
    for (int d = 0; d < nd; ++d) largest = std::max(largest, shape[d]);
    for (int i0 = 0; i0 < nd; ++i0) {
      for (int i1 = i0 + 1; i1 < nd; ++i1) {
        const int d0 = order[i0], d1 = order[i1];
        const int lo = std::min(d0, d1), hi = std::max(d0, d1);
        const Range& r = aspect_[size_t(pair_index(lo, hi, nd)) % aspect_.size()];
        if (r.min != r.max || r.min <= 0.f) continue;
        // r is shape[lo] / shape[hi]
        shape[d1] = d1 == hi ? shape[d0] / r.min : shape[d0] * r.min;
      }
    }
    float now = 0.f;
    for (int d = 0; d < nd; ++d) now = std::max(now, shape[d]);
    if (now > 0.f) {
      for (int d = 0; d < nd; ++d) shape[d] = largest * shape[d] / now;
    }
  }

  static int pair_index(int a, int b, int nd) {  // (0,1), (0,2), (1,2)
    return nd == 2 ? 0 : a == 0 ? b - 1 : 2;
  }

  bool valid_aspect(const float* shape, int nd) const {
    for (int a = 0; a < nd; ++a) {
      for (int b = a + 1; b < nd; ++b) {
        const Range& r = aspect_[size_t(pair_index(a, b, nd)) % aspect_.size()];
        if (!r.contains(shape[a] / shape[b])) return false;
      }
    }
    return true;
  }

  Crop find_crop(const Workspace& ws, const Batch& in, int i, const BoxLayout& layout) const {
    const int nd = layout.ndim;
    const int64_t count = in.shape(i)[0];
    std::vector<BoxNd> boxes(static_cast<size_t>(count));
    const auto* values = static_cast<const float*>(in.data(i));
    for (int64_t k = 0; k < count; ++k) {
      const BoxNd& b = boxes[size_t(k)] = read_box(values + k * layout.coords(), layout);
      for (int d = 0; d < nd; ++d) {
        // (as DALI requires: normalised coordinates)
        STOKER_ENFORCE(b.lo[d] >= 0.f && b.hi[d] <= 1.f && b.lo[d] <= b.hi[d], ValueError,
                       "random_bbox_crop: sample ", i, ": box ", k,
                       " does not lie in [0, 1] with its start before its end (bbox_layout '",
                       layout.text, "')");
      }
    }
    std::vector<double> input_shape, crop_shape;
    if (fixed_shape_) {
      input_shape = shape_arg(ws, "input_shape", i, nd);
      crop_shape = shape_arg(ws, "crop_shape", i, nd);
      for (int d = 0; d < nd; ++d) {
        STOKER_ENFORCE(crop_shape[size_t(d)] <= input_shape[size_t(d)] && crop_shape[size_t(d)] > 0,
                       ValueError, "random_bbox_crop: sample ", i, ": crop_shape must be positive "
                       "and fit input_shape");
      }
    }
    RandomStream rng = sample_rng(ws, i);
    const int64_t options = int64_t(thresholds_.size()) + (allow_no_crop_ ? 1 : 0);
    Crop best;
    float best_metric = -1.f;
    bool found = false, any = false;
    const int64_t limit = total_ > 0 ? total_ : kAttemptLimit;
    for (int64_t tried = 0; !found && tried < limit;) {
      const int64_t pick = rng.below(uint32_t(options));
      if (pick == int64_t(thresholds_.size())) {  // no crop
        best = whole(boxes, nd, input_shape);
        found = any = true;
        break;
      }
      const float threshold = float(thresholds_[size_t(pick)]);
      for (int64_t a = 0; a < attempts_ && tried < limit && !found; ++a, ++tried) {
        BoxNd rel, out;
        if (fixed_shape_) {
          for (int d = 0; d < nd; ++d) {
            const auto room = int64_t(input_shape[size_t(d)] - crop_shape[size_t(d)]);
            const float anchor = room > 0 ? float(rng.below(uint32_t(room + 1))) : 0.f;
            out.lo[d] = anchor, out.hi[d] = anchor + float(crop_shape[size_t(d)]);
            rel.lo[d] = anchor / float(input_shape[size_t(d)]);
            rel.hi[d] = rel.lo[d] + float(crop_shape[size_t(d)]) / float(input_shape[size_t(d)]);
          }
        } else {
          float shape[3];
          for (int d = 0; d < nd; ++d) shape[d] = rng.uniform(scale_.min, scale_.max);
          fix_aspect_ratios(shape, nd, rng);
          if (!valid_aspect(shape, nd)) continue;
          for (int d = 0; d < nd; ++d) {
            rel.lo[d] = rng.uniform(0.f, 1.f - shape[d]);
            rel.hi[d] = rel.lo[d] + shape[d];
          }
          out = rel;
        }
        const float metric = overlap_metric(rel, boxes, nd);
        const bool valid = metric >= threshold;
        if (any && metric <= best_metric && !valid) continue;
        best_metric = metric;
        any = true;
        best = keep_boxes(rel, boxes, nd);
        best.window = out;
        // A window keeping no box is not a crop of anything (unless there were none).
        found = valid && (!best.boxes.empty() || boxes.empty());
      }
    }
    if (!found && !any) best = whole(boxes, nd, input_shape);  // no window met the aspect ratios
    return best;
  }

  static Crop whole(const std::vector<BoxNd>& boxes, int nd, const std::vector<double>& input_shape) {
    Crop c;
    for (int d = 0; d < nd; ++d) c.window.hi[d] = input_shape.empty() ? 1.f : float(input_shape[size_t(d)]);
    c.boxes = boxes;
    c.kept.resize(boxes.size());
    std::iota(c.kept.begin(), c.kept.end(), 0);
    return c;
  }

  // The smallest (all_boxes_above_threshold) or largest overlap of the window with a box.
  float overlap_metric(const BoxNd& window, const std::vector<BoxNd>& boxes, int nd) const {
    if (boxes.empty()) return 0.f;
    float lo = 2.f, hi = -1.f;
    for (const auto& b : boxes) {
      const float m = overlap_ ? kernels::box_coverage(window, b, nd) : kernels::box_iou(window, b, nd);
      lo = std::min(lo, m), hi = std::max(hi, m);
    }
    return all_boxes_ ? lo : hi;
  }

  // The boxes whose centre lies in the window (or, with bbox_prune_threshold, enough of whose
  // area does), cut to it and in its coordinates.
  Crop keep_boxes(const BoxNd& window, const std::vector<BoxNd>& boxes, int nd) const {
    Crop c;
    for (size_t k = 0; k < boxes.size(); ++k) {
      const BoxNd& b = boxes[k];
      bool keep = true;
      if (prune_ < 0) {
        for (int d = 0; d < nd; ++d) {
          const float centre = 0.5f * (b.lo[d] + b.hi[d]);
          keep = keep && centre >= window.lo[d] && centre <= window.hi[d];
        }
      } else {
        const float f = kernels::box_coverage(window, b, nd);
        keep = f > 0.f && f >= float(prune_);
      }
      if (!keep) continue;
      BoxNd r = kernels::box_intersection(window, b, nd);
      for (int d = 0; d < nd; ++d) {
        const float extent = window.hi[d] - window.lo[d];
        r.lo[d] = (r.lo[d] - window.lo[d]) / extent;
        r.hi[d] = (r.hi[d] - window.lo[d]) / extent;
      }
      c.boxes.push_back(r);
      c.kept.push_back(int32_t(k));
    }
    return c;
  }

  std::vector<double> thresholds_;
  bool overlap_ = false, fixed_shape_ = false, allow_no_crop_ = true, ltrb_ = true;
  bool all_boxes_ = true;
  int64_t attempts_ = 1, total_ = -1;
  Range scale_;
  std::vector<Range> aspect_;
  std::string layout_text_;
  double prune_ = -1.0;
};

}  // namespace

OpSchema random_bbox_crop_schema() {
  return {
      .name = "random_bbox_crop",
      .doc =
          "SSD's prospective crop (as DALI's random_bbox_crop): draws a window in normalised "
          "coordinates whose overlap with the boxes (IoU, or with threshold_type='overlap' the "
          "fraction of each box inside) reaches one of `thresholds`, picked at random per "
          "sample (with allow_no_crop, 'no crop' is one more pick). The window's extents are "
          "drawn from `scaling` and kept to `aspect_ratio`, its place uniformly; with "
          "crop_shape and input_shape it has that size in pixels. Each threshold gets "
          "num_attempts windows before another is picked; after total_num_attempts (stoker: "
          "at most 100,000 when unset) the best window so far is used. Outputs: anchor and "
          "shape (float32, x y [z]: to slice the image), the boxes whose centre is in the "
          "window (or, with bbox_prune_threshold, enough of whose area is) cut to it and in "
          "its coordinates, their labels when labels are given, and with output_bbox_indices "
          "their positions in the input.",
      .inputs = {"boxes", "labels"},
      .optional_inputs = 1,
      .outputs = {"anchor", "shape", "bboxes", "labels", "bbox_indices"},
      .output_names = output_names,
      .args =
          {
              {"thresholds", ArgType::kFloatList, "Minimum overlaps to pick from.",
               std::vector<double>{0.0}},
              {"threshold_type", ArgType::kString, "'iou' or 'overlap'.", std::string("iou")},
              {"aspect_ratio", ArgType::kFloatList,
               "[min, max] of width/height (3-D: x/y, x/z, y/z ranges).",
               std::vector<double>{1.0, 1.0}},
              {"scaling", ArgType::kFloatList, "[min, max] of each extent (fraction).",
               std::vector<double>{1.0, 1.0}},
              {"num_attempts", ArgType::kInt, "Windows tried per picked threshold.", int64_t{1}},
              {"total_num_attempts", ArgType::kInt, "Windows tried in all (-1: see above).",
               int64_t{-1}},
              {"allow_no_crop", ArgType::kBool, "'No crop' is one of the picks.", true},
              {"all_boxes_above_threshold", ArgType::kBool,
               "Every box must reach the threshold (else one is enough).", true},
              {"bbox_layout", ArgType::kString, "The boxes' layout (default xyXY).",
               std::string()},
              {"ltrb", ArgType::kBool, "Older spelling: True is xyXY, False xyWH.", true},
              optional_arg("bbox_prune_threshold", ArgType::kFloat,
                           "Keep boxes with at least this fraction inside (else by centre).",
                           false),
              optional_arg("crop_shape", ArgType::kIntList, "A fixed window size (pixels).", true),
              optional_arg("input_shape", ArgType::kIntList, "The image's size (pixels).", true),
              {"shape_layout", ArgType::kString, "Order of crop_shape and input_shape (WH).",
               std::string()},
              {"output_bbox_indices", ArgType::kBool, "Output the kept boxes' indices.", false},
          },
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<RandomBBoxCrop>(s); },
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
