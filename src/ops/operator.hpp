// Operator: the run-time object for one OpSpec, and the Workspace an iteration hands it.
// Operators read arguments (constants or per-sample tensors), validate inputs, allocate
// outputs from the pipeline's pools and run kernels per sample on the thread pool.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stoker/core/batch.hpp"
#include "stoker/core/rng.hpp"
#include "stoker/core/thread_pool.hpp"
#include "stoker/ops/op_spec.hpp"

namespace stoker::ops {

// Per-sample messages (sample -> message): data errors recorded instead of thrown
// (on_error="skip"), and warnings about data an operator used anyway.
class SampleFailures {
 public:
  void add(int sample, std::string message) {
    std::lock_guard lock(mutex_);
    by_sample_.emplace(sample, std::move(message));
  }
  bool contains(int sample) const {
    std::lock_guard lock(mutex_);
    return by_sample_.count(sample) > 0;
  }
  bool empty() const { return by_sample_.empty(); }
  const std::map<int, std::string>& by_sample() const { return by_sample_; }

 private:
  mutable std::mutex mutex_;
  std::map<int, std::string> by_sample_;
};

using ArgInputs = std::map<std::string, const Batch*, std::less<>>;

// Sequences unfolded into frames (ops/sequence_operator.hpp): an operator then runs on a batch
// of frames, and what belongs to a sample — its random draws, its number in messages — belongs
// to the frame's sequence.
struct FrameMap {
  std::vector<int> sequence;  // frame sample -> the sequence it comes from
  std::vector<int> frame;     // frame sample -> its frame number in that sequence
  int batch_size = 0;         // the iteration's batch size (of sequences)
};

struct Workspace {
  std::vector<const Batch*> inputs;
  ArgInputs arg_inputs;
  // The per-sample arguments of the operators fused into this one (OpSpec::fused_steps() order),
  // each under that operator's own argument names.
  std::vector<ArgInputs> fused_arg_inputs;
  std::vector<Batch> outputs;  // filled by the operator, one per schema output
  ThreadPool* pool = nullptr;
  MemoryPool* host_pool = nullptr;
  // Mixed and gpu operators: the stage's stream (all their device work goes there), the
  // pools for device outputs and pinned staging, and the device.
  StreamHandle stream = nullptr;
  MemoryPool* device_pool = nullptr;
  MemoryPool* pinned_pool = nullptr;
  int device_id = -1;
  int batch_size = 0;
  int64_t iteration = 0;
  uint64_t seed = 0;
  // Replacement rounds (on_error="skip") draw from a different stream family.
  uint32_t stream_epoch = 0;
  // Set when the pipeline skips bad samples: for_each_sample records ValueError/IOError of a
  // sample here (and leaves that sample alone afterwards) instead of throwing.
  SampleFailures* failures = nullptr;
  // Warnings about samples the operator processed anyway (a JPEG decoded past corrupt data):
  // counted and listed by the pipeline's error_stats(). Null: not collected.
  SampleFailures* warnings = nullptr;
  // Set when the pipeline is closing: for_each_sample skips the samples it has not started,
  // then throws (the operator's run ends there).
  const std::atomic<bool>* stopping = nullptr;
  // Set in every stage: the pipeline is closing (for operators that wait on something outside
  // it, e.g. a Python call; unlike `stopping`, samples are not skipped).
  const std::atomic<bool>* closing = nullptr;
  // Mixed operators: what prepare_on_host() returned for this iteration (null: nothing).
  std::shared_ptr<void> prepared;
  // Set while the operator runs on the frames of sequences (null: its samples are samples).
  const FrameMap* frames = nullptr;

