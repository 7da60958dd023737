#include "stoker/ops/geometry/resample_gpu_plan.hpp"

#include <cmath>
#include <cstring>

#include "stoker/ops/geometry/resize_common.hpp"

#ifdef STOKER_HAVE_CUDA  // the kernel exists only in CUDA builds

namespace stoker::ops {
namespace {

// One axis of a sample: first tap, tap count, weights (support per entry).
struct AxisTable {
  std::vector<int32_t> first, count;
  std::vector<float> weights;
  int32_t support = 1;
};

AxisTable axis_table(const ResamplePlan& p, bool vertical, int64_t in_size, int64_t out_size,
                     int64_t nn_shift) {
  AxisTable t;
  if (p.copy || (p.rows_only && !vertical)) {  // an integer window: one tap, none outside
    const int64_t start = !p.copy ? 0 : vertical ? p.copy_y : p.copy_x;  // the input (fill)
    for (int64_t i = 0; i < out_size; ++i) {
      const int64_t src = start + i;
      const bool inside = src >= 0 && src < in_size;
      t.first.push_back(int32_t(inside ? src : 0));
      t.count.push_back(inside ? 1 : 0);
      t.weights.push_back(1.f);
    }
    return t;
  }
  const double lo = vertical ? p.roi.y0 : p.roi.x0, hi = vertical ? p.roi.y1 : p.roi.x1;
  // Fused with a crop: the weights of the whole resampled extent, then the window's entries.
  const int64_t full =
      (vertical ? p.full_h : p.full_w) > 0 ? (vertical ? p.full_h : p.full_w) : out_size;
  const int64_t off =
      (vertical ? p.full_h : p.full_w) > 0 ? (vertical ? p.offset_y : p.offset_x) : 0;
  STOKER_ASSERT(off >= 0 && off + out_size <= full, "fused window outside the resampled image");
  const kernels::Filter f = p.filter.for_axis(std::abs(hi - lo), full);
  auto w = kernels::resample_weights(in_size, full, f, p.antialias, lo, hi, vertical, nn_shift);
  t.support = w.support;
  t.first.assign(w.first.begin() + off, w.first.begin() + off + out_size);
  t.count.assign(w.count.begin() + off, w.count.begin() + off + out_size);
  t.weights.assign(w.weights.begin() + off * w.support,
                   w.weights.begin() + (off + out_size) * w.support);
  return t;
}

size_t align(size_t v) { return (v + 255) / 256 * 256; }

// The kernel clamps the channel index of its per-channel constants to the last entry: past
// kResampleMaxChannels channels the constants must be alike.
bool uniform_constants(const kernels::ResampleGpuParams& p) {
  for (int c = 1; c < kernels::kResampleMaxChannels; ++c)
    if (p.mean[c] != p.mean[0] || p.inv_std[c] != p.inv_std[0] || p.fill[c] != p.fill[0])
      return false;
  return true;
}

}  // namespace

kernels::ResampleGpuParams identity_resample_params(const Batch& in) {
  kernels::ResampleGpuParams p;
  p.channels = p.out_channels = in.size() ? int32_t(in.shape(0)[2]) : 0;
  for (int c = 0; c < kernels::kResampleMaxChannels; ++c) p.inv_std[c] = 1.f;
  return p;
}

void check_uniform_channels(const Batch& in, const std::string& op) {
  for (int i = 1; i < in.size(); ++i)
    STOKER_ENFORCE(in.shape(i)[2] == in.shape(0)[2], ValueError, op,
                   " (gpu): every sample needs the same channel count; sample 0 has ",
                   in.shape(0)[2], ", sample ", i, " has ", in.shape(i)[2]);
}

void run_resample_gpu(const Operator& op, Workspace& ws, const Batch& in, Batch& out,
                      const std::vector<ResamplePlan>& plans, kernels::ResampleGpuParams params) {
  const int n = in.size();
  const std::string& name = op.spec().schema->name;
  STOKER_ENFORCE(in.memory() == MemoryKind::kDevice, InternalError, name,
                 ": the gpu backend got a CPU batch");
  STOKER_ENFORCE(params.channels <= kernels::kResampleMaxChannels || uniform_constants(params),
                 ValueError, name, " on the GPU takes per-channel values for up to ",
                 kernels::kResampleMaxChannels, " channels, got ", params.channels, " channels");
  if (n == 0) return;
  // Tables of every sample, built in parallel (the gpu stage's own threads), then packed.
  std::vector<AxisTable> xs(static_cast<size_t>(n)), ys(static_cast<size_t>(n));
  std::vector<kernels::ResampleGpuSample> desc(static_cast<size_t>(n));
  int64_t max_h = 0, max_w = 0;
  for (int i = 0; i < n; ++i) {
    const auto& os = out.shape(i);
    const int64_t oh = params.planar ? os[1] : os[0], ow = params.planar ? os[2] : os[1];
    max_h = std::max(max_h, oh), max_w = std::max(max_w, ow);
  }
  ws.pool->parallel_for(n, [&](int64_t k, int) {
    const int i = int(k);
    const auto& is = in.shape(i);
    const auto& os = out.shape(i);
    const int64_t oh = params.planar ? os[1] : os[0], ow = params.planar ? os[2] : os[1];
    const auto& p = plans[size_t(i)];
    const CropWindow v = p.view ? *p.view : CropWindow{0, 0, is[0], is[1]};
    STOKER_ASSERT(v.y >= 0 && v.x >= 0 && v.y + v.height <= is[0] && v.x + v.width <= is[1]);
    // Nearest neighbour on both axes: DALI's origins (resize_cpu does the same).
    const int64_t fh = p.full_h > 0 ? p.full_h : oh, fw = p.full_w > 0 ? p.full_w : ow;
    const auto nn = [&](double lo, double hi, int64_t out) {
      return p.filter.for_axis(std::abs(hi - lo), out) == kernels::Filter::kNearest;
    };
    const auto [sy, sx] =
        !p.copy && !p.rows_only && nn(p.roi.y0, p.roi.y1, fh) && nn(p.roi.x0, p.roi.x1, fw)
            ? kernels::nn_origin_shift(v.height, v.width, fh, fw, p.roi.y0, p.roi.y1, p.roi.x0,
                                       p.roi.x1)
            : std::pair<int64_t, int64_t>{0, 0};
    ys[size_t(i)] = axis_table(p, true, v.height, oh, sy);
    xs[size_t(i)] = axis_table(p, false, v.width, ow, sx);
    auto& d = desc[size_t(i)];
    d.in = static_cast<const uint8_t*>(in.data(i)) +
           (v.y * is[1] + v.x) * is[2] * int64_t(dtype_size(in.dtype()));
    d.in_h = v.height, d.in_w = v.width, d.in_stride = is[1] * is[2];
    d.out = out.data(i);
    d.out_h = int32_t(oh), d.out_w = int32_t(ow);
    d.mirror_x = p.mirror_x, d.mirror_y = p.mirror_y;
  });
  size_t entries = 0, weights = 0;
  for (int i = 0; i < n; ++i) {
    auto& d = desc[size_t(i)];
    d.x_entry = int64_t(entries), entries += xs[size_t(i)].first.size();
    d.y_entry = int64_t(entries), entries += ys[size_t(i)].first.size();
    d.x_weight = int64_t(weights), weights += xs[size_t(i)].weights.size();
    d.y_weight = int64_t(weights), weights += ys[size_t(i)].weights.size();
    d.support_x = xs[size_t(i)].support, d.support_y = ys[size_t(i)].support;
  }
  // One block: [descriptors][first][count][weights], each 256-byte aligned.
  const size_t off_first = align(sizeof(kernels::ResampleGpuSample) * size_t(n));
  const size_t off_count = off_first + align(entries * 4);
  const size_t off_weights = off_count + align(entries * 4);
  const size_t total = off_weights + align(weights * 4);
  auto staging = ws.pinned_pool->acquire(total);
  auto* h = static_cast<uint8_t*>(staging->data());
  std::memcpy(h, desc.data(), sizeof(kernels::ResampleGpuSample) * size_t(n));
  auto put = [&](size_t off, const auto& v, int64_t at) {
    std::memcpy(h + off + size_t(at) * 4, v.data(), v.size() * 4);
  };
  for (int i = 0; i < n; ++i) {
    const auto& d = desc[size_t(i)];
    put(off_first, xs[size_t(i)].first, d.x_entry), put(off_first, ys[size_t(i)].first, d.y_entry);
    put(off_count, xs[size_t(i)].count, d.x_entry), put(off_count, ys[size_t(i)].count, d.y_entry);
    put(off_weights, xs[size_t(i)].weights, d.x_weight);
    put(off_weights, ys[size_t(i)].weights, d.y_weight);
  }
  auto device = ws.device_pool->acquire_on(total, ws.stream);
  copy_to_device_async(device->data(), h, total, ws.stream);
  staging->record_stream(ws.stream);
  auto* d = static_cast<uint8_t*>(device->data());
  kernels::ResampleGpuTables tables{reinterpret_cast<const int32_t*>(d + off_first),
                                    reinterpret_cast<const int32_t*>(d + off_count),
                                    reinterpret_cast<const float*>(d + off_weights)};
  params.in_type = in.dtype();
  params.out_type = out.dtype();
  cuda_check(kernels::resample_gpu(reinterpret_cast<const kernels::ResampleGpuSample*>(d), n, max_h,
                                   max_w, params, tables, ws.stream),
             name + " (gpu): launching the resampling kernel");
  // `device` goes back to the pool now: only work on this stream can reuse it, after the
  // kernel (stream order).
}

void run_step(Operator& op, ResamplingStep& step, Workspace& ws) {
  const Batch& in = ws.input(0);
  auto o = step.plan_step(ws, in);
  Batch& out = op.add_output_for(ws, o.dtype, std::move(o.shapes), o.layout);
  run_resample_gpu(op, ws, in, out, o.plans, o.params);
}

namespace {

// A chain in one launch: the first step (resize or random_resized_crop) resamples; the middle
// steps (crops, flips) and the last (crop_mirror_normalize) take windows of that and mirror
// them, and the last normalises, lays out and casts. The intermediate images are never
// written: the windows compose into one window of the first step's output (with a mirror per
// axis), which selects entries of its filter tables; values are rounded to the intermediate's
// dtype in registers, so the result is the unfused chain's.
class FusedResampling final : public Operator {
 public:
  explicit FusedResampling(const OpSpec& spec) : Operator(spec) {
    OpSpec last = spec;
    last.fused_first.reset();
    last.fused_middle.clear();
    add_step(*spec.fused_first);
    for (const auto& m : spec.fused_middle) add_step(*m);
    add_step(last);
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    // Channel-first images and volumes resize through the tensor resampler, which has no fused
    // form: the steps run one after the other, as the chain would unfused.
    if (tensor_axes(in.layout())) return run_unfused(ws);
    // Each step sees its own per-sample arguments (the fused steps', then this operator's) and
    // plans over the previous one's shapes.
    std::vector<ResamplingStep::Output> outs;
    Batch mid;
    for (size_t k = 0; k < steps_.size(); ++k) {
      Workspace step_ws = ws;
      if (k + 1 < steps_.size()) step_ws.arg_inputs = fused_args(ws, k);
      step_ws.fused_arg_inputs.clear();
      const Batch& step_in = k == 0 ? in : mid;
      if (k > 0) step_ws.inputs = {&mid};
      outs.push_back(steps_[k]->plan_step(step_ws, step_in));
      // The next step sees this one's shapes only (no data).
      const auto& o = outs.back();
      Batch next = Batch::with_samples(n, o.dtype, o.layout, MemoryKind::kDevice);
      for (int i = 0; i < n; ++i) next.set_sample(i, nullptr, nullptr, o.shapes[size_t(i)]);
      next.copy_source_info(in);
      mid = std::move(next);
    }
    auto& a = outs.front();
    auto& b = outs.back();
    for (int i = 0; i < n; ++i) compose(outs, i);
    // The intermediate's dtype as the unfused chain stores it: integers round and saturate.
    if (a.dtype != DType::kF32) {
      b.params.mid_round = 1;
      b.params.mid_lo = a.dtype == DType::kU8 ? 0.f : a.dtype == DType::kU16 ? 0.f : -32768.f;
      b.params.mid_hi = a.dtype == DType::kU8 ? 255.f : a.dtype == DType::kU16 ? 65535.f : 32767.f;
      STOKER_ASSERT(a.dtype == DType::kU8 || a.dtype == DType::kU16 || a.dtype == DType::kI16,
                    "fused intermediate dtype ", dtype_name(a.dtype));
    }
    Batch& out = add_output(ws, b.dtype, std::move(b.shapes), b.layout);
    run_resample_gpu(*this, ws, in, out, a.plans, b.params);
  }

