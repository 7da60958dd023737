#include "stoker/ops/tensor/join.hpp"

#include <algorithm>
#include <vector>

#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"

namespace stoker::ops {
namespace {

// cat (stack = false) joins the inputs along an existing axis; stack along a new one.
class Join : public Operator {
 public:
  Join(const OpSpec& spec, bool stack) : Operator(spec), stack_(stack) {}
  void run(Workspace& ws) override {
    const Batch& first = ws.input(0);
    const int n = first.size();
    const size_t k_inputs = ws.inputs.size();
    const int64_t axis = spec_.arg<int64_t>("axis");
    std::string layout;
    auto shapes = plan(ws, layout);
    Batch& out = add_output(ws, first.dtype(), shapes, layout);
    const size_t es = dtype_size(first.dtype());
    for_each_sample(ws, n, [&](int i, int) {
      // Every input is `outer` blocks; block b of the output is block b of each input in turn.
      const auto& s0 = first.shape(i);
      int64_t outer = 1;
      for (int a = 0; a < int(axis); ++a) outer *= s0[a];
      std::vector<const uint8_t*> src(k_inputs);
      std::vector<size_t> block(k_inputs);
      for (size_t k = 0; k < k_inputs; ++k) {
        const Batch& in = ws.input(int(k));
        src[k] = static_cast<const uint8_t*>(in.sample(i).data);
        block[k] = size_t(in.shape(i).volume() / std::max<int64_t>(outer, 1)) * es;
      }
      kernels::join_cpu(src.data(), block.data(), k_inputs, outer,
                        static_cast<uint8_t*>(out.sample(i).data));
    });
  }

 protected:
  // Output shapes (and `layout`); validates dtypes, counts and shapes.
  std::vector<TensorShape> plan(const Workspace& ws, std::string& layout) const {
    const auto& name = spec_.schema->name;
    const Batch& first = ws.input(0);
    const int n = first.size();
    const size_t k_inputs = ws.inputs.size();
    for (size_t k = 1; k < k_inputs; ++k) {
      STOKER_ENFORCE(ws.input(int(k)).dtype() == first.dtype(), TypeError, name, ": input ", k,
                     " is ", dtype_name(ws.input(int(k)).dtype()), ", input 0 is ",
                     dtype_name(first.dtype()));
      STOKER_ENFORCE(ws.input(int(k)).size() == n, ValueError, name, ": input ", k, " has ",
                     ws.input(int(k)).size(), " samples, input 0 has ", n);
    }
    const int64_t axis = spec_.arg<int64_t>("axis");
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) {
      const auto& s0 = first.shape(i);
      const int nd = s0.ndim();
      STOKER_ENFORCE(axis >= 0 && axis < (stack_ ? nd + 1 : nd), ValueError, name, ": axis ", axis,
                     " is out of range for samples of shape ", s0.to_string());
      int64_t joined = 0;
      for (size_t k = 0; k < k_inputs; ++k) {
        const auto& s = ws.input(int(k)).shape(i);
        bool same = s.ndim() == nd;  // cat: every extent but the axis's; stack: all of them
        for (int a = 0; same && a < nd; ++a) same = s[a] == s0[a] || (!stack_ && a == axis);
        STOKER_ENFORCE(same, ValueError, name, ": sample ", i, " of input ", k, " has shape ",
                       s.to_string(), ", input 0's has ", s0.to_string(),
                       stack_ ? " (stack needs equal shapes)" : " (only the axis may differ)");
        joined += stack_ ? 1 : s[int(axis)];
      }
      auto d = dims_of(s0);
      if (stack_)
        d.insert(d.begin() + axis, int64_t(k_inputs));
      else
        d[size_t(axis)] = joined;
      shapes.emplace_back(d);
    }
    layout = first.layout().str();
    if (stack_ && !layout.empty())
      layout = spec_.has_arg("axis_name")
                   ? layout.insert(size_t(axis), spec_.arg<std::string>("axis_name"))
                   : std::string();
    return shapes;
  }

  bool stack_;
};

#ifdef STOKER_HAVE_CUDA
class JoinGpu final : public Join {
 public:
  using Join::Join;
  void run(Workspace& ws) override {
    const Batch& first = ws.input(0);
    std::string layout;
    auto shapes = plan(ws, layout);
    Batch& out = add_output(ws, first.dtype(), shapes, layout);
    const int64_t axis = spec_.arg<int64_t>("axis");
    const size_t es = dtype_size(first.dtype());
    std::vector<kernels::StridedCopy> d;
    for (int i = 0; i < first.size(); ++i) {
      const auto od = dims_of(out.shape(i));
      const auto ost = dense_strides(od);
      int64_t offset = 0;  // along the axis
      for (size_t k = 0; k < ws.inputs.size(); ++k) {
        const Batch& src = ws.input(int(k));
        auto id = dims_of(src.shape(i));
        auto ist = dense_strides(id);
        if (stack_) {  // the new axis has extent 1 in each input
          id.insert(id.begin() + axis, 1);
          ist.insert(ist.begin() + axis, 0);
        }
        auto* dst = static_cast<uint8_t*>(out.data(i)) + size_t(offset * ost[size_t(axis)]) * es;
        d.push_back(copy_desc(src.data(i), dst, id, ost, ist, id, spec_.schema->name));
        offset += id[size_t(axis)];
      }
    }
    run_copies(*this, ws, d, es);
  }
};
#endif

}  // namespace

OpSchema cat_schema() {
  return {
      .name = "cat",
      .doc = "Joins the inputs' samples along `axis`; their other extents must agree.",
      .inputs = {"input"},
      .variadic_inputs = true,
      .outputs = {"output"},
      .args = {{"axis", ArgType::kInt, "The axis to join along.", int64_t{0}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Join>(s, false); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<JoinGpu>(s, false); },
#endif
      .example = OpExample{},
  };
}

OpSchema stack_schema() {
  ArgSchema axis_name{
      "axis_name", ArgType::kString, "Layout letter of the new axis.", std::nullopt, false, true};
  return {
      .name = "stack",
      .doc = "Stacks the inputs' samples (equal shapes) along a new axis at `axis`.",
      .inputs = {"input"},
      .variadic_inputs = true,
      .outputs = {"output"},
      .args = {{"axis", ArgType::kInt, "Position of the new axis.", int64_t{0}}, axis_name},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Join>(s, true); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<JoinGpu>(s, true); },
#endif
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
