#include "stoker/ops/tensor/shape_ops.hpp"

#include <algorithm>
#include <utility>

#include "stoker/ops/tensor/reshape.hpp"

namespace stoker::ops {
namespace {

// Removes axes given by index or by layout name. Every sample keeps its volume: only axes of
// extent 1 go (or any axis of an empty sample that stays empty, as in DALI).
class Squeeze final : public Operator {
 public:
  explicit Squeeze(const OpSpec& spec) : Operator(spec) {
    const bool axes = spec.has_arg("axes"), names = spec.has_arg("axis_names");
    STOKER_ENFORCE(!(axes && names), ValueError, "squeeze: give `axes` or `axis_names`, not both");
    STOKER_ENFORCE(axes || names, ValueError,
                   "squeeze: give `axes` or `axis_names` (the axes to remove)");
    if (axes) axes_ = spec.arg<std::vector<int64_t>>("axes");
    if (names) names_ = spec.arg<std::string>("axis_names");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const TensorLayout& layout = in.layout();
    std::vector<int64_t> axes = axes_;
    for (char c : names_) {
      const int d = layout.find(c);
      STOKER_ENFORCE(d >= 0, ValueError, "squeeze: axis '", c, "' of axis_names '", names_,
                     "' is not in the input's layout '", layout.str(), "'");
      axes.push_back(d);
    }
    std::sort(axes.begin(), axes.end());
    auto twice = std::adjacent_find(axes.begin(), axes.end());
    STOKER_ENFORCE(twice == axes.end(), ValueError, "squeeze: axis ",
                   twice == axes.end() ? 0 : *twice, " is given twice");
    const int n = in.size();
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const TensorShape& s = in.shape(i);
      // DALI skips axes outside the sample silently; a typo should not pass unnoticed.
      for (int64_t a : axes)
        STOKER_ENFORCE(a >= 0 && a < s.ndim(), ValueError, "squeeze: axis ", a,
                       " is not an axis of sample ", i, " of shape ", s.to_string(),
                       " (expected 0 to ", s.ndim() - 1, ")");
      std::vector<int64_t> keep;
      for (int d = 0; d < s.ndim(); ++d)
        if (!std::binary_search(axes.begin(), axes.end(), int64_t(d))) keep.push_back(d);
      TensorShape shape = shape_from_src_dims(s, keep, "squeeze", i);
      if (shape.volume() != s.volume()) {
        for (int64_t a : axes)
          STOKER_ENFORCE(s[int(a)] == 1, ValueError, "squeeze: sample ", i, " of shape ",
                         s.to_string(), " has extent ", s[int(a)], " on axis ", a,
                         "; only axes of extent 1 can be removed");
      }
      shapes[size_t(i)] = std::move(shape);
    }
    std::string out_layout;
    for (int d = 0; d < layout.ndim(); ++d)
      if (!std::binary_search(axes.begin(), axes.end(), int64_t(d)))
        out_layout += layout.str()[size_t(d)];
    add_view_output(ws, in, in.dtype(), shapes, out_layout);
  }

