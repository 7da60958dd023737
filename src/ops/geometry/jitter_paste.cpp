// jitter and paste (CPU).
#include "stoker/ops/geometry/jitter_paste.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "stoker/kernels/geometry/fill_paste_cpu.hpp"
#include "stoker/kernels/tensor/gather_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/fill_value.hpp"
#include "stoker/ops/geometry/resize_common.hpp"
#include "stoker/ops/operator.hpp"
#include "stoker/ops/tensor/copy_gpu_plan.hpp"

namespace stoker::ops {
namespace {

// DALI 2.4's jitter, as measured on its GPU kernel (it has no CPU one): every component
// (y, x, c) takes its own source pixel (y + dy, x + dx), dx and dy uniform over the nDegree
// integers from -(nDegree / 2), clamped to the image, so edges repeat and fill_value is never
// used. Calls take(k, sy, sx) for the k-th component in HWC order; the draws come from the
// sample's Philox stream in that order, dx then dy, so both backends replay the same offsets.
template <typename Take>
void jitter_sources(RandomStream& rng, int64_t degree, const ImageShape& s, Take&& take) {
  const int64_t low = -(degree / 2);
  const auto span = uint32_t(degree);
  int64_t k = 0;
  for (int64_t y = 0; y < s.height; ++y)
    for (int64_t x = 0; x < s.width; ++x)
      for (int64_t c = 0; c < s.channels; ++c, ++k) {
        const int64_t sx = std::clamp<int64_t>(x + low + rng.below(span), 0, s.width - 1);
        const int64_t sy = std::clamp<int64_t>(y + low + rng.below(span), 0, s.height - 1);
        take(k, sy, sx);
      }
}

class Jitter : public Operator {
 public:
  explicit Jitter(const OpSpec& spec) : Operator(spec) {
    interp_is_linear(spec);  // validates: both filters sample whole pixels at integer offsets
  }

 protected:
  int64_t checked_degree() const {
    const int64_t degree = spec_.arg<int64_t>("nDegree");
    STOKER_ENFORCE(degree >= 1, ValueError, "jitter: nDegree must be >= 1, got ", degree);
    return degree;
  }

 public:
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    const int64_t degree = checked_degree();
    const size_t es = dtype_size(in.dtype());
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, "jitter");
      const auto* src = static_cast<const uint8_t*>(in.sample(i).data);
      auto* dst = static_cast<uint8_t*>(out.sample(i).data);
      if (scalar_arg(ws, "mask", i) == 0) {
        std::memcpy(dst, src, es * size_t(s.height * s.width * s.channels));
        return;
      }
      // The offsets the GPU gathers by, then the same gather (kernels/tensor/gather_cpu).
      std::vector<int8_t> offsets(size_t(2 * s.height * s.width * s.channels));
      auto rng = sample_rng(ws, i);
      jitter_sources(rng, degree, s, [&](int64_t k, int64_t sy, int64_t sx) {
        const int64_t p = k / s.channels;
        offsets[size_t(2 * k)] = int8_t(sy - p / s.width);
        offsets[size_t(2 * k + 1)] = int8_t(sx - p % s.width);
      });
      kernels::gather_elements_cpu(src, dst, s.height, s.width, s.channels, offsets.data(), es);
    });
  }
};

