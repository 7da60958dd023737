#include "stoker/ops/filter/rank_filters.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/kernels/filter/rank_filter.hpp"
#include "stoker/kernels/filter/rank_filter_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// The largest window or mask extent: a window's values are gathered per output value (the
// median's scratch holds one window), so the limit bounds memory whatever the argument says.
constexpr int kMaxWindow = 255;

kernels::Border parse_border(const std::string& op, const std::string& b) {
  // CV-CUDA's names, as DALI's nvcvop::GetBorderMode (case-sensitive).
  if (b == "constant") return kernels::Border::kConstant;
  if (b == "replicate") return kernels::Border::kClamp;
  if (b == "reflect") return kernels::Border::kReflect1001;
  if (b == "reflect_101") return kernels::Border::kReflect101;
  if (b == "wrap") return kernels::Border::kWrap;
  throw ValueError(detail::concat(op, ": border_mode must be constant, replicate, reflect, ",
                                  "reflect_101 or wrap, got '", b, "'"));
}

class RankFilter : public Operator {
 public:
  RankFilter(const OpSpec& spec, kernels::RankOp op) : Operator(spec), op_(op) {
    name_ = spec.schema->name;  // experimental.median_blur, .dilate, .erode
    if (op != kernels::RankOp::kMedian) {
      border_ = parse_border(name_, spec.arg<std::string>("border_mode"));
      iterations_ = spec.arg<int64_t>("iterations");
      STOKER_ENFORCE(iterations_ >= 1 && iterations_ <= kMaxWindow, ValueError, name_,
                     ": iterations must be between 1 and ", kMaxWindow, ", got ", iterations_);
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const auto shapes = make_plan(ws);
    Batch& out = add_output(ws, in.dtype(), input_shapes(in), in.layout());
    {
      std::lock_guard lock(mutex_);
      if (int(keys_.size()) < ws.pool->num_threads()) keys_.resize(size_t(ws.pool->num_threads()));
    }
    for_each_sample(ws, in.size(), [&](int i, int thread) {
      visit_types(in.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        // The iterations' second buffer, per sample (only with iterations >= 2).
        std::vector<T> tmp;
        kernels::rank_filter_cpu(in.data_as<const T>(i), out.data_as<T>(i), shapes[size_t(i)], op_,
                                 int(iterations_), tmp, keys_[size_t(thread)]);
      });
    });
  }

 protected:
  template <typename F>
  void visit_types(DType d, F&& f) const {
    visit_dtype<DType::kU8, DType::kU16, DType::kF32>(d, name_ + " input", std::forward<F>(f));
  }

  static std::vector<TensorShape> input_shapes(const Batch& in) {
    std::vector<TensorShape> s;
    for (int i = 0; i < in.size(); ++i) s.push_back(in.shape(i));
    return s;
  }

  // Two values (x, y: CV-CUDA's order) from one or two given, for sample i.
  std::array<int64_t, 2> pair_arg(const Workspace& ws, const char* arg, int i) const {
    auto v = list_arg(ws, arg, i);
    STOKER_ENFORCE(v.size() == 1 || v.size() == 2, ValueError, name_, ": ", arg, " of sample ", i,
                   " needs 1 or 2 values (width, height), got ", v.size());
    return {int64_t(v[0]), int64_t(v.size() == 2 ? v[1] : v[0])};
  }

