#include "stoker/ops/signal/mfcc.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "stoker/kernels/signal/dct.hpp"
#include "stoker/kernels/signal/signal_gpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kOp = "mfcc";

class Mfcc : public Operator {
 public:
  explicit Mfcc(const OpSpec& spec)
      : Operator(spec),
        n_mfcc_(spec.arg<int64_t>("n_mfcc")),
        type_(int(spec.arg<int64_t>("dct_type"))),
        normalize_(spec.arg<bool>("normalize")),
        axis_(spec.arg<int64_t>("axis")),
        lifter_(float(spec.arg<double>("lifter"))) {
    STOKER_ENFORCE(n_mfcc_ > 0, ValueError, kOp, ": n_mfcc must be positive, got ", n_mfcc_);
    STOKER_ENFORCE(type_ >= 1 && type_ <= 4, ValueError, kOp,
                   ": dct_type must be 1, 2, 3 or 4, got ", type_);
    STOKER_ENFORCE(!(normalize_ && type_ == 1), ValueError, kOp,
                   ": normalize is not supported for dct_type 1");
    STOKER_ENFORCE(axis_ >= 0, ValueError, kOp, ": axis must not be negative, got ", axis_);
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Plan plan = make_plan(in);
    Batch& out = add_output(ws, DType::kF32, std::move(plan.shapes), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      const Line line = line_of(in.shape(i));
      kernels::dct_cpu(in.data_as<const float>(i), line.outer, line.n, line.inner,
                       plan.tables.at(line.n).data(), std::min(n_mfcc_, line.n),
                       plan.lifter.empty() ? nullptr : plan.lifter.data(), out.data_as<float>(i));
    });
  }

 protected:
  // The checks, the output shapes, the DCT tables (one per length of the axis) and the
  // liftering weights (none without lifter).
  struct Plan {
    std::vector<TensorShape> shapes;
    std::map<int64_t, std::vector<float>> tables;
    std::vector<float> lifter;
  };

  // A sample as (outer, n, inner), transformed along n.
  struct Line {
    int64_t outer = 1, n = 0, inner = 1;
  };
  Line line_of(const TensorShape& s) const {
    Line l;
    const int axis = int(axis_);
    for (int d = 0; d < axis; ++d) l.outer *= s[d];
    for (int d = axis + 1; d < s.ndim(); ++d) l.inner *= s[d];
    l.n = s[axis];
    return l;
  }

  Plan make_plan(const Batch& in) const {
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError, kOp,
                   ": the mel spectrogram must be float32, got ", dtype_name(in.dtype()));
    const int n = in.size();
    std::vector<TensorShape> shapes;
    std::map<int64_t, std::vector<float>> tables;  // by the axis' length
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      TensorShape s = in.shape(i);
      STOKER_ENFORCE(s.ndim() >= 2 && s.ndim() <= 4, ValueError, kOp, ": sample ", i,
                     " must have 2 to 4 dimensions, got ", s.to_string());
      STOKER_ENFORCE(axis_ < s.ndim(), ValueError, kOp, ": axis ", axis_,
                     " is out of range for sample ", i, " of shape ", s.to_string());
      const int64_t len = s[int(axis_)];
      STOKER_ENFORCE(type_ != 1 || len > 1, ValueError, kOp,
                     ": dct_type 1 needs more than one "
                     "value along axis ",
                     axis_, ", sample ", i, " has ", len);
      const int64_t ndct = std::min(n_mfcc_, len);
      // The DCT's table is ndct x len values, which the input does not bound.
      check_arg_elements(kOp, "n_mfcc (the DCT table: coefficients x the axis' length)",
                         std::vector<int64_t>{ndct, len}, i);
      s[int(axis_)] = ndct;
      shapes.push_back(std::move(s));
      most = std::max(most, ndct);
    }
    for (int i = 0; i < n; ++i) {
      const int64_t len = in.shape(i)[int(axis_)];
      const int64_t ndct = std::min(n_mfcc_, len);
      if (tables.count(len)) continue;
      std::vector<float> table(size_t(ndct * len));
      kernels::dct_table(table.data(), len, ndct, type_, normalize_);
      tables.emplace(len, std::move(table));
    }
    std::vector<float> lifter;
    if (lifter_ != 0.f) {
      lifter.resize(static_cast<size_t>(most));
      kernels::lifter_coefficients(lifter.data(), most, lifter_);
    }
    return {std::move(shapes), std::move(tables), std::move(lifter)};
  }

  int64_t n_mfcc_;
  int type_;
  bool normalize_;
  int64_t axis_;
  float lifter_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the tables (built on the host as for the cpu backend) and the liftering
// weights in one upload, one launch for the batch.
class MfccGpu final : public Mfcc {
 public:
  using Mfcc::Mfcc;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Plan plan = make_plan(in);
    Batch& out = add_output(ws, DType::kF32, std::move(plan.shapes), in.layout());
    // One float array: the lifter's weights, then each table.
    std::vector<float> floats(plan.lifter);
    std::map<int64_t, size_t> table_at;
    for (const auto& [len, table] : plan.tables) {
      table_at[len] = floats.size();
      floats.insert(floats.end(), table.begin(), table.end());
    }
    std::vector<kernels::DctGpuSample> desc;
    std::vector<size_t> offsets;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      const Line l = line_of(in.shape(i));
      const int64_t ndct = std::min(n_mfcc_, l.n);
      if (l.outer * ndct * l.inner == 0) continue;
      desc.push_back({in.data_as<const float>(i), out.data_as<float>(i), l.outer, l.n, l.inner,
                      ndct, nullptr});
      offsets.push_back(table_at.at(l.n));
      most = std::max(most, l.outer * ndct * l.inner);
    }
    if (desc.empty()) return;
    auto tables = upload(ws, floats);
    const float* base = static_cast<const float*>(tables->data());
    for (size_t k = 0; k < desc.size(); ++k) desc[k].table = base + offsets[k];
    auto device = upload(ws, desc);
    cuda_check(
        kernels::dct_gpu(static_cast<const kernels::DctGpuSample*>(device->data()),
                         int(desc.size()), most, plan.lifter.empty() ? nullptr : base, ws.stream),
        "mfcc (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema mfcc_schema() {
  return {
      .name = "mfcc",
      .doc =
          "Mel-frequency cepstral coefficients of a mel spectrogram (as DALI): the DCT of "
          "`dct_type` (1 to 4, Wikipedia's definitions, unscaled; normalize: orthonormal, "
          "types 2 to 4) along `axis`, its first n_mfcc coefficients (at most the axis' "
          "length), then with lifter > 0 coefficient i times 1 + (lifter / 2) sin(pi (i + 1) / "
          "lifter). float32 samples of 2 to 4 dimensions; the layout is the input's. The gpu "
          "backend gives the cpu backend's values bit for bit.",
      .inputs = {"mel_spectrogram"},
      .outputs = {"mfcc"},
      .args = {{"n_mfcc", ArgType::kInt, "The number of coefficients.", int64_t{20}},
               {"dct_type", ArgType::kInt, "The DCT's type: 1, 2, 3 or 4.", int64_t{2}},
               {"normalize", ArgType::kBool, "An orthonormal DCT (not for type 1).", false},
               {"axis", ArgType::kInt, "The axis transformed (the mel axis).", int64_t{0}},
               {"lifter", ArgType::kFloat, "The liftering coefficient (0: none).", 0.0}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Mfcc>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<MfccGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