class Paste : public Operator {
 public:
  explicit Paste(const OpSpec& spec) : Operator(spec) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes;
    auto at = plan(ws, in, shapes);
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    for_each_sample(ws, n, [&](int i, int) {
      const auto& s = in.shape(i);
      const auto& o = out.shape(i);
      const size_t px = size_t(s[2]) * dtype_size(in.dtype());
      auto fill =
          fill_pixel(in.dtype(), s[2], spec_.arg<std::vector<double>>("fill_value"), "paste");
      const auto [y0, x0] = at[size_t(i)];
      kernels::paste_cpu(out.sample(i).data, o[0], o[1], in.sample(i).data, s[0], s[1], px, y0, x0,
                         fill.data());
    });
  }

 protected:
  // Canvas shapes and where each image goes (y, x).
  std::vector<std::pair<int64_t, int64_t>> plan(const Workspace& ws, const Batch& in,
                                                std::vector<TensorShape>& shapes) const {
    const int n = in.size();
    std::vector<std::pair<int64_t, int64_t>> at(static_cast<size_t>(n));
    const double min_canvas = spec_.arg<double>("min_canvas_size");
    for (int i = 0; i < n; ++i) {
      auto s = image_shape(in, i, "paste");
      const double ratio = scalar_arg(ws, "ratio", i);
      STOKER_ENFORCE(ratio >= 1, ValueError, "paste: ratio must be >= 1, got ", ratio);
      // DALI's canvas: each side ratio times the image's, truncated, at least min_canvas_size;
      // bounded before it becomes an integer (arg_limits.hpp).
      const auto side = [&](int64_t extent) {
        return std::max(double(extent), std::max(min_canvas, std::floor(ratio * double(extent))));
      };
      check_arg_elements("paste", "ratio and min_canvas_size",
                         std::vector<double>{side(s.height), side(s.width)}, i);
      const int64_t oh = int64_t(side(s.height)), ow = int64_t(side(s.width));
      const double px = scalar_arg(ws, "paste_x", i), py = scalar_arg(ws, "paste_y", i);
      STOKER_ENFORCE(px >= 0 && px <= 1 && py >= 0 && py <= 1, ValueError,
                     "paste: paste_x and paste_y must be in [0, 1]");
      at[size_t(i)] = {int64_t(std::floor(py * double(oh - s.height))),  // truncated, as DALI
                       int64_t(std::floor(px * double(ow - s.width)))};
      shapes.push_back(TensorShape{oh, ow, s.channels});
    }
    return at;
  }
};

#ifdef STOKER_HAVE_CUDA
// The gpu backend of jitter: the sources are drawn on the host exactly as the CPU draws them
// (one Philox stream per sample, rejection sampling, so the draws are sequential) and go up as
// two signed bytes per component; one launch gathers every component.
class JitterGpu final : public Jitter {
 public:
  using Jitter::Jitter;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    std::vector<TensorShape> shapes = in.shapes();
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    const int64_t degree = checked_degree();
    STOKER_ENFORCE(degree <= 255, ValueError, "jitter (gpu): nDegree must be <= 255, got ",
                   degree);  // the offsets travel as signed bytes
    if (n == 0) return;
    std::vector<size_t> at(static_cast<size_t>(n));
    size_t total = 0;
    int64_t most = 0;
    for (int i = 0; i < n; ++i) {
      auto s = image_shape(in, i, "jitter");
      const int64_t elements = s.height * s.width * s.channels;
      at[size_t(i)] = total, total += size_t(2 * elements);
      most = std::max(most, elements);
    }
    const size_t desc_bytes = (size_t(n) * sizeof(kernels::GatherGpuSample) + 255) / 256 * 256;
    auto staging = ws.pinned_pool->acquire(desc_bytes + total);
    auto device = ws.device_pool->acquire_on(desc_bytes + total, ws.stream);
    auto* h = static_cast<uint8_t*>(staging->data());
    auto* d = static_cast<uint8_t*>(device->data());
    auto* desc = reinterpret_cast<kernels::GatherGpuSample*>(h);
    for_each_sample(ws, n, [&](int i, int) {
      auto s = image_shape(in, i, "jitter");
      kernels::GatherGpuSample g;
      g.in = in.data(i), g.out = out.data(i), g.h = s.height, g.w = s.width, g.c = s.channels;
      g.offsets = reinterpret_cast<const int8_t*>(d + desc_bytes + at[size_t(i)]);
      auto* off = reinterpret_cast<int8_t*>(h + desc_bytes + at[size_t(i)]);
      if (scalar_arg(ws, "mask", i) == 0) {
        std::memset(off, 0, size_t(2 * s.height * s.width * s.channels));
      } else {
        auto rng = sample_rng(ws, i);
        jitter_sources(rng, degree, s, [&](int64_t k, int64_t sy, int64_t sx) {
          const int64_t p = k / s.channels;
          off[2 * k] = int8_t(sy - p / s.width);
          off[2 * k + 1] = int8_t(sx - p % s.width);
        });
      }
      std::memcpy(&desc[i], &g, sizeof g);
    });
    copy_to_device_async(d, h, desc_bytes + total, ws.stream);
    staging->record_stream(ws.stream);
    cuda_check(kernels::gather_elements_gpu(reinterpret_cast<const kernels::GatherGpuSample*>(d), n,
                                            most, int(dtype_size(in.dtype())), ws.stream),
               "jitter (gpu): launching the kernel");
  }
};

