#include "stoker/ops/operator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>

namespace stoker::ops {

Operator::Operator(const OpSpec& spec) : spec_(spec) {
  if (spec_.schema && spec_.schema->find_arg("seed")) {
    own_seed_ = spec_.arg<int64_t>("seed");
    STOKER_ENFORCE(own_seed_ >= -1, ValueError, spec_.describe(),
                   ": seed must be -1 (from the pipeline's) or a non-negative integer, got ",
                   own_seed_);
  }
}

namespace {
// "sample i (source '...')", for messages about one sample; "sample s, frame f (...)" for a
// frame of a sequence.
std::string sample_context(const Workspace& ws, int64_t i, const Batch* sources) {
  std::string ctx = ws.frames ? "sample " + std::to_string(ws.frames->sequence[size_t(i)]) +
                                    ", frame " + std::to_string(ws.frames->frame[size_t(i)])
                              : "sample " + std::to_string(i);
  if (sources && i < sources->size() && !sources->source_info(int(i)).empty())
    ctx += " (source '" + sources->source_info(int(i)) + "')";
  return ctx;
}
}  // namespace

void Operator::warn_sample(Workspace& ws, int i, const std::string& message,
                           const Batch* sources) const {
  if (!ws.warnings) return;
  if (!sources && !ws.inputs.empty()) sources = ws.inputs[0];
  ws.warnings->add(i, sample_context(ws, i, sources) + ": " + message);
}

void Operator::for_each_sample(Workspace& ws, int n, const std::function<void(int, int)>& fn,
                               const Batch* sources) const {
  if (!sources && !ws.inputs.empty()) sources = ws.inputs[0];
  std::atomic<bool> skipped{false};
  auto body = [&](int64_t i, int thread) {
    if (ws.failures && ws.failures->contains(int(i))) return;           // failed in an earlier pass
    if (ws.stopping && ws.stopping->load(std::memory_order_relaxed)) {  // closing
      skipped.store(true, std::memory_order_relaxed);
      return;
    }
    try {
      fn(int(i), thread);
    } catch (...) {
      const std::string ctx = sample_context(ws, i, sources);
      try {
        rethrow_with_context(std::current_exception(), ctx + ": ");
      } catch (const ValueError& e) {  // bad data: skippable
        if (!ws.failures) throw;
        ws.failures->add(int(i), e.what());
      } catch (const IOError& e) {
        if (!ws.failures) throw;
        ws.failures->add(int(i), e.what());
      }
    }
  };
  // Where this call site's work goes: the pool, or this thread when it was small last time.
  const size_t site = fn.target_type().hash_code();
  double last = -1;
  {
    std::lock_guard lock(site_mutex_);
    for (const auto& w : site_work_)
      if (w.site == site) last = w.seconds;
  }
  std::atomic<int64_t> work_ns{0};
  // Largest samples first (by their element count in `sources`), so that a batch ends on small
  // samples and the threads finish together rather than wait for a large image taken last
  // (simulated on the benchmark's size mix, 256 decodes on 16 threads: 6.6% over the ideal time in
  // sample order, 2.1% largest first; measured on the H100 box: +4-6% images/s for the CPU-only
  // RN50-train pipeline at 16 threads). The reported error stays the lowest failing sample's.
  std::vector<int> order;
  const bool parallel = !(last >= 0 && last < kInlineWorkSeconds);
  if (parallel && sources && sources->size() == n && n > ws.pool->active_threads()) {
    std::vector<int64_t> size(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) size[size_t(i)] = sources->shape(i).volume();
    if (std::adjacent_find(size.begin(), size.end(), std::not_equal_to<>()) != size.end()) {
      order.resize(size_t(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return size[size_t(a)] > size[size_t(b)]; });
    }
  }
  std::mutex error_mutex;
  int error_sample = -1;
  std::exception_ptr error;
  auto timed = [&](int64_t k, int thread) {
    const int64_t i = order.empty() ? k : order[size_t(k)];
    const auto t = std::chrono::steady_clock::now();
    try {
      body(i, thread);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (error_sample < 0 || i < error_sample)
        error_sample = int(i), error = std::current_exception();
    }
    work_ns.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t)
            .count(),
        std::memory_order_relaxed);
  };
  if (parallel) {
    ws.pool->parallel_for(n, timed);
  } else {
    ws.pool->run_here(n, timed);
  }
  const double seconds = double(work_ns.load()) * 1e-9;
  {
    std::lock_guard lock(site_mutex_);
    auto w = std::find_if(site_work_.begin(), site_work_.end(),
                          [&](const SiteWork& s) { return s.site == site; });
    if (w != site_work_.end())
      w->seconds = seconds;
    else
      site_work_.push_back({site, seconds});
  }
  if (error) std::rethrow_exception(error);
  // Samples were left undone: the caller must not go on with their half-filled results (an
  // operator that plans per sample and then reads the plans would read empty ones).
  if (skipped.load()) throw RuntimeError("the pipeline is stopping");
}

