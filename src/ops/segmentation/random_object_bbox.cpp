#include "stoker/ops/segmentation/random_object_bbox.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "stoker/core/dtype.hpp"
#include "stoker/core/rng.hpp"
#include "stoker/kernels/segmentation/blobs.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::Blobs;

enum class Format { kAnchorShape, kStartEnd, kBox };

Format parse_format(const OpSpec& spec) {
  const auto f = spec.arg<std::string>("format");
  if (f == "anchor_shape") return Format::kAnchorShape;
  if (f == "start_end") return Format::kStartEnd;
  if (f == "box") return Format::kBox;
  throw ValueError(
      "segmentation.random_object_bbox: format must be 'anchor_shape', 'start_end' "
      "or 'box', got '" +
      f + "'");
}

std::vector<std::string> output_names(const OpSpec& spec) {
  std::vector<std::string> names;
  switch (parse_format(spec)) {
    case Format::kAnchorShape:
      names = {"anchor", "shape"};
      break;
    case Format::kStartEnd:
      names = {"start", "end"};
      break;
    case Format::kBox:
      names = {"box"};
      break;
  }
  if (spec.arg<bool>("output_class")) names.push_back("class");
  return names;
}

// cache_objects: a mask's blobs under a 128-bit hash of its bytes, with its dtype and shape.
struct CacheKey {
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t h1, h2;
  auto operator<=>(const CacheKey&) const = default;
};

CacheKey cache_key(const Batch& in, int i) {
  CacheKey k{in.dtype(), in.shape(i).dims(), 0x243f6a8885a308d3ull, 0x13198a2e03707344ull};
  const auto* p = static_cast<const uint8_t*>(in.data(i));
  const size_t n = size_t(in.shape(i).volume()) * dtype_size(in.dtype());
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    uint64_t w;
    std::memcpy(&w, p + j, 8);
    k.h1 = mix64(k.h1 ^ w), k.h2 = mix64(k.h2 + w * 0x9e3779b97f4a7c15ull);
  }
  uint64_t tail = n;  // the length, and the last bytes
  for (; j < n; ++j) tail = tail << 8 | p[j];
  k.h1 = mix64(k.h1 ^ tail), k.h2 = mix64(k.h2 + tail);
  return k;
}

// The classes a sample's draw chooses among, with their weights (DALI's rules).
struct Classes {
  int64_t background = 0;
  std::vector<int64_t> labels;
  std::vector<double> weights;
};

