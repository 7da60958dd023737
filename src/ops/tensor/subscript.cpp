#include "stoker/ops/tensor/subscript.hpp"

#include <string>
#include <vector>

#include "stoker/core/dtype.hpp"
#include "stoker/kernels/tensor/strided_copy_cpu.hpp"
#include "stoker/kernels/tensor/subscript.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"
#ifdef STOKER_HAVE_CUDA
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#endif

namespace stoker::ops {
namespace {

using kernels::AxisPick;
using kernels::SubscriptPlan;

// DALI's TensorSubscript takes up to 32 subscripts (at_k, lo_k, hi_k, step_k).
constexpr int kMaxSubscripts = 32;
constexpr const char* kOp = "_tensor_subscript";

// One integer of a subscript: absent, a constant, or a per-sample scalar tensor.
struct IntArg {
  std::string name, what;  // "at_0", "the index of axis 0"
  bool given = false, tensor = false;
  int64_t value = 0;

  void init(const OpSpec& spec, std::string n, std::string w) {
    name = std::move(n), what = std::move(w);
    given = spec.given(name);
    tensor = spec.arg_inputs.count(name) > 0;
    if (spec.has_arg(name)) value = spec.arg<int64_t>(name);
  }
  // The batch-level check of a per-sample tensor: integers (as DALI: not bool, not float).
  void check_type(const Workspace& ws) const {
    if (!tensor) return;
    const DType d = ws.arg_inputs.at(name)->dtype();
    STOKER_ENFORCE(d != DType::kBool && !is_float(d), TypeError, kOp, ": ", what, " (`", name,
                   "`) must be an integer, got ", dtype_name(d));
  }
  int64_t at(const Workspace& ws, int i) const {
    if (!tensor) return value;
    const Batch& b = *ws.arg_inputs.at(name);
    STOKER_ENFORCE(b.shape(i).ndim() == 0, ValueError, kOp, ": ", what, " (`", name,
                   "`) must be a scalar (0-D) per sample, got shape ", b.shape(i).to_string());
    int64_t v = 0;
    visit_numeric(b.dtype(), kOp, [&](auto tag) {
      using T = typename decltype(tag)::type;
      v = cast_value<int64_t>(b.data_as<T>(i)[0]);  // saturates uint64 beyond int64
    });
    return v;
  }
};

struct Subscript {
  IntArg at, lo, hi, step;
  bool index() const { return at.given; }
  bool defined() const { return at.given || lo.given || hi.given || step.given; }
};

// Axis `d` of the input: an index, a range or (past the subscripts) the whole axis.
class TensorSubscript : public Operator {
 public:
  explicit TensorSubscript(const OpSpec& spec) : Operator(spec) {
    int count = 0;
    for (int k = 0; k < kMaxSubscripts; ++k) {
      Subscript s;
      const std::string axis = " of axis " + std::to_string(k);
      const std::string n = std::to_string(k);
      s.at.init(spec, "at_" + n, "the index" + axis);
      s.lo.init(spec, "lo_" + n, "the start" + axis);
      s.hi.init(spec, "hi_" + n, "the end" + axis);
      s.step.init(spec, "step_" + n, "the step" + axis);
      STOKER_ENFORCE(!(s.at.given && (s.lo.given || s.hi.given)), ValueError, kOp,
                     ": the subscript of axis ", k, " is both an index (at_", k,
                     ") and a range (lo_", k, "/hi_", k, ")");
      STOKER_ENFORCE(!(s.at.given && s.step.given), ValueError, kOp, ": the subscript of axis ", k,
                     " is an index (at_", k, "): it cannot have a step (step_", k, ")");
      if (s.defined()) count = k + 1;
      subs_.push_back(s);
    }
    subs_.resize(size_t(count));
    declared_ = count;
    if (spec.has_arg("num_subscripts")) {
      declared_ = int(spec.arg<int64_t>("num_subscripts"));
      STOKER_ENFORCE(declared_ >= count, ValueError, kOp, ": num_subscripts (", declared_,
                     ") is less than the subscripts given (", count, ")");
    }
    new_axes_ = spec.arg<std::vector<int64_t>>("new_axes");
    names_ = spec.arg<std::string>("new_axis_names");
    for (size_t k = 0; k < new_axes_.size(); ++k)
      STOKER_ENFORCE(new_axes_[k] >= 0 && (k == 0 || new_axes_[k] > new_axes_[k - 1]), ValueError,
                     kOp, ": new_axes must be ascending positions >= 0, got ",
                     format_arg_value(new_axes_));
    STOKER_ENFORCE(names_.empty() || names_.size() == new_axes_.size(), ValueError, kOp,
                   ": new_axis_names '", names_, "' names ", names_.size(), " axes, new_axes has ",
                   new_axes_.size());
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::vector<Sample> plans = plan(ws, in);
    const TensorLayout layout = out_layout(in);
    if (all_views(plans)) {
      views(ws, in, plans, layout);
      return;
    }
    Batch& out = add_output(ws, in.dtype(), shapes(plans), layout);
    const size_t es = dtype_size(in.dtype());
    for_each_sample(ws, in.size(), [&](int i, int) {
      for (const auto& c :
           kernels::subscript_copies(plans[size_t(i)].plan, in.data(i), out.data(i), es))
        kernels::strided_copy_cpu(c, es);
    });
  }

