#include "stoker/ops/io/python_function.hpp"

#include <chrono>

#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {

ForeignCalls& ForeignCalls::instance() {
  static auto* calls = new ForeignCalls;  // never destroyed: a server may outlive main()
  return *calls;
}

void ForeignCalls::set_served(bool served) {
  std::lock_guard lock(mutex_);
  served_ = served;
  if (!served) {  // what waits fails instead of waiting for ever
    for (auto& c : queue_) {
      c->error = c->op + ": the server of python functions stopped";
      c->done = true;
    }
    queue_.clear();
    finished_.notify_all();
  }
  queued_.notify_all();
}

void ForeignCalls::call(const std::shared_ptr<ForeignCall>& c, const std::atomic<bool>* stopping) {
  std::unique_lock lock(mutex_);
  STOKER_ENFORCE(served_, RuntimeError, c->op,
                 ": no server runs the functions (the Python layer starts one when it builds a "
                 "pipeline with python_function)");
  queue_.push_back(c);
  queued_.notify_all();
  while (!c->done) {
    finished_.wait_for(lock, std::chrono::milliseconds(50));
    if (!c->done && stopping && stopping->load()) {
      // Not served yet: withdrawn. Being served: the server finishes it, unseen.
      for (auto it = queue_.begin(); it != queue_.end(); ++it)
        if (*it == c) {
          queue_.erase(it);
          break;
        }
      throw RuntimeError("the pipeline is stopping");
    }
  }
}

bool ForeignCalls::served() {
  std::lock_guard lock(mutex_);
  return served_;
}

std::shared_ptr<ForeignCall> ForeignCalls::next(double timeout_s) {
  std::unique_lock lock(mutex_);
  queued_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                   [&] { return !queue_.empty() || !served_; });
  if (queue_.empty()) return nullptr;
  auto c = queue_.front();
  queue_.pop_front();
  return c;
}

void ForeignCalls::finish(const std::shared_ptr<ForeignCall>& c) {
  std::lock_guard lock(mutex_);
  c->done = true;
  finished_.notify_all();
}

namespace {

// The batch goes to the server as it is; the function's outputs come back as batches over its
// arrays (held until stoker is done with them). On the GPU the stage's stream is synchronised
// first (the function's framework reads the inputs on its own stream), and the stage's stream
// waits for the events the server recorded after the function's work.
class PythonFunction final : public Operator {
 public:
  explicit PythonFunction(const OpSpec& spec)
      : Operator(spec),
        function_(spec.arg<int64_t>("function_id")),
        layouts_(spec.arg<std::vector<std::string>>("output_layouts")),
        layouts_from_inputs_(spec.arg<bool>("layouts_from_inputs")) {}

  void run(Workspace& ws) override {
    auto c = std::make_shared<ForeignCall>();
    c->function = function_;
    c->op = "python_function '" + spec_.name + "'";
    for (const Batch* in : ws.inputs) c->inputs.push_back(*in);
    c->batch_size = ws.num_samples();
    c->device_id = ws.device_id;
    if (spec_.backend == Backend::kGpu) {
      c->on_gpu = true;
      CudaEvent inputs_ready;  // the function's framework reads them on its own stream
      inputs_ready.record(ws.stream);
      inputs_ready.synchronize();
    }
    ForeignCalls::instance().call(c, ws.closing);
    {
      std::lock_guard lock(stats_mutex_);
      calls_ += 1;
      function_seconds_ += c->seconds;
    }
    if (!c->error.empty()) throw RuntimeError(c->error);
    for (const auto& e : c->ready) e->wait_on(ws.stream);
    STOKER_ENFORCE(c->outputs.size() == layouts_.size(), ValueError, c->op, ": the function gave ",
                   c->outputs.size(), " outputs, expected ", layouts_.size(), " (num_outputs)");
    for (size_t k = 0; k < c->outputs.size(); ++k) {
      Batch& out = c->outputs[k];
      STOKER_ENFORCE(out.size() == c->batch_size, ValueError, c->op, ": output ", k, " has ",
                     out.size(), " samples, the batch has ", c->batch_size);
      const bool on_device = out.memory() == MemoryKind::kDevice;
      STOKER_ENFORCE(on_device == (spec_.backend == Backend::kGpu), TypeError, c->op, ": output ",
                     k,
                     on_device ? " is GPU data; on the CPU the function returns host arrays"
                               : " is host data; on the GPU the function returns GPU arrays");
      out.set_layout(layout_of(ws, k, out, c->op));
      if (on_device) out.record_stream(ws.stream);
      ws.outputs.push_back(std::move(out));
    }
  }

  // Output k's layout: the one given; else (jax_function, DALI's rule) input k's where the
  // output has as many dimensions, which only this batch's data tells; else none.
  TensorLayout layout_of(const Workspace& ws, size_t k, const Batch& out,
                         const std::string& op) const {
    if (!layouts_[k].empty()) {
      // DALI refuses such a layout too (when the batch is next used): catch it at its source.
      STOKER_ENFORCE(out.size() == 0 || int(layouts_[k].size()) == out.sample_ndim(),
                     ValueError, op, ": output_layouts gives output ", k, " the layout '",
                     layouts_[k], "', but its samples have ", out.sample_ndim(), " dimensions");
      return layouts_[k];
    }
    if (layouts_from_inputs_ && k < ws.inputs.size() && out.size() > 0) {
      const TensorLayout& in = ws.inputs[k]->layout();
      if (!in.empty() && in.ndim() == out.sample_ndim()) return in;
    }
    return {};
  }

  std::map<std::string, double> stats() const override {
    std::lock_guard lock(stats_mutex_);
    return {{"calls", double(calls_)}, {"function_seconds", function_seconds_}};
  }

 private:
  int64_t function_;
  std::vector<std::string> layouts_;
  bool layouts_from_inputs_;
  mutable std::mutex stats_mutex_;
  int64_t calls_ = 0;
  double function_seconds_ = 0;
};

}  // namespace

OpSchema python_function_schema() {
  auto make = [](const OpSpec& s) { return std::make_unique<PythonFunction>(s); };
  return {
      .name = "python_function",
      .doc =
          "Runs a Python function on the batch (fn.python_function, fn.torch_python_function: "
          "per sample, or the whole batch with batch_processing=True). The function runs on "
          "a Python thread of its own, holding the GIL, one call at a time; its time is the "
          "operator's counter function_seconds. On the GPU its inputs and outputs are "
          "device arrays (DLPack).",
      .inputs = {"input"},
      .variadic_inputs = true,
      .optional_inputs = 1,
      .outputs_from = "output_layouts",
      .args = {{"function_id", ArgType::kInt, "The function (registered by the Python layer).",
                std::nullopt},
               {"output_layouts", ArgType::kStringList,
                "One entry per output: its layout ('' for none).", std::nullopt},
               {"layouts_from_inputs", ArgType::kBool,
                "An output without a layout in output_layouts takes the layout of the input of "
                "its index where their samples have as many dimensions (jax_function).",
                false}},
      .make_cpu = make,
      .make_gpu = make,
      .external_input = true,  // a Python function: not serialisable, served from outside
  };
}

}  // namespace stoker::ops
