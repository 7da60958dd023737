#include "stoker/ops/tensor/transpose.hpp"

#include <algorithm>

#include "stoker/kernels/tensor/tensor_cpu.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"
#include "stoker/ops/tensor/tensor_util.hpp"

namespace stoker::ops {
namespace {

class Transpose : public Operator {
 public:
  explicit Transpose(const OpSpec& spec) : Operator(spec) {
    for (auto p : spec.arg<std::vector<int64_t>>("perm")) perm_.push_back(int(p));
    auto sorted = perm_;
    std::sort(sorted.begin(), sorted.end());
    for (size_t k = 0; k < sorted.size(); ++k)
      STOKER_ENFORCE(sorted[k] == int(k), ValueError, "transpose: perm ",
                     format_arg_value(spec.arg<std::vector<int64_t>>("perm")),
                     " is not a permutation of 0..", sorted.size() - 1);
  }
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), shapes(in), layout(in));
    const size_t es = dtype_size(in.dtype());
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::transpose_cpu(static_cast<const uint8_t*>(in.sample(i).data), dims_of(in.shape(i)),
                             perm_, es, static_cast<uint8_t*>(out.sample(i).data));
    });
  }

 protected:
  std::vector<TensorShape> shapes(const Batch& in) const {
    std::vector<TensorShape> shapes;
    for (int i = 0; i < in.size(); ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == int(perm_.size()), ValueError, "transpose: perm has ",
                     perm_.size(), " axes but sample ", i, " has shape ", in.shape(i).to_string());
      std::vector<int64_t> d;
      for (int p : perm_) d.push_back(in.shape(i)[p]);
      shapes.emplace_back(d);
    }
    return shapes;
  }
  std::string layout(const Batch& in) const {
    std::string layout;
    if (spec_.has_arg("output_layout")) {
      layout = spec_.arg<std::string>("output_layout");
    } else if (spec_.arg<bool>("transpose_layout") && in.layout().str().size() == perm_.size()) {
      for (int p : perm_) layout += in.layout().str()[size_t(p)];
    }
    return layout;
  }

  std::vector<int> perm_;
};

#ifdef STOKER_HAVE_CUDA
class TransposeGpu final : public Transpose {
 public:
  using Transpose::Transpose;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), shapes(in), layout(in));
    std::vector<kernels::StridedCopy> d;
    for (int i = 0; i < in.size(); ++i) {
      const auto od = dims_of(out.shape(i));
      const auto ist = dense_strides(dims_of(in.shape(i)));
      std::vector<int64_t> in_stride;
      for (int p : perm_) in_stride.push_back(ist[size_t(p)]);
      d.push_back(
          copy_desc(in.data(i), out.data(i), od, dense_strides(od), in_stride, od, "transpose"));
    }
    run_copies(*this, ws, d, dtype_size(in.dtype()));
  }
};
#endif

}  // namespace

OpSchema transpose_schema() {
  ArgSchema out_layout{"output_layout", ArgType::kString, "The output's layout.", std::nullopt};
  out_layout.optional = true;
  return {
      .name = "transpose",
      .doc =
          "Permutes the axes: output axis k is input axis perm[k]. The layout is permuted "
          "too (transpose_layout) unless output_layout is given.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"perm", ArgType::kIntList, "The permutation."},
               {"transpose_layout", ArgType::kBool, "Permute the layout's letters.", true},
               out_layout},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Transpose>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<TransposeGpu>(s); },
#endif
      .example = OpExample{.args = {{"perm", std::vector<int64_t>{2, 0, 1}}}},
  };
}

}  // namespace stoker::ops