 protected:
  struct Sample {
    SubscriptPlan plan;
    TensorShape shape;
  };

  std::vector<Sample> plan(Workspace& ws, const Batch& in) const {
    const int n = in.size();
    if (n > 0) check_dims(in.sample_ndim());
    for (const auto& s : subs_)
      for (const IntArg* a : {&s.at, &s.lo, &s.hi, &s.step}) a->check_type(ws);
    std::vector<Sample> plans(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int) { plans[size_t(i)] = plan_sample(ws, in.shape(i), i); });
    return plans;
  }

  // The batch's checks of dimensions (as DALI: every sample has the same number).
  void check_dims(int ndim) const {
    STOKER_ENFORCE(ndim > 0 || declared_ == 0, IndexError, kOp,
                   ": cannot index a scalar (a 0-D tensor)");
    STOKER_ENFORCE(ndim >= declared_, IndexError, kOp, ": too many indices (", declared_,
                   ") for a ", ndim, "-D tensor");
    int kept = ndim;
    for (const auto& s : subs_) kept -= s.index() ? 1 : 0;
    const int64_t out_ndim = kept + int64_t(new_axes_.size());
    for (int64_t a : new_axes_)
      STOKER_ENFORCE(a < out_ndim, IndexError, kOp, ": too many indices: a new axis at position ",
                     a, " of a result with ", out_ndim, " dimensions");
  }

  Sample plan_sample(const Workspace& ws, const TensorShape& shape, int i) const {
    const int ndim = shape.ndim();
    std::vector<AxisPick> picks;
    std::vector<int64_t> kept;
    for (int d = 0; d < ndim; ++d) {
      const int64_t extent = shape[d];
      const Subscript* s = d < int(subs_.size()) ? &subs_[size_t(d)] : nullptr;
      if (s && s->index()) {
        const int64_t at = s->at.at(ws, i);
        const int64_t idx = at < 0 ? at + extent : at;
        STOKER_ENFORCE(idx >= 0 && idx < extent, IndexError, kOp, ": index ", at,
                       " is out of range for axis ", d, " of length ", extent, " (shape ",
                       shape.to_string(), ")");
        picks.push_back({idx, 1, 1});
        continue;
      }
      AxisPick p{0, extent, 1};
      if (s && s->defined()) {
        const int64_t step = s->step.given ? s->step.at(ws, i) : 1;
        STOKER_ENFORCE(step != 0, ValueError, kOp, ": the step of axis ", d, " is 0");
        auto bound = [&](const IntArg& a) {
          return a.given ? std::optional<int64_t>(a.at(ws, i)) : std::nullopt;
        };
        p = kernels::slice_pick(extent, bound(s->lo), bound(s->hi), step);
      }
      picks.push_back(p);
      kept.push_back(p.count);
    }
    for (int64_t a : new_axes_) kept.insert(kept.begin() + a, 1);
    return {kernels::plan_subscript(dims_of(shape), picks), TensorShape(kept)};
  }

  // The input's layout without the indexed axes; new axes take their names, or, unnamed, leave
  // the result without a layout (as DALI's expand_dims).
  TensorLayout out_layout(const Batch& in) const {
    std::string l;
    const std::string& src = in.layout().str();
    for (int d = 0; d < int(src.size()); ++d)
      if (d >= int(subs_.size()) || !subs_[size_t(d)].index()) l += src[size_t(d)];
    if (new_axes_.empty()) return l;
    if (names_.empty()) return {};
    STOKER_ENFORCE(!src.empty(), ValueError, kOp, ": naming new axes ('", names_,
                   "') needs an input with a layout");
    for (size_t k = 0; k < new_axes_.size(); ++k)
      l.insert(l.begin() + std::min<int64_t>(new_axes_[k], int64_t(l.size())), names_[k]);
    return l;
  }

  static bool all_views(const std::vector<Sample>& plans) {
    for (const auto& p : plans)
      if (!p.plan.contiguous()) return false;
    return true;
  }

  static std::vector<TensorShape> shapes(const std::vector<Sample>& plans) {
    std::vector<TensorShape> out;
    for (const auto& p : plans) out.push_back(p.shape);
    return out;
  }

