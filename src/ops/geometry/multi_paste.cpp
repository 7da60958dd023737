#include "stoker/ops/geometry/multi_paste.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stoker/kernels/geometry/multi_paste.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::MultiPasteSample;
using kernels::PasteRegion;

// The regions of every canvas (MultiPasteSample::first/count index `regions`), planned on the
// host from the arguments exactly as DALI does.
struct Plan {
  std::vector<MultiPasteSample> samples;
  std::vector<PasteRegion> regions;
  std::vector<TensorShape> shapes;
  std::vector<std::string> sources;  // per canvas: its regions' sources, joined by ';' (DALI's)
};

class MultiPaste : public Operator {
 public:
  explicit MultiPaste(const OpSpec& spec) : Operator(spec) {
    for (auto [a, b] : {std::pair{"in_anchors", "in_anchors_rel"},
                        {"shapes", "shapes_rel"},
                        {"out_anchors", "out_anchors_rel"}}) {
      STOKER_ENFORCE(!(spec.given(a) && spec.given(b)), ValueError, "multi_paste: give ", a, " or ",
                     b, ", not both");
    }
  }

  void run(Workspace& ws) override {
    const Plan p = plan(ws);
    Batch& out = add_output(ws, out_dtype(ws), p.shapes, TensorLayout("HWC"));
    for (int i = 0; i < out.size(); ++i) out.set_source_info(i, p.sources[size_t(i)]);
    const DType in_type = ws.input(0).dtype();
    for_each_sample(ws, int(p.samples.size()), [&](int i, int) {
      MultiPasteSample s = p.samples[size_t(i)];
      s.out = out.data(i);
      visit_types(in_type, [&](auto in_tag) {
        visit_types(out.dtype(), [&](auto out_tag) {
          using In = typename decltype(in_tag)::type;
          using Out = typename decltype(out_tag)::type;
          kernels::multi_paste_cpu<Out, In>(s, p.regions.data());
        });
      });
    });
  }

 protected:
  template <typename F>
  static void visit_types(DType d, F&& f) {
    visit_dtype<DType::kU8, DType::kU16, DType::kI16, DType::kI32, DType::kF32>(d, "multi_paste",
                                                                                f);
  }

  DType out_dtype(const Workspace& ws) const {
    return spec_.given("dtype") ? dtype_from_name(spec_.arg<std::string>("dtype"))
                                : ws.input(0).dtype();
  }

