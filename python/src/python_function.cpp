// The servers of python_function operators: loops run by Python threads of their own
// (stoker.python_function starts them, keeping one idle while others run functions, so that a
// function running another pipeline with python_function gets its calls served). Each waits for
// calls with the GIL released and runs them with the GIL held: stoker's threads queue calls and
// wait, and never take the GIL themselves.
#include "stoker/ops/io/python_function.hpp"

#include <chrono>

#include "bindings.hpp"
#include "stoker/core/cuda.hpp"

namespace stoker::python {
namespace {

void serve(const std::shared_ptr<ops::ForeignCall>& c, nb::callable& dispatch) {
  const auto start = std::chrono::steady_clock::now();
  nb::list inputs;
  for (const auto& b : c->inputs) inputs.append(nb::cast(b));
  // Nobody waits for the call any more: its operator gave up (the pipeline closes, e.g. after
  // Ctrl-C; it drops its reference, so only this server's is left) or the servers stop. A
  // per-sample function checks it between samples, so that closing never waits for the batch.
  nb::object cancelled = nb::cpp_function([w = std::weak_ptr<ops::ForeignCall>(c)] {
    return w.use_count() <= 1 || !ops::ForeignCalls::instance().served();
  });
  // dispatch(function, inputs, on_gpu, batch_size, cancelled) -> (outputs, wait_streams): per
  // output, what borrow_arrays takes (DLPack producers ordered their work before the legacy
  // default stream); the streams the outputs' CUDA array interfaces named.
  nb::tuple result =
      nb::cast<nb::tuple>(dispatch(c->function, inputs, c->on_gpu, c->batch_size, cancelled));
  c->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::optional<int> device;
  if (c->on_gpu) device = c->device_id;
  nb::list outputs = nb::cast<nb::list>(result[0]);
  for (size_t k = 0; k < outputs.size(); ++k)
    c->outputs.push_back(
        borrow_arrays(outputs[k], c->op + ": output " + std::to_string(k), device));
  if (!c->on_gpu) return;
  std::vector<intptr_t> streams{1};  // the legacy default stream (see dispatch)
  for (auto s : nb::cast<nb::list>(result[1])) streams.push_back(nb::cast<intptr_t>(s));
  for (intptr_t s : streams) {
    auto e = std::make_shared<CudaEvent>();  // the function's work, before the stage's
    e->record(reinterpret_cast<StreamHandle>(s));
    c->ready.push_back(std::move(e));
  }
}

void serve_python_calls(nb::callable dispatch, nb::callable keep_serving) {
  auto& calls = ops::ForeignCalls::instance();
  while (calls.served()) {
    std::shared_ptr<ops::ForeignCall> c;
    {
      nb::gil_scoped_release release;
      c = calls.next(0.2);
    }
    if (!c) {
      bool keep = true;  // idle: the Python layer may end a server it no longer needs
      try {
        keep = nb::cast<bool>(keep_serving());
      } catch (const std::exception&) {
      }
      if (!keep) return;
      continue;
    }
    try {
      serve(c, dispatch);
    } catch (nb::python_error& e) {
      c->error = c->op + ": the function raised " + e.what();
    } catch (const std::exception& e) {
      c->error = c->op + ": " + e.what();
    }
    c->outputs.resize(c->error.empty() ? c->outputs.size() : 0);
    calls.finish(c);
  }
}

}  // namespace

void bind_python_function(nb::module_& m) {
  m.def(
      "start_python_calls", [] { ops::ForeignCalls::instance().set_served(true); },
      "Lets python_function calls queue (before the first serve_python_calls).");
  m.def("serve_python_calls", &serve_python_calls, nb::arg("dispatch"), nb::arg("keep_serving"),
        "Serves python_function calls until stop_python_calls(), or until keep_serving() (asked "
        "while idle) returns False: dispatch(function, inputs, on_gpu, batch_size, cancelled) "
        "-> (outputs, wait_streams). Run it on a thread of its own; several may run.");
  m.def(
      "stop_python_calls", [] { ops::ForeignCalls::instance().set_served(false); },
      "Ends serve_python_calls (calls queued later fail with a clear error).");
}

}  // namespace stoker::python