  const Batch& input(int i) const { return *inputs.at(size_t(i)); }
  // Samples this iteration: the first input's count; for operators without inputs, the
  // first per-sample argument's count, or else the batch size. Inside an `if` branch these are
  // fewer than batch_size, which stays the iteration's (for the samples' random streams).
  int num_samples() const {
    if (!inputs.empty()) return inputs[0]->size();
    return arg_inputs.empty() ? batch_size : arg_inputs.begin()->second->size();
  }
};

// Operators fed from outside the pipeline (external_source) implement this. check(), feed()
// and feed_end() are called by the consumer thread; run() waits for data until cancel().
class InputFeed {
 public:
  virtual ~InputFeed() = default;
  // Throws a clear error when `batch` cannot be fed (dtype, layout, size, memory).
  virtual void check(const Batch& batch) const = 0;
  virtual void feed(Batch batch) = 0;
  virtual void feed_end() = 0;     // the source is exhausted: the next run() ends the epoch
  virtual void discard_end() = 0;  // the epoch ended: drops an end mark still at the front
  virtual void cancel() = 0;       // the pipeline is shutting down: run() must return/throw
  virtual size_t queued() const = 0;
  // The batches the data fed so far makes, those already run included: one per feed for
  // external_source, several for a fed video (experimental.inputs.video). A consumer that asks
  // for more would wait for a feed.
  virtual int64_t batches_fed() const = 0;
};

class Operator {
 public:
  explicit Operator(const OpSpec& spec);
  virtual ~Operator() = default;
  virtual void run(Workspace& ws) = 0;
  virtual std::optional<ReaderMeta> reader_meta() const { return std::nullopt; }
  // Stateful operators (readers) return their complete state as one line of text;
  // restore_state() makes them continue exactly from it (pipeline checkpoints).
  virtual std::optional<std::string> save_state() const { return std::nullopt; }
  virtual void restore_state(const std::string& state) {
    throw ValueError(spec_.describe() + " has no state to restore (got '" + state + "')");
  }
  const OpSpec& spec() const { return spec_; }
  // Mixed operators whose inputs all come from the CPU stage may do their host work there, an
  // iteration ahead of run() in the mixed stage: the executor calls this in the CPU stage with
  // the inputs run() will get (and ws.failures under on_error="skip", as for cpu operators)
  // and hands the result to run() as ws.prepared. run() must also work without it (null: the
  // batch changed after, e.g. samples were replaced). ws.device_pool is set, for device memory
  // it fills for run() (MemoryPool::acquire: there is no stage stream here). Called from the
  // CPU stage's thread while run() may run on another iteration: shared state needs locks.
  virtual std::shared_ptr<void> prepare_on_host(Workspace&) { return nullptr; }
  // True for operators whose prepare_on_host() does work: their host part runs from both
  // stages with the pool's thread indices as its slots (the CPU stage then keeps one lane).
  virtual bool prepares_on_host() const { return false; }
  // Counters an operator keeps about its work (e.g. how a mixed decoder split its batches),
  // for pipe.operator_stats(name). Called from the consumer's thread: must be thread-safe.
  virtual std::map<std::string, double> stats() const { return {}; }