class RandomObjectBBox final : public Operator {
 public:
  explicit RandomObjectBBox(const OpSpec& spec) : Operator(spec), format_(parse_format(spec)) {
    ignore_class_ = spec.arg<bool>("ignore_class");
    output_class_ = spec.arg<bool>("output_class");
    STOKER_ENFORCE(
        !(ignore_class_ && (spec.given("classes") || spec.given("class_weights") || output_class_)),
        ValueError,
        "segmentation.random_object_bbox: classes, class_weights and output_class "
        "cannot be used with ignore_class=True");
    if (spec.given("k_largest")) {
      k_largest_ = spec.arg<int64_t>("k_largest");
      STOKER_ENFORCE(k_largest_ >= 1, ValueError,
                     "segmentation.random_object_bbox: k_largest must be at least 1, got ",
                     k_largest_);
    }
    cache_ = spec.arg<bool>("cache_objects");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const int ndim = n > 0 ? in.shape(0).ndim() : 0;
    STOKER_ENFORCE(n == 0 || ndim >= 1, ValueError,
                   "segmentation.random_object_bbox: expected masks of 1 or more dimensions, got "
                   "scalars");
    for (int i = 0; i < n; ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == ndim, ValueError,
                     "segmentation.random_object_bbox: every mask of a batch needs the same number "
                     "of dimensions; sample 0 has ",
                     ndim, ", sample ", i, " has ", in.shape(i).ndim());
      for (int64_t e : in.shape(i).dims()) {
        STOKER_ENFORCE(e <= INT32_MAX, ValueError, "segmentation.random_object_bbox: sample ", i,
                       " has an extent of ", e, "; the int32 boxes hold at most 2^31 - 1");
      }
    }
    const int64_t width = format_ == Format::kBox ? 2 * ndim : ndim;
    std::vector<TensorShape> box_shapes(size_t(n), TensorShape(std::vector<int64_t>{width}));
    Batch& first = add_output(ws, DType::kI32, box_shapes, TensorLayout());
    Batch* second = format_ == Format::kBox
                        ? nullptr
                        : &add_output(ws, DType::kI32, box_shapes, TensorLayout());
    Batch* cls = output_class_ ? &add_output(ws, DType::kI32,
                                             std::vector<TensorShape>(size_t(n), TensorShape()),
                                             TensorLayout())
                               : nullptr;
    for_each_sample(ws, n, [&](int i, int) {
      std::vector<int64_t> lo(size_t(ndim), 0), hi = in.shape(i).dims();
      int64_t label = 0;
      pick(ws, i, lo, hi, label);
      auto* a = static_cast<int32_t*>(first.data(i));
      auto* b = second ? static_cast<int32_t*>(second->data(i)) : a + ndim;
      for (int d = 0; d < ndim; ++d) {
        a[d] = int32_t(lo[size_t(d)]);
        b[d] = int32_t(format_ == Format::kAnchorShape ? hi[size_t(d)] - lo[size_t(d)]
                                                       : hi[size_t(d)]);
      }
      if (cls) *static_cast<int32_t*>(cls->data(i)) = int32_t(label);
    });
  }

 private:
  // Sets [lo, hi) to the chosen blob's box and `label` to its class, or leaves the whole input
  // with the background label.
  void pick(const Workspace& ws, int i, std::vector<int64_t>& lo, std::vector<int64_t>& hi,
            int64_t& label) const {
    const Batch& in = ws.input(0);
    const int ndim = in.shape(i).ndim();
    Classes c = classes(ws, i);
    label = c.background;
    auto rng = sample_rng(ws, i);
    if (!(rng.uniform() < scalar_arg(ws, "foreground_prob", i))) return;

    std::vector<int64_t> threshold;
    if (spec_.given("threshold")) {
      for (double t : list_arg(ws, "threshold", i)) threshold.push_back(int64_t(t));
      STOKER_ENFORCE(threshold.size() == 1 || threshold.size() == size_t(ndim), ValueError,
                     "segmentation.random_object_bbox: threshold needs 1 or ", ndim,
                     " values (one per axis), got ", threshold.size());
      if (threshold.size() == 1) threshold.resize(size_t(ndim), threshold[0]);
    }
    const std::shared_ptr<const Blobs> blobs = find(in, i, c.background);
    // The blobs of `value` (any class with ignore_class) that pass the threshold.
    auto candidates = [&](std::optional<int64_t> value) {
      std::vector<int64_t> kept;
      for (int64_t b = 0; b < blobs->count(); ++b) {
        if (value && blobs->values[size_t(b)] != *value) continue;
        bool big = true;
        for (size_t d = 0; d < threshold.size(); ++d)
          big = big && blobs->hi(b)[d] - blobs->lo(b)[d] >= threshold[d];
        if (big) kept.push_back(b);
      }
      if (k_largest_ > 0 && int64_t(kept.size()) > k_largest_) {
        // The largest boxes by volume; equal volumes in raster order.
        std::stable_sort(kept.begin(), kept.end(), [&](int64_t x, int64_t y) {
          return blobs->box_volume(x) > blobs->box_volume(y);
        });
        kept.resize(size_t(k_largest_));
      }
      return kept;
    };
    auto take = [&](const std::vector<int64_t>& kept) {
      const int64_t b = kept[rng.below(uint32_t(kept.size()))];
      lo.assign(blobs->lo(b), blobs->lo(b) + ndim);
      hi.assign(blobs->hi(b), blobs->hi(b) + ndim);
    };

    if (ignore_class_) {
      const auto kept = candidates(std::nullopt);
      if (!kept.empty()) take(kept);
      return;
    }
    // Classes absent from the mask cannot be drawn; a class without a large enough blob is
    // dropped and another drawn.
    std::set<int64_t> present(blobs->values.begin(), blobs->values.end());
    if (!spec_.given("classes") && !spec_.given("class_weights")) {
      c.labels.assign(present.begin(), present.end());
      c.weights.assign(c.labels.size(), 1.0);
    }
    for (size_t k = 0; k < c.labels.size(); ++k) {
      if (!present.count(c.labels[k])) c.weights[k] = 0;
    }
    for (;;) {
      double total = 0;
      for (double w : c.weights) total += w;
      if (!(total > 0)) return;
      const double u = rng.uniform() * total;
      size_t k = 0;
      for (double acc = 0; k < c.weights.size(); ++k) {
        acc += c.weights[k];
        if (u < acc) break;
      }
      if (k == c.weights.size()) {  // rounding: the last class that can be drawn
        while (c.weights[--k] <= 0) {
        }
      }
      const auto kept = candidates(c.labels[k]);
      if (!kept.empty()) {
        take(kept);
        label = c.labels[k];
        return;
      }
      c.weights[k] = 0;
    }
  }

  Classes classes(const Workspace& ws, int i) const {
    Classes c;
    const bool bg_given = spec_.given("background");
    if (bg_given) c.background = int64_t(scalar_arg(ws, "background", i));
    if (ignore_class_) return c;
    const bool has_classes = spec_.given("classes"), has_weights = spec_.given("class_weights");
    if (has_classes) {
      for (double v : list_arg(ws, "classes", i)) c.labels.push_back(int64_t(v));
      int64_t lowest = c.labels.empty() ? 0 : c.labels[0];
      bool clash = false;
      for (int64_t l : c.labels) {
        lowest = std::min(lowest, l);
        clash = clash || l == c.background;
      }
      STOKER_ENFORCE(!(clash && bg_given), ValueError, "segmentation.random_object_bbox: class ",
                     c.background,
                     " is also the background label; give another background "
                     "or leave it out of classes");
      if (clash) c.background = lowest - 1;  // unset: a label below every class
    }
    if (has_weights) {
      c.weights = list_arg(ws, "class_weights", i);
      for (double w : c.weights) {
        STOKER_ENFORCE(w >= 0, ValueError,
                       "segmentation.random_object_bbox: class_weights must not be negative, got ",
                       w);
      }
      if (has_classes) {
        STOKER_ENFORCE(c.weights.size() == c.labels.size(), ValueError,
                       "segmentation.random_object_bbox: classes and class_weights need the same "
                       "length, got ",
                       c.labels.size(), " and ", c.weights.size());
      } else {
        // Consecutive labels from 0, the background skipped (1, 2, ... with background 0).
        for (int64_t l = 0; c.labels.size() < c.weights.size(); ++l) {
          if (l != c.background) c.labels.push_back(l);
        }
      }
    } else if (has_classes) {
      c.weights.assign(c.labels.size(), 1.0);
    }
    return c;
  }

  std::shared_ptr<const Blobs> find(const Batch& in, int i, int64_t background) const {
    std::optional<CacheKey> key;
    if (cache_) {
      key = cache_key(in, i);
      std::lock_guard lock(mutex_);
      if (auto it = cache_map_.find({*key, background}); it != cache_map_.end()) return it->second;
    }
    auto blobs = std::make_shared<const Blobs>(
        visit_dtype<DType::kBool, DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32,
                    DType::kI32, DType::kU64, DType::kI64>(
            in.dtype(), "segmentation.random_object_bbox (masks of labels)", [&](auto tag) {
              using T = typename decltype(tag)::type;
              const T* data = static_cast<const T*>(in.data(i));
              const auto dims = in.shape(i).dims();
              // A background the dtype cannot hold matches no element.
              const bool representable = std::is_same_v<T, bool>
                                             ? background == 0 || background == 1
                                             : (std::is_signed_v<T> || background >= 0) &&
                                                   int64_t(T(background)) == background;
              return kernels::find_blobs<T>(
                  data, dims, representable ? std::optional<T>(T(background)) : std::nullopt);
            }));
    if (key) {
      std::lock_guard lock(mutex_);
      cache_map_.emplace(std::make_pair(*key, background), blobs);
    }
    return blobs;
  }

  Format format_;
  bool ignore_class_ = false, output_class_ = false, cache_ = false;
  int64_t k_largest_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<CacheKey, int64_t>, std::shared_ptr<const Blobs>> cache_map_;
};

}  // namespace