  Plan plan(const Workspace& ws) const {
    const int inputs = int(ws.inputs.size());
    const Batch& first = ws.input(0);
    const int n = first.size();
    const bool by_ids = spec_.given("in_ids");
    STOKER_ENFORCE(!by_ids || inputs == 1, ValueError,
                   "multi_paste: with in_ids, give exactly one input batch; got ", inputs);
    for (int k = 0; k < inputs; ++k) {
      const Batch& b = ws.input(k);
      STOKER_ENFORCE(b.dtype() == first.dtype(), TypeError,
                     "multi_paste: every input needs the same dtype; input 0 is ",
                     dtype_name(first.dtype()), ", input ", k, " is ", dtype_name(b.dtype()));
      STOKER_ENFORCE(b.size() == n, ValueError, "multi_paste: input ", k, " has ", b.size(),
                     " samples, input 0 has ", n);
      for (int i = 0; i < n; ++i) image_shape(b, i, "multi_paste");
    }
    visit_types(first.dtype(), [](auto) {});
    visit_types(out_dtype(ws), [](auto) {});
    Plan p;
    for (int i = 0; i < n; ++i) {
      // The images pasted onto canvas i: (input, sample) pairs.
      std::vector<std::pair<int, int>> from;
      if (by_ids) {
        for (double v : list_arg(ws, "in_ids", i)) {
          STOKER_ENFORCE(v >= 0 && v < n, ValueError, "multi_paste: sample ", i, ": in_ids ", v,
                         " is not a sample of the batch (", n, " samples)");
          from.emplace_back(0, int(v));
        }
      } else {
        for (int k = 0; k < inputs; ++k) from.emplace_back(k, i);
      }
      const int64_t count = int64_t(from.size());
      int64_t channels = first.shape(i)[2];  // no region: the sample's own channels, as DALI
      for (size_t k = 0; k < from.size(); ++k) {
        const int64_t c = ws.input(from[k].first).shape(from[k].second)[2];
        STOKER_ENFORCE(k == 0 || c == channels, ValueError, "multi_paste: sample ", i,
                       ": every region needs the same number of channels; got ", channels, " and ",
                       c);
        channels = c;
      }
      int64_t oh, ow;
      if (spec_.given("output_size")) {
        const auto size = list_arg(ws, "output_size", i);
        STOKER_ENFORCE(size.size() >= 2 && size[0] >= 0 && size[1] >= 0, ValueError,
                       "multi_paste: sample ", i, ": output_size must be (H, W) >= 0");
        check_arg_elements("multi_paste", "output_size", std::vector<double>{size[0], size[1]}, i);
        oh = int64_t(size[0]), ow = int64_t(size[1]);
      } else {
        for (int k = 0; k < inputs; ++k) {
          const auto& s = ws.input(k).shape(i);
          STOKER_ENFORCE(s[0] == first.shape(0)[0] && s[1] == first.shape(0)[1], ValueError,
                         "multi_paste: without output_size every input image must have the same "
                         "size; got ",
                         first.shape(0).to_string(), " and ", s.to_string(), " (input ", k,
                         ", sample ", i, ")");
        }
        oh = first.shape(0)[0], ow = first.shape(0)[1];
      }
      auto pairs = [&](const char* abs, const char* rel) {
        const bool is_abs = spec_.given(abs);
        const char* name = is_abs ? abs : rel;
        std::vector<double> v;
        if (!spec_.given(name)) return std::pair{v, false};
        v = list_arg(ws, name, i);
        STOKER_ENFORCE(int64_t(v.size()) == 2 * count, ValueError, "multi_paste: sample ", i, ": ",
                       name, " needs 2 values (H, W) for each of the ", count, " regions, got ",
                       v.size());
        if (!is_abs) {
          for (double f : v) {
            STOKER_ENFORCE(f >= 0 && f <= 1, ValueError, "multi_paste: sample ", i, ": ", name,
                           " must be in [0, 1], got ", f);
          }
        }
        return std::pair{v, is_abs};
      };
      const auto [in_anchor, in_abs] = pairs("in_anchors", "in_anchors_rel");
      const auto [shape, shape_abs] = pairs("shapes", "shapes_rel");
      const auto [out_anchor, out_abs] = pairs("out_anchors", "out_anchors_rel");
      MultiPasteSample s{nullptr, oh, ow, channels, int32_t(p.regions.size()), int32_t(count)};
      std::string sources;
      for (int64_t k = 0; k < count; ++k) {
        const Batch& src = ws.input(from[size_t(k)].first);
        const int j = from[size_t(k)].second;
        const int64_t ext[2] = {src.shape(j)[0], src.shape(j)[1]};
        const int64_t out_ext[2] = {oh, ow};
        int64_t ia[2] = {0, 0}, sh[2] = {ext[0], ext[1]}, oa[2] = {0, 0};
        for (int d = 0; d < 2; ++d) {
          const size_t at = size_t(2 * k + d);
          // Relative anchors round down and relative shapes up (DALI's: 0.5 and 0.5 fit).
          if (!in_anchor.empty())
            ia[d] = in_abs ? int64_t(in_anchor[at])
                           : int64_t(std::floor(float(ext[d]) * float(in_anchor[at])));
          if (!shape.empty())
            sh[d] = shape_abs ? int64_t(shape[at])
                              : int64_t(std::ceil(float(ext[d]) * float(shape[at])));
          else
            sh[d] = ext[d] - ia[d];
          if (!out_anchor.empty())
            oa[d] = out_abs ? int64_t(out_anchor[at])
                            : int64_t(std::floor(float(out_ext[d]) * float(out_anchor[at])));
          STOKER_ENFORCE(ia[d] >= 0 && sh[d] >= 0 && ia[d] + sh[d] <= ext[d], ValueError,
                         "multi_paste: sample ", i, ", region ", k, ": the region at (", ia[0],
                         ", ", ia[1], ") of shape (", sh[0], ", ", sh[1],
                         ") must lie inside its input image (", ext[0], ", ", ext[1], ")");
          STOKER_ENFORCE(oa[d] >= 0 && oa[d] + sh[d] <= out_ext[d], ValueError,
                         "multi_paste: sample ", i, ", region ", k, ": pasted at (", oa[0], ", ",
                         oa[1], ") with shape (", sh[0], ", ", sh[1],
                         ") it must lie inside the output (", oh, ", ", ow, ")");
        }
        p.regions.push_back({src.data(j), ext[1], ia[0], ia[1], oa[0], oa[1], sh[0], sh[1]});
        if (!src.source_info(j).empty())
          sources += (sources.empty() ? "" : ";") + src.source_info(j);
      }
      p.sources.push_back(sources);
      p.samples.push_back(s);
      p.shapes.push_back(TensorShape{oh, ow, channels});
    }
    return p;
  }
};

