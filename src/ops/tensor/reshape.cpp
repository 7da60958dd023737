#include "stoker/ops/tensor/reshape.hpp"

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class Reshape final : public Operator {
 public:
  explicit Reshape(const OpSpec& spec) : Operator(spec) {
    STOKER_ENFORCE(
        spec.has_arg("shape") != spec.has_arg("rel_shape") || spec.has_arg("shape") == false,
        ValueError, "reshape: give `shape` or `rel_shape`, not both");
  }
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const bool rel = spec_.has_arg("rel_shape");
    const bool given = rel || spec_.has_arg("shape") || ws.arg_inputs.count("shape");
    STOKER_ENFORCE(given, ValueError, "reshape: give `shape` or `rel_shape`");
    ws.outputs.push_back(Batch::with_samples(n, in.dtype(), layout_for(in), in.memory()));
    Batch& out = ws.outputs.back();
    out.copy_source_info(in);
    for (int i = 0; i < n; ++i) {
      const auto& s = in.shape(i);
      std::vector<int64_t> dims;
      if (rel) {
        // out[k] = in[k] * rel[k] for the first rel.size() axes; one negative entry takes the
        // rest of the volume (DALI: [480, 640, 3] with [0.5, -1] gives [240, 3840]).
        auto r = spec_.arg<std::vector<double>>("rel_shape");
        STOKER_ENFORCE(int(r.size()) <= s.ndim(), ValueError, "reshape: rel_shape has ", r.size(),
                       " values for sample ", i, " of shape ", s.to_string());
        for (size_t k = 0; k < r.size(); ++k)
          dims.push_back(r[k] < 0 ? -1 : std::llround(r[k] * double(s[int(k)])));
      } else {
        for (double v : list_arg(ws, "shape", i)) dims.push_back(int64_t(v));
      }
      STOKER_ENFORCE(dims.size() <= size_t(kMaxNdim), ValueError, "reshape: ", dims.size(),
                     " dimensions asked for; at most ", kMaxNdim, " are supported");
      // One -1 takes what the others leave.
      int64_t known = 1;
      int wild = -1;
      for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == -1) {
          STOKER_ENFORCE(wild < 0, ValueError, "reshape: more than one -1 in the shape");
          wild = int(k);
        } else {
          STOKER_ENFORCE(dims[k] >= 0, ValueError, "reshape: negative extent ", dims[k]);
          known *= dims[k];
        }
      }
      if (wild >= 0) {
        STOKER_ENFORCE(known > 0 && s.volume() % known == 0, ValueError,
                       "reshape: cannot infer "
                       "-1 for sample ",
                       i, " of shape ", s.to_string());
        dims[size_t(wild)] = s.volume() / known;
      }
      TensorShape shape(dims);
      STOKER_ENFORCE(shape.volume() == s.volume(), ValueError, "reshape: sample ", i, " of shape ",
                     s.to_string(), " (", s.volume(), " elements) cannot become ",
                     shape.to_string(), " (", shape.volume(), ")");
      // No copy: the output views the input's memory.
      out.set_sample(i, in.owner(i), const_cast<void*>(in.sample(i).data), shape);
    }
  }

 private:
  TensorLayout layout_for(const Batch& in) const {
    if (spec_.has_arg("layout")) return spec_.arg<std::string>("layout");
    return {};  // the axes changed: the old names no longer apply
    (void)in;
  }
};

}  // namespace

OpSchema reshape_schema() {
  ArgSchema shape{"shape",
                  ArgType::kIntList,
                  "The new shape (one -1 is inferred); a per-sample tensor allowed.",
                  std::nullopt,
                  true,
                  true};
  ArgSchema rel{"rel_shape",
                ArgType::kFloatList,
                "The new shape as multiples of the input's first extents (out[k] = in[k] * "
                "rel[k]); one negative value takes what the volume leaves, as in DALI.",
                std::nullopt,
                false,
                true};
  ArgSchema layout{
      "layout", ArgType::kString, "The output's layout (default: none).", std::nullopt, false,
      true};
  return {
      .name = "reshape",
      .doc =
          "Gives each sample a new shape with the same number of elements, without copying "
          "(the output views the input's memory).",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {shape, rel, layout},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      // No data moves: the same operator views device memory as well.
      .make_gpu = [](const OpSpec& s) { return std::make_unique<Reshape>(s); },
      .example = OpExample{.args = {{"shape", std::vector<int64_t>{-1}}}},
  };
}

}  // namespace stoker::ops