 private:
  std::vector<int64_t> axes_;
  std::string names_;
};

// Inserts axes of extent 1 at output positions `axes`, named by `new_axis_names` (or clearing
// the layout, as DALI does, when they are not named).
class ExpandDims final : public Operator {
 public:
  explicit ExpandDims(const OpSpec& spec) : Operator(spec) {
    const auto axes = spec.arg<std::vector<int64_t>>("axes");
    const std::string names = spec.arg<std::string>("new_axis_names");
    for (int64_t a : axes)
      STOKER_ENFORCE(a >= 0, ValueError, "expand_dims: axis ", a,
                     " is negative; axes are positions in the output, from 0");
    STOKER_ENFORCE(names.empty() || names.size() == axes.size(), ValueError,
                   "expand_dims: ", axes.size(), " axes but ", names.size(), " new_axis_names ('",
                   names, "'); give one name per axis");
    // Names follow their axes when the axes are sorted ([3, 0] with "FC": C first, F last).
    for (size_t k = 0; k < axes.size(); ++k)
      axes_.emplace_back(axes[k], names.empty() ? '\0' : names[k]);
    std::sort(axes_.begin(), axes_.end());
    for (size_t k = 1; k < axes_.size(); ++k)
      STOKER_ENFORCE(axes_[k].first != axes_[k - 1].first, ValueError, "expand_dims: axis ",
                     axes_[k].first, " is given twice");
    named_ = !names.empty();
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const TensorShape& s = in.shape(i);
      STOKER_ENFORCE(!named_ || !in.layout().empty() || s.ndim() == 0, ValueError,
                     "expand_dims: new_axis_names needs an input with a layout; sample ", i,
                     " has shape ", s.to_string(), " and none");
      std::vector<int64_t> src_dims;
      const int out_ndim = s.ndim() + int(axes_.size());
      for (int d = 0, k = 0, from = 0; d < out_ndim; ++d) {
        if (k < int(axes_.size()) && axes_[size_t(k)].first == d) {
          src_dims.push_back(-1);
          ++k;
        } else {
          src_dims.push_back(from++);
        }
      }
      STOKER_ENFORCE(axes_.empty() || axes_.back().first < out_ndim, ValueError,
                     "expand_dims: axis ", axes_.empty() ? 0 : axes_.back().first,
                     " is out of range for sample ", i, " of shape ", s.to_string(),
                     ": the output has ", out_ndim, " axes");
      shapes[size_t(i)] = shape_from_src_dims(s, src_dims, "expand_dims", i);
    }
    add_view_output(ws, in, in.dtype(), shapes, out_layout(in.layout()));
  }

 private:
  TensorLayout out_layout(const TensorLayout& in) const {
    if (axes_.empty()) return in;
    if (!named_) return {};
    std::string out;
    size_t k = 0, from = 0;
    const size_t out_ndim = size_t(in.ndim()) + axes_.size();
    for (size_t d = 0; d < out_ndim; ++d) {
      if (k < axes_.size() && size_t(axes_[k].first) == d) {
        out += axes_[k++].second;
      } else {
        if (from >= in.str().size()) return {};  // an empty batch whose axes do not fit
        out += in.str()[from++];
      }
    }
    return out;
  }

  std::vector<std::pair<int64_t, char>> axes_;  // sorted by position, with the axis's name
  bool named_ = false;
};

}  // namespace

OpSchema squeeze_schema() {
  return {
      .name = "squeeze",
      .doc =
          "Removes the axes given by `axes` or `axis_names`, without copying (the output views "
          "the input's memory). Each removed axis must have extent 1 (or the sample must stay "
          "empty); the layout loses their names.",
      .inputs = {"data"},
      .outputs = {"output"},
      .args = {optional_arg("axes", ArgType::kIntList,
                            "Indices of the axes to remove (each must exist in every sample).",
                            false),
               optional_arg("axis_names", ArgType::kString,
                            "Layout names of the axes to remove (each must be in the input's "
                            "layout).",
                            false)},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Squeeze>(s); },
      .make_gpu = [](const OpSpec& s) { return std::make_unique<Squeeze>(s); },
      .example = OpExample{.args = {{"axes", std::vector<int64_t>{2}}}},
  };
}

OpSchema expand_dims_schema() {
  return {
      .name = "expand_dims",
      .doc =
          "Inserts axes of extent 1 at the output positions `axes`, without copying (the output "
          "views the input's memory). The layout gets `new_axis_names` at those positions, or "
          "is cleared when they are not given.",
      .inputs = {"data"},
      .outputs = {"output"},
      .args = {{"axes", ArgType::kIntList,
                "Positions of the new axes in the output (0 to its number of axes - 1)."},
               {"new_axis_names", ArgType::kString,
                "One layout name per new axis (the input must have a layout, or be a scalar); "
                "empty: the output has no layout.",
                std::string("")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ExpandDims>(s); },
      .make_gpu = [](const OpSpec& s) { return std::make_unique<ExpandDims>(s); },
      .example = OpExample{.args = {{"axes", std::vector<int64_t>{0}}}},
  };
}

}  // namespace stoker::ops