  // No copy: each sample views the run of the input it picks (either backend).
  static void views(Workspace& ws, const Batch& in, const std::vector<Sample>& plans,
                    const TensorLayout& layout) {
    const int n = in.size();
    ws.outputs.push_back(Batch::with_samples(n, in.dtype(), layout, in.memory()));
    Batch& out = ws.outputs.back();
    out.copy_source_info(in);
    out.set_ready_event(in.ready_event());  // device views: complete when the input is
    const auto es = int64_t(dtype_size(in.dtype()));
    for (int i = 0; i < n; ++i) {
      auto* first = static_cast<uint8_t*>(in.data(i)) + plans[size_t(i)].plan.offset * es;
      out.set_sample(i, in.owner(i), first, plans[size_t(i)].shape);
    }
  }

  std::vector<Subscript> subs_;
  int declared_ = 0;  // subscripts the input must have axes for (full ranges included)
  std::vector<int64_t> new_axes_;
  std::string names_;
};

#ifdef STOKER_HAVE_CUDA
class TensorSubscriptGpu final : public TensorSubscript {
 public:
  using TensorSubscript::TensorSubscript;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::vector<Sample> plans = plan(ws, in);
    const TensorLayout layout = out_layout(in);
    if (all_views(plans)) {
      views(ws, in, plans, layout);
      return;
    }
    Batch& out = add_output(ws, in.dtype(), shapes(plans), layout);
    const size_t es = dtype_size(in.dtype());
    std::vector<kernels::StridedCopy> all;
    for (int i = 0; i < in.size(); ++i)
      for (const auto& c :
           kernels::subscript_copies(plans[size_t(i)].plan, in.data(i), out.data(i), es))
        all.push_back(c);
    run_copies(*this, ws, all, es);
  }
};
#endif

// Passes its input through (a view) after checking it has `num_subscripts` axes: what `x[:, :]`
// builds, where nothing is picked.
class SubscriptDimCheck final : public Operator {
 public:
  explicit SubscriptDimCheck(const OpSpec& spec)
      : Operator(spec), declared_(spec.arg<int64_t>("num_subscripts")) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    STOKER_ENFORCE(n == 0 || in.sample_ndim() >= declared_, IndexError,
                   "_subscript_dim_check: too many indices (", declared_, ") for a ",
                   in.sample_ndim(), "-D tensor");
    ws.outputs.push_back(in.select([n] {
      std::vector<int> all(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) all[size_t(i)] = i;
      return all;
    }()));
  }

 private:
  int64_t declared_;
};

}  // namespace

OpSchema tensor_subscript_schema() {
  std::vector<ArgSchema> args;
  for (int k = 0; k < kMaxSubscripts; ++k) {
    const std::string n = std::to_string(k);
    args.push_back(optional_arg("at_" + n, ArgType::kInt, "Index of axis " + n + "."));
    args.push_back(optional_arg("lo_" + n, ArgType::kInt, "Range start of axis " + n + "."));
    args.push_back(optional_arg("hi_" + n, ArgType::kInt, "Range end of axis " + n + "."));
    args.push_back(optional_arg("step_" + n, ArgType::kInt, "Range step of axis " + n + "."));
  }
  args.push_back(optional_arg("num_subscripts", ArgType::kInt,
                              "Subscripts written (full ranges included): the input must have "
                              "at least as many axes.",
                              false));
  args.push_back({"new_axes", ArgType::kIntList,
                  "Positions in the result of new axes of extent 1 (stoker.newaxis).",
                  std::vector<int64_t>{}});
  args.push_back({"new_axis_names", ArgType::kString,
                  "Layout names of the new axes (one per axis), or none.", std::string()});
  return {
      .name = "_tensor_subscript",
      .doc =
          "NumPy-like indexing (DataNode.__getitem__, as DALI's): per axis k an index at_k "
          "(the axis is dropped; negative counts from the end; out of range is an error) or a "
          "range lo_k:hi_k:step_k (Python's slice rules: bounds clamped, negative steps go "
          "backwards), each a constant or a per-sample integer scalar; axes past the "
          "subscripts are kept whole. new_axes inserts axes of extent 1. The result views the "
          "input when the picked elements are one run of it, else it is a strided copy.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = std::move(args),
      .make_cpu = [](const OpSpec& s) { return std::make_unique<TensorSubscript>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<TensorSubscriptGpu>(s); },
#endif
      .example = OpExample{.args = {{"at_0", int64_t{0}}}},
  };
}

OpSchema subscript_dim_check_schema() {
  return {
      .name = "_subscript_dim_check",
      .doc =
          "Passes the input through (a view) after checking it has at least `num_subscripts` "
          "axes: what `x[:, :]` builds (as DALI's).",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"num_subscripts", ArgType::kInt, "Subscripts written.", std::nullopt}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<SubscriptDimCheck>(s); },
      .make_gpu = [](const OpSpec& s) { return std::make_unique<SubscriptDimCheck>(s); },
      .example = OpExample{.args = {{"num_subscripts", int64_t{1}}}},
  };
}

}  // namespace stoker::ops