  std::vector<kernels::RankShape> make_plan(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    visit_types(in.dtype(), [](auto) {});
    const std::string l = in.layout().str();
    // HW, HWC, CHW after the sequence wrapper took F off (FHWC, FCHW); no layout: HW or HWC.
    const bool planes = l == "CHW";
    STOKER_ENFORCE(l.empty() || l == "HW" || l == "HWC" || planes, ValueError, name_,
                   ": expected images in HW, HWC or CHW layout or sequences of them (FHWC, "
                   "FCHW), got layout '",
                   l, "'");
    std::vector<kernels::RankShape> out;
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      const int want = l.empty() ? s.ndim() : int(l.size());
      STOKER_ENFORCE(s.ndim() == want && (want == 2 || want == 3), ValueError, name_, ": sample ",
                     i, " has shape ", s.to_string(), ", not an image of layout '",
                     l.empty() ? std::string("HW or HWC") : l, "'");
      kernels::RankShape k;
      if (planes) {
        k.planes = s[0], k.height = s[1], k.width = s[2];
      } else {
        k.height = s[0], k.width = s[1], k.channels = s.ndim() == 3 ? s[2] : 1;
      }
      if (op_ == kernels::RankOp::kMedian) {
        const auto w = pair_arg(ws, "window_size", i);
        for (int64_t v : w)
          STOKER_ENFORCE(v >= 1 && v <= kMaxWindow && v % 2 == 1, ValueError, name_,
                         ": window_size must be odd and between 1 and ", kMaxWindow, ", got ", w[0],
                         ", ", w[1], " for sample ", i);
        k.kw = int32_t(w[0]), k.kh = int32_t(w[1]);
        k.ax = k.kw / 2, k.ay = k.kh / 2;
        k.border = kernels::Border::kClamp;
      } else {
        const auto m = pair_arg(ws, "mask_size", i);
        for (int64_t v : m)
          STOKER_ENFORCE(v >= 1 && v <= kMaxWindow, ValueError, name_,
                         ": mask_size must be between 1 and ", kMaxWindow, ", got ", m[0], ", ",
                         m[1], " for sample ", i);
        k.kw = int32_t(m[0]), k.kh = int32_t(m[1]);
        const auto a = pair_arg(ws, "anchor", i);
        for (int d = 0; d < 2; ++d)
          STOKER_ENFORCE(a[size_t(d)] >= -1 && a[size_t(d)] < m[size_t(d)], ValueError, name_,
                         ": anchor must lie within the mask (", m[0], " x ", m[1],
                         ") or be -1 (its centre), got ", a[0], ", ", a[1], " for sample ", i);
        k.ax = int32_t(a[0] < 0 ? m[0] / 2 : a[0]);
        k.ay = int32_t(a[1] < 0 ? m[1] / 2 : a[1]);
        k.border = border_;
      }
      out.push_back(k);
    }
    return out;
  }

  kernels::RankOp op_;
  std::string name_;
  kernels::Border border_ = kernels::Border::kClamp;
  int64_t iterations_ = 1;
  std::mutex mutex_;
  std::vector<std::vector<uint32_t>> keys_;
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend: the same plan, one descriptor array, one launch per iteration; the second
// buffer of the iterations comes from the device pool.
class RankFilterGpu final : public RankFilter {
 public:
  using RankFilter::RankFilter;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const auto shapes = make_plan(ws);
    Batch& out = add_output(ws, in.dtype(), input_shapes(in), in.layout());
    const int n = in.size();
    if (n == 0) return;
    const size_t elem = dtype_size(in.dtype());
    std::vector<kernels::RankGpuSample> desc(static_cast<size_t>(n));
    size_t bytes = 0;
    int64_t max_elems = 0;
    for (int i = 0; i < n; ++i) {
      const auto& k = shapes[size_t(i)];
      const int64_t elems = k.planes * k.height * k.width * k.channels;
      max_elems = std::max(max_elems, elems);
      bytes += (size_t(elems) * elem + 255) / 256 * 256;
    }
    if (max_elems == 0) return;
    std::shared_ptr<Buffer> work;
    if (iterations_ > 1) work = ws.device_pool->acquire_on(bytes, ws.stream);
    size_t at = 0;
    for (int i = 0; i < n; ++i) {
      auto& d = desc[size_t(i)];
      const auto& k = shapes[size_t(i)];
      d.in = in.data(i), d.out = out.data(i), d.shape = k;
      if (work) d.tmp = static_cast<uint8_t*>(work->data()) + at;
      at += (size_t(k.planes * k.height * k.width * k.channels) * elem + 255) / 256 * 256;
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::rank_filter_gpu(static_cast<const kernels::RankGpuSample*>(device->data()),
                                        n, max_elems, in.dtype(), op_, int(iterations_), ws.stream),
               name_ + " (gpu): launching the kernel");
  }
};
#endif