#ifdef STOKER_HAVE_CUDA
// One launch: each canvas pixel takes the last region covering it (or zero).
class MultiPasteGpu final : public MultiPaste {
 public:
  using MultiPaste::MultiPaste;
  void run(Workspace& ws) override {
    Plan p = plan(ws);
    Batch& out = add_output(ws, out_dtype(ws), p.shapes, TensorLayout("HWC"));
    for (int i = 0; i < out.size(); ++i) out.set_source_info(i, p.sources[size_t(i)]);
    int64_t most = 0;
    for (size_t i = 0; i < p.samples.size(); ++i) {
      p.samples[i].out = out.data(int(i));
      most = std::max(most, p.samples[i].h * p.samples[i].w);
    }
    if (p.samples.empty() || most == 0) return;
    auto samples = upload(ws, p.samples);
    std::shared_ptr<Buffer> regions = p.regions.empty() ? nullptr : upload(ws, p.regions);
    cuda_check(kernels::multi_paste_gpu(
                   static_cast<const MultiPasteSample*>(samples->data()),
                   regions ? static_cast<const PasteRegion*>(regions->data()) : nullptr,
                   int(p.samples.size()), most, ws.input(0).dtype(), out.dtype(), ws.stream),
               "multi_paste (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema multi_paste_schema() {
  return {
      .name = "multi_paste",
      .doc =
          "Pastes regions of HWC images onto zeroed canvases, in order (a later region covers an "
          "earlier one), as DALI's multi_paste. With `in_ids`, canvas i takes the samples "
          "in_ids[i] of its one input; without, sample i of every input. Each region is given "
          "per canvas as a (regions, 2) tensor of (H, W) pairs, absolute or relative (*_rel, in "
          "[0, 1]: anchors round down, shapes up): its anchor in its image (default 0), its "
          "shape (default: to the image's end) and its anchor on the canvas (default 0); it must "
          "lie inside both. The canvas is `output_size`, or the inputs' common size. uint8, "
          "uint16, int16, int32 or float32, converted to `dtype` (rounded, saturated).",
      .inputs = {"images"},
      .variadic_inputs = true,
      .outputs = {"images"},
      .args =
          {
              optional_arg("in_ids", ArgType::kIntList,
                           "The batch's samples pasted onto each canvas."),
              optional_arg("in_anchors", ArgType::kIntList, "Regions' anchors in their images."),
              optional_arg("in_anchors_rel", ArgType::kFloatList,
                           "The same, relative to the image."),
              optional_arg("shapes", ArgType::kIntList, "Regions' shapes."),
              optional_arg("shapes_rel", ArgType::kFloatList, "The same, relative to the image."),
              optional_arg("out_anchors", ArgType::kIntList, "Regions' anchors on the canvas."),
              optional_arg("out_anchors_rel", ArgType::kFloatList,
                           "The same, relative to the canvas."),
              optional_arg("output_size", ArgType::kIntList, "The canvas (H, W)."),
              optional_arg("dtype", ArgType::kDType, "The output's type (default: the input's).",
                           false),
          },
      .make_cpu = [](const OpSpec& s) { return std::make_unique<MultiPaste>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<MultiPasteGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = "HWC"},
  };
}

}  // namespace stoker::ops