// The gpu backend of paste: one descriptor per sample and channel reads the image shifted to its
// place and writes the channel's fill value around it; one launch.
class PasteGpu final : public Paste {
 public:
  using Paste::Paste;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::vector<TensorShape> shapes;
    auto at = plan(ws, in, shapes);
    Batch& out = add_output(ws, in.dtype(), shapes, in.layout());
    const size_t es = dtype_size(in.dtype());
    std::vector<kernels::StridedCopy> d;
    for (int i = 0; i < in.size(); ++i) {
      const auto& s = in.shape(i);
      const auto& o = out.shape(i);
      auto fill =
          fill_pixel(in.dtype(), s[2], spec_.arg<std::vector<double>>("fill_value"), "paste");
      const auto [y0, x0] = at[size_t(i)];
      for (int64_t c = 0; c < s[2]; ++c) {
        const uint64_t bits = fill_channel_bits(fill, c, es);
        d.push_back(copy_desc(static_cast<const uint8_t*>(in.data(i)) + size_t(c) * es,
                              static_cast<uint8_t*>(out.data(i)) + size_t(c) * es, {o[0], o[1]},
                              {o[1] * o[2], o[2]}, {s[1] * s[2], s[2]}, {s[0], s[1]}, "paste",
                              {-y0, -x0}, bits));
      }
    }
    run_copies(*this, ws, d, es);
  }
};
#endif

}  // namespace

OpSchema jitter_schema() {
  return {
      .name = "jitter",
      .doc =
          "Moves every component of HWC images on its own (as DALI 2.4's kernel does): output "
          "(y, x, c) takes input (clamp(y + dy), clamp(x + dx), c), dx and dy uniform over the "
          "nDegree integers from -(nDegree / 2) (nDegree=2: -1 or 0; 3: -1, 0 or 1), clamped to "
          "the image so edges repeat. Drawn from the sample's Philox stream component by "
          "component in HWC order, dx then dy. Samples whose `mask` is 0 pass unchanged.",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"nDegree", ArgType::kInt, "Size of the neighbourhood.", int64_t{2}},
               {"fill_value", ArgType::kFloatList,
                "Accepted as DALI does; unused, since the sources are clamped to the image.",
                std::vector<double>{0.0}},
               {"interp_type", ArgType::kString,
                "'nn' or 'linear' (alike: the offsets are whole pixels).", std::string("nn")},
               {"mask", ArgType::kInt, "0 leaves the sample alone.", int64_t{1}, true}},
      .random = true,
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Jitter>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<JitterGpu>(s); },
#endif
      .example = OpExample{},
  };
}

OpSchema paste_schema() {
  return {
      .name = "paste",
      .doc =
          "Pastes HWC images onto a canvas of H' = max(min_canvas_size, floor(ratio * H)) by "
          "W' = max(min_canvas_size, floor(ratio * W)) (as DALI) filled with fill_value, at "
          "(floor(paste_y * (H' - H)), floor(paste_x * (W' - W))).",
      .inputs = {"images"},
      .outputs = {"images"},
      .args = {{"ratio", ArgType::kFloat, "Canvas size over the image's size (>= 1).", std::nullopt,
                true},
               {"paste_x", ArgType::kFloat, "Horizontal position in [0, 1].", 0.5, true},
               {"paste_y", ArgType::kFloat, "Vertical position in [0, 1].", 0.5, true},
               {"min_canvas_size", ArgType::kFloat, "Smallest canvas extent.", 0.0},
               {"fill_value", ArgType::kFloatList, "One value or per channel.",
                std::vector<double>{0.0}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Paste>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<PasteGpu>(s); },
#endif
      .example = OpExample{.args = {{"ratio", 2.0}}},
  };
}

}  // namespace stoker::ops