 private:
  void run_unfused(Workspace& ws) {
    Batch mid;
    for (size_t k = 0; k < ops_.size(); ++k) {
      Workspace step_ws = ws;
      if (k + 1 < ops_.size()) step_ws.arg_inputs = fused_args(ws, k);
      step_ws.fused_arg_inputs.clear();
      if (k > 0) step_ws.inputs = {&mid};
      step_ws.outputs.clear();
      ops_[k]->run(step_ws);
      if (k + 1 == ops_.size()) {
        ws.outputs = std::move(step_ws.outputs);
      } else {
        mid = std::move(step_ws.outputs.at(0));
      }
    }
  }
  void add_step(const OpSpec& s) {
    ops_.push_back(s.schema->make_gpu(s));
    steps_.push_back(dynamic_cast<ResamplingStep*>(ops_.back().get()));
    STOKER_ASSERT(steps_.back(), "fused operators must be resampling steps");
  }

  // Sample i's window of the first step's output: each later step maps its output coordinate
  // o to its input coordinate c + o, or c + (extent - 1 - o) when it mirrors; composed from the
  // last step back, the final output's x maps to first-step column at + sign * x.
  static void compose(std::vector<ResamplingStep::Output>& outs, int i) {
    auto& p = outs.front().plans[size_t(i)];
    STOKER_ASSERT(!p.copy && !p.mirror_x && !p.mirror_y, "unexpected fusion");
    int64_t at_y = 0, at_x = 0, sign_y = 1, sign_x = 1;
    for (size_t k = outs.size(); k-- > 1;) {
      const auto& q = outs[k].plans[size_t(i)];
      STOKER_ASSERT(q.copy, "unexpected fusion");
      const auto& s = outs[k].shapes[size_t(i)];
      const bool planar = k + 1 == outs.size() && outs[k].params.planar;
      const int64_t h = planar ? s[1] : s[0], w = planar ? s[2] : s[1];
      const int64_t ay = q.copy_y + (q.mirror_y ? h - 1 : 0), sy = q.mirror_y ? -1 : 1;
      const int64_t ax = q.copy_x + (q.mirror_x ? w - 1 : 0), sx = q.mirror_x ? -1 : 1;
      at_y = ay + sy * at_y, sign_y *= sy;
      at_x = ax + sx * at_x, sign_x *= sx;
    }
    const auto& last = outs.back().shapes[size_t(i)];
    const bool planar = outs.back().params.planar;
    const int64_t h = planar ? last[1] : last[0], w = planar ? last[2] : last[1];
    const auto& full = outs.front().shapes[size_t(i)];
    p.full_h = full[0], p.full_w = full[1];
    p.mirror_y = sign_y < 0, p.mirror_x = sign_x < 0;
    p.offset_y = sign_y > 0 ? at_y : at_y - (h - 1);
    p.offset_x = sign_x > 0 ? at_x : at_x - (w - 1);
  }

  std::vector<std::unique_ptr<Operator>> ops_;
  std::vector<ResamplingStep*> steps_;  // first, middle..., last
};

}  // namespace

std::unique_ptr<Operator> make_fused_resampling(const OpSpec& spec) {
  return std::make_unique<FusedResampling>(spec);
}

}  // namespace stoker::ops

#endif  // STOKER_HAVE_CUDA