OpSchema random_object_bbox_schema() {
  return {
      .name = "segmentation.random_object_bbox",
      .doc =
          "The bounding box of a random object in a label map (as DALI's "
          "segmentation.random_object_bbox). Objects are blobs: elements of one label, other "
          "than `background`, connected through faces (4 neighbours in 2-D, 6 in 3-D). With "
          "probability `foreground_prob` a class is drawn (uniformly among the labels present, "
          "or among `classes` by `class_weights`), then one of its blobs (among the `k_largest` "
          "boxes by volume, and only boxes at least `threshold` in every axis; a class without "
          "one is dropped and another drawn); with ignore_class the blob is drawn among all "
          "blobs. Otherwise, or when no blob qualifies, the box is the whole input and the "
          "class the background. Masks: bool or integer labels of any number of dimensions. "
          "Outputs int32 per axis: anchor and shape, start and end, or one box [start, end] "
          "(`format`), then the class (int32 scalar) with output_class.",
      .inputs = {"mask"},
      .outputs = {"anchor", "shape", "class"},
      .output_names = output_names,
      .args =
          {
              {"format", ArgType::kString, "'anchor_shape', 'start_end' or 'box'.",
               std::string("anchor_shape")},
              {"foreground_prob", ArgType::kFloat, "Probability of drawing an object.", 1.0, true},
              {"background", ArgType::kInt,
               "The background label (unset: 0, or below every class when 0 is a class).",
               int64_t{0}, true},
              optional_arg("classes", ArgType::kIntList, "The labels drawn (unset: all present)."),
              optional_arg("class_weights", ArgType::kFloatList,
                           "Relative probabilities of `classes` (unset: equal)."),
              optional_arg("threshold", ArgType::kIntList,
                           "Smallest box extent, one per axis or one for all."),
              optional_arg("k_largest", ArgType::kInt, "Draw among this many largest boxes.",
                           false),
              {"ignore_class", ArgType::kBool, "Draw among all blobs, not a class first.", false},
              {"output_class", ArgType::kBool, "Add the class output.", false},
              {"cache_objects", ArgType::kBool,
               "Keep each distinct mask's blobs (by a 128-bit hash of its bytes) for when it is "
               "seen again: for datasets of few, large masks.",
               false},
          },
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<RandomObjectBBox>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = "HWC"},
  };
}

}  // namespace stoker::ops