std::vector<ArgSchema> morphology_args() {
  return {
      {"mask_size", ArgType::kIntList,
       "Size of the structuring element (a rectangle of ones): one value or [width, height] "
       "(CV-CUDA's order, as DALI passes it), each 1 to 255.",
       std::vector<int64_t>{3, 3}, true},
      {"anchor", ArgType::kIntList,
       "The element of the mask over the output pixel, [x, y] (one value: both); -1: the "
       "centre (size // 2).",
       std::vector<int64_t>{-1, -1}, true},
      {"iterations", ArgType::kInt,
       "How many times the operation runs, each on the previous result (1 to 255).", int64_t{1}},
      {"border_mode", ArgType::kString,
       "Pixels outside the image: constant (the neutral value: the type's minimum for "
       "dilate, its maximum for erode, as CV-CUDA), replicate (aaa|abcd|ddd), reflect "
       "(cba|abcd|dcb), reflect_101 (dcb|abcd|cba) or wrap (bcd|abcd|abc).",
       std::string("constant")}};
}

OpSchema rank_schema(std::string name, std::string doc, std::vector<ArgSchema> args,
                     kernels::RankOp op) {
  return {
      .name = std::move(name),
      .doc = std::move(doc),
      .inputs = {"input"},
      .outputs = {"output"},
      .args = std::move(args),
      .make_cpu = [op](const OpSpec& s) { return std::make_unique<RankFilter>(s, op); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [op](const OpSpec& s) { return std::make_unique<RankFilterGpu>(s, op); },
#endif
      .sequences = true,
      .example = OpExample{.args = {}},
  };
}

}  // namespace

OpSchema median_blur_schema() {
  return rank_schema(
      "experimental.median_blur",
      "Replaces each pixel by the median of its window, per channel, as DALI's "
      "fn.experimental.median_blur (CV-CUDA's MedianBlur): the middle of the window's sorted "
      "values, borders replicated (aaa|abcd|ddd). Images HW, HWC, CHW and their sequences "
      "(FHWC, FCHW); uint8, uint16, float32. DALI has it on the GPU only; stoker on both.",
      {{"window_size", ArgType::kIntList,
        "The window: one value or [width, height] (CV-CUDA's order, as DALI passes it), each "
        "odd, 1 to 255.",
        std::vector<int64_t>{3, 3}, true}},
      kernels::RankOp::kMedian);
}

OpSchema dilate_schema() {
  return rank_schema(
      "experimental.dilate",
      "Dilation: each pixel becomes the largest value under the structuring element (a "
      "rectangle placed with its anchor over the pixel), per channel, as DALI's "
      "fn.experimental.dilate (CV-CUDA's Morphology). Images HW, HWC, CHW and their sequences "
      "(FHWC, FCHW); uint8, uint16, float32. DALI has it on the GPU only; stoker on both.",
      morphology_args(), kernels::RankOp::kDilate);
}

OpSchema erode_schema() {
  return rank_schema(
      "experimental.erode",
      "Erosion: each pixel becomes the smallest value under the structuring element (a "
      "rectangle placed with its anchor over the pixel), per channel, as DALI's "
      "fn.experimental.erode (CV-CUDA's Morphology). Images HW, HWC, CHW and their sequences "
      "(FHWC, FCHW); uint8, uint16, float32. DALI has it on the GPU only; stoker on both.",
      morphology_args(), kernels::RankOp::kErode);
}

}  // namespace stoker::ops