 protected:
  // Runs fn(sample, thread) for every sample on the pool. An error is rethrown (same kind) with
  // "sample i (source '...')" prepended, using `sources` (default: the first input) for the
  // source; the lowest failing sample is reported. Work too small to share (under
  // kInlineWorkSeconds for the batch at this call site last time, e.g. a random draw per
  // sample) runs on the calling thread instead: waking the pool and waiting behind other
  // stages' work on it cost more than the work. When the pipeline closes (ws.stopping), the
  // samples not yet started are skipped and RuntimeError("the pipeline is stopping") follows.
  void for_each_sample(Workspace& ws, int n, const std::function<void(int, int)>& fn,
                       const Batch* sources = nullptr) const;
  // Records a warning about sample i (used anyway) in ws.warnings, as "sample i (source
  // '...'): message", the source taken from `sources` (default: the first input).
  void warn_sample(Workspace& ws, int i, const std::string& message,
                   const Batch* sources = nullptr) const;
  // Allocates the next output (contiguous; from the pipeline's host pool for cpu operators,
  // its device pool, ordered on the stage's stream, for mixed and gpu ones), copies the
  // samples' source_info from `sources` (default: the first input) and returns it. The
  // executor reserves one slot per schema output, so earlier references stay valid.
  Batch& add_output(Workspace& ws, DType dtype, std::vector<TensorShape> shapes,
                    TensorLayout layout, const Batch* sources = nullptr) const;
  // The random stream of sample i in this iteration: depends only on the pipeline seed, this
  // operator's instance number and the sample's global index; with the operator's own `seed`
  // (seed_arg), on that seed instead of the other two, so that operators given one seed draw
  // alike (one random window for an image and its mask).
  // The frames of a sequence (Workspace::frames) draw as their sequence: one decision for all.
  RandomStream sample_rng(const Workspace& ws, int i) const {
    const int batch = ws.frames ? ws.frames->batch_size : ws.batch_size;
    const int in_batch = ws.frames ? ws.frames->sequence[size_t(i)] : i;
    const uint64_t sample = uint64_t(ws.iteration) * uint64_t(batch) + uint64_t(in_batch);
    if (own_seed_ >= 0)
      return random_stream(uint64_t(own_seed_), kSeededInstance, sample, ws.stream_epoch);
    return random_stream(ws.seed, uint64_t(spec_.instance), sample, ws.stream_epoch);
  }
  // The operator's own `seed` argument (-1: none).
  int64_t own_seed() const { return own_seed_; }

 public:
  // add_output for helpers outside the class (run_step of the GPU resampling).
  Batch& add_output_for(Workspace& ws, DType dtype, std::vector<TensorShape> shapes,
                        TensorLayout layout) const {
    return add_output(ws, dtype, std::move(shapes), std::move(layout));
  }
  // A scalar argument for sample i: the per-sample tensor when one is bound, else the constant.
  double scalar_arg(const Workspace& ws, std::string_view name, int i) const;
  // The same for `spec`, an operator fused into this one, with its per-sample tensors `args`
  // (Workspace::fused_arg_inputs).
  static double scalar_arg(const OpSpec& spec, const ArgInputs& args, std::string_view name, int i);
  // The per-sample tensors bound for fused step k (OpSpec::fused_steps()); none: an empty map.
  static const ArgInputs& fused_args(const Workspace& ws, size_t k) {
    static const ArgInputs kNone;
    return k < ws.fused_arg_inputs.size() ? ws.fused_arg_inputs[k] : kNone;
  }
  // A list argument for sample i (a per-sample 1-D tensor, or the constant list).
  std::vector<double> list_arg(const Workspace& ws, std::string_view name, int i) const;

 protected:
  OpSpec spec_;
  // The instance number of every seeded stream: no operator of a graph has it.
  static constexpr uint64_t kSeededInstance = ~uint64_t(0);
  int64_t own_seed_ = -1;

 private:
  // for_each_sample's measured work per call site (the function's type): the batch's summed
  // per-sample seconds, last time.
  struct SiteWork {
    size_t site;
    double seconds;
  };
  mutable std::mutex site_mutex_;
  mutable std::vector<SiteWork> site_work_;

 public:
  static constexpr double kInlineWorkSeconds = 100e-6;
};

// Device operators: a copy of `items` in device memory for work on ws.stream, through pinned
// staging and one asynchronous copy (descriptor arrays for kernels). The buffer is recycled
// only after that stream's work, so it may be released as soon as the kernel is enqueued.
std::shared_ptr<Buffer> upload_bytes(Workspace& ws, const void* data, size_t bytes);
template <typename T>
std::shared_ptr<Buffer> upload(Workspace& ws, const std::vector<T>& items) {
  return upload_bytes(ws, items.data(), items.size() * sizeof(T));
}

// Reads sample i of `b` (any numeric dtype, any shape) as doubles.
std::vector<double> sample_as_doubles(const Batch& b, int i);

// The window of an HWC sample; checks layout and rank, naming the operator.
struct ImageShape {
  int64_t height, width, channels;
};
ImageShape image_shape(const Batch& b, int i, const std::string& op);

}  // namespace stoker::ops