Batch& Operator::add_output(Workspace& ws, DType dtype, std::vector<TensorShape> shapes,
                            TensorLayout layout, const Batch* sources) const {
  if (!sources && !ws.inputs.empty()) sources = ws.inputs[0];
  // What a failed allocation names: the batch's size and its largest sample (no copy of a
  // shape: this runs for every output of every batch).
  int64_t total = 0, largest = 0;
  int biggest = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t v = shapes[i].volume();
    total += v;
    if (v > largest) largest = v, biggest = int(i);
  }
  try {
    if (spec_.backend == Backend::kCpu) {
      ws.outputs.push_back(
          Batch::allocate(*ws.host_pool, dtype, std::move(shapes), std::move(layout)));
    } else {
      STOKER_ASSERT(ws.device_pool != nullptr, spec_.describe(), " ran without a device pool");
      ws.outputs.push_back(Batch::allocate_on(ws.stream, *ws.device_pool, dtype, std::move(shapes),
                                              std::move(layout)));
    }
  } catch (const std::exception& e) {
    if (!dynamic_cast<const RuntimeError*>(&e) && !dynamic_cast<const std::bad_alloc*>(&e)) throw;
    throw RuntimeError(
        detail::concat(e.what(), " (the output batch: ", total * int64_t(dtype_size(dtype)),
                       " bytes; the largest sample is ", sample_context(ws, biggest, sources), ", ",
                       largest, " elements)"));
  }
  if (sources) ws.outputs.back().copy_source_info(*sources);
  return ws.outputs.back();
}

std::shared_ptr<Buffer> upload_bytes(Workspace& ws, const void* data, size_t bytes) {
  auto staging = ws.pinned_pool->acquire(bytes);  // waits for its previous copy, if any
  std::memcpy(staging->data(), data, bytes);
  auto device = ws.device_pool->acquire_on(bytes, ws.stream);
  copy_to_device_async(device->data(), staging->data(), bytes, ws.stream);
  staging->record_stream(ws.stream);
  return device;
}

std::vector<double> sample_as_doubles(const Batch& b, int i) {
  const auto view = b.sample(i);
  std::vector<double> out(size_t(view.num_elements()));
  visit_numeric(b.dtype(), "argument tensor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(view.data);
    for (size_t k = 0; k < out.size(); ++k) out[k] = cast_value<double>(p[k]);
  });
  return out;
}

double Operator::scalar_arg(const Workspace& ws, std::string_view name, int i) const {
  return scalar_arg(spec_, ws.arg_inputs, name, i);
}

double Operator::scalar_arg(const OpSpec& spec, const ArgInputs& args, std::string_view name,
                            int i) {
  if (auto it = args.find(name); it != args.end()) {
    const Batch& b = *it->second;
    STOKER_ENFORCE(i < b.size(), ValueError, "argument '", name, "' has ", b.size(),
                   " samples, fewer than the batch's");
    auto v = sample_as_doubles(b, i);
    STOKER_ENFORCE(v.size() == 1, ValueError, "argument '", name,
                   "' must be a scalar per sample, got shape ", b.shape(i).to_string());
    return v[0];
  }
  const ArgSchema* a = spec.schema->find_arg(name);
  STOKER_ASSERT(a != nullptr, "no argument ", name);
  if (a->type == ArgType::kFloat) return spec.arg<double>(name);
  if (a->type == ArgType::kBool) return spec.arg<bool>(name) ? 1.0 : 0.0;
  return double(spec.arg<int64_t>(name));
}

std::vector<double> Operator::list_arg(const Workspace& ws, std::string_view name, int i) const {
  if (auto it = ws.arg_inputs.find(name); it != ws.arg_inputs.end()) {
    STOKER_ENFORCE(i < it->second->size(), ValueError, "argument '", name, "' has ",
                   it->second->size(), " samples, fewer than the batch's");
    return sample_as_doubles(*it->second, i);
  }
  const ArgSchema* a = spec_.schema->find_arg(name);
  STOKER_ASSERT(a != nullptr, "no argument ", name);
  if (a->type == ArgType::kIntList) {
    auto v = spec_.arg<std::vector<int64_t>>(name);
    return std::vector<double>(v.begin(), v.end());
  }
  return spec_.arg<std::vector<double>>(name);
}

ImageShape image_shape(const Batch& b, int i, const std::string& op) {
  const auto& s = b.shape(i);
  STOKER_ENFORCE(b.layout().empty() || b.layout().str() == "HWC", ValueError, op,
                 ": expected images in HWC layout, got layout '", b.layout().str(), "'");
  STOKER_ENFORCE(s.ndim() == 3, ValueError, op,
                 ": expected an HWC image (3 dimensions), got shape ", s.to_string());
  return {s[0], s[1], s[2]};
}

}  // namespace stoker::ops
