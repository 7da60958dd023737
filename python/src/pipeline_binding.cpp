// Binding of stoker::Pipeline: built from a graph description made by the Python tracer
// (a list of node dicts), run with the GIL released, fed by external sources.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/ops/registry.hpp"
#include "stoker/pipeline.hpp"

namespace stoker::python {
namespace {

// Python values arrive as bool/int/float/str or lists of them; lists of numbers mixing ints
// and floats become float lists.
ArgValue to_arg_value(nb::handle v, const std::string& where) {
  if (nb::isinstance<nb::bool_>(v)) return nb::cast<bool>(v);
  if (nb::isinstance<nb::int_>(v)) return nb::cast<int64_t>(v);
  if (nb::isinstance<nb::float_>(v)) return nb::cast<double>(v);
  if (nb::isinstance<nb::str>(v)) return nb::cast<std::string>(v);
  if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    bool all_int = true, all_num = true, all_str = true;
    for (nb::handle x : v) {
      bool is_int = nb::isinstance<nb::int_>(x) && !nb::isinstance<nb::bool_>(x);
      all_int &= is_int;
      all_num &= is_int || nb::isinstance<nb::float_>(x);
      all_str &= nb::isinstance<nb::str>(x);
    }
    if (nb::len(v) == 0) return std::vector<double>{};
    if (all_int) return nb::cast<std::vector<int64_t>>(v);
    if (all_num) {
      std::vector<double> out;
      for (nb::handle x : v) out.push_back(nb::cast<double>(x));
      return out;
    }
    if (all_str) return nb::cast<std::vector<std::string>>(v);
  }
  throw TypeError(where + ": unsupported argument value " + nb::cast<std::string>(nb::repr(v)));
}

// (python node index, output) -> the native value. The builder may add nodes of its own
// (copies to the device), so native indices differ from the Python list's.
Value to_value(nb::handle h, const std::vector<std::vector<Value>>& added) {
  auto t = nb::cast<nb::tuple>(h);
  const int node = nb::cast<int>(t[0]), output = nb::cast<int>(t[1]);
  STOKER_ENFORCE(node >= 0 && node < int(added.size()) && output >= 0 &&
                     output < int(added[size_t(node)].size()),
                 ValueError, "a pipeline value refers to an unknown node");
  return added[size_t(node)][size_t(output)];
}

// nodes: [{"op", "name", "device", "defined_at", "inputs": [(node, out)], "args": {...},
//          "arg_inputs": {name: (node, out)}}], outputs: [(node, out)]
std::unique_ptr<Pipeline> build_pipeline(
    const nb::list& nodes, const nb::list& outputs, int batch_size, int num_threads,
    bool auto_threads, std::optional<int> device_id, int64_t seed, int prefetch_queue_depth,
    int gpu_queue_depth, bool auto_prefetch, size_t host_memory_budget, size_t device_memory_budget,
    const std::string& checkpoint, const std::string& on_error, bool pinned_outputs,
    const std::string& trace, const std::vector<int>& cpu_affinity) {
  PipelineOptions o;
  o.batch_size = batch_size;
  o.num_threads = num_threads;
  o.auto_threads = auto_threads;
  o.device_id = device_id;
  o.seed = seed;
  o.prefetch_queue_depth = prefetch_queue_depth;
  o.gpu_queue_depth = gpu_queue_depth;
  o.auto_prefetch = auto_prefetch;
  o.host_memory_budget = host_memory_budget;
  o.device_memory_budget = device_memory_budget;
  o.checkpoint = checkpoint;
  o.on_error = on_error;
  o.pinned_outputs = pinned_outputs;
  o.trace = trace;
  o.cpu_affinity = cpu_affinity;
  PipelineBuilder b(o);
  std::vector<std::vector<Value>> added;  // per Python node: its outputs in the native graph
  for (nb::handle h : nodes) {
    auto d = nb::cast<nb::dict>(h);
    NodeOptions no;
    no.name = nb::cast<std::string>(d["name"]);
    no.device = nb::cast<std::string>(d["device"]);
    no.defined_at = nb::cast<std::string>(d["defined_at"]);
    std::string op = nb::cast<std::string>(d["op"]);
    std::string where = op + (no.defined_at.empty() ? "" : " (defined at " + no.defined_at + ")");
    std::vector<Value> inputs;
    for (nb::handle x : nb::cast<nb::list>(d["inputs"])) inputs.push_back(to_value(x, added));
    std::map<std::string, ArgValue> args;
    for (auto [k, v] : nb::cast<nb::dict>(d["args"]))
      args[nb::cast<std::string>(k)] = to_arg_value(v, where);
    std::map<std::string, Value> arg_inputs;
    for (auto [k, v] : nb::cast<nb::dict>(d["arg_inputs"]))
      arg_inputs[nb::cast<std::string>(k)] = to_value(v, added);
    added.push_back(b.add(op, inputs, args, arg_inputs, no));
  }
  std::vector<Value> outs;
  for (nb::handle x : outputs) outs.push_back(to_value(x, added));
  b.set_outputs(outs);
  return b.build();
}

nb::dict stats_dict(const PoolStats& s) {
  nb::dict d;
  d["bytes_in_use"] = s.bytes_in_use;
  d["peak_bytes_in_use"] = s.peak_bytes_in_use;
  d["bytes_reserved"] = s.bytes_reserved;
  d["budget"] = s.budget;
  d["allocations"] = s.allocations;
  d["reused"] = s.reused;
  d["not_waited"] = s.not_waited;
  d["release_events"] = s.release_events;
  return d;
}

}  // namespace

// The output names of operator `op` given these arguments (for schemas whose outputs depend
// on them). Arguments are checked as when a pipeline is built.
std::vector<std::string> output_names(const std::string& op, const nb::dict& args) {
  const ops::OpSchema* schema = ops::find_op_schema(op);
  STOKER_ENFORCE(schema, ValueError, "unknown operator '", op, "'");
  ops::OpSpec spec;
  spec.schema = schema;
  spec.name = op;
  for (auto [k, v] : args) {
    auto name = nb::cast<std::string>(k);
    const ops::ArgSchema* a = schema->find_arg(name);
    if (!a) continue;  // reported with its suggestions when the pipeline is built
    spec.args[name] = ops::coerce_arg(*schema, *a, to_arg_value(v, op));
  }
  return schema->output_names ? schema->output_names(spec) : schema->outputs;
}

void bind_pipeline(nb::module_& m) {
  m.def("output_names", &output_names, nb::arg("op"), nb::arg("args"),
        "Output names of an operator whose outputs depend on its arguments.");
  nb::class_<Pipeline>(m, "Pipeline", "A built pipeline (native). Use stoker.Pipeline.")
      .def_static("build", &build_pipeline, nb::arg("nodes"), nb::arg("outputs"),
                  nb::arg("batch_size"), nb::arg("num_threads"), nb::arg("auto_threads"),
                  nb::arg("device_id").none(), nb::arg("seed"), nb::arg("prefetch_queue_depth"),
                  nb::arg("gpu_queue_depth"), nb::arg("auto_prefetch"),
                  nb::arg("host_memory_budget"), nb::arg("device_memory_budget"),
                  nb::arg("checkpoint"), nb::arg("on_error"), nb::arg("pinned_outputs"),
                  nb::arg("trace") = "", nb::arg("cpu_affinity") = std::vector<int>{})
      .def("run",
           [](Pipeline& p) {
             release_borrowed(false);
             std::vector<Batch> out;
             bool interrupted = false;
             {
               nb::gil_scoped_release release;
               try {
                 // Signal handlers (Ctrl-C) run while waiting, not only when the batch comes.
                 out = p.run([] {
                   nb::gil_scoped_acquire acquire;
                   return PyErr_CheckSignals() != 0;
                 });
               } catch (const Interrupted&) {
                 interrupted = true;
               }
             }
             if (interrupted) throw nb::python_error();  // the handler's exception
             return out;
           })
      .def("close",
           [](Pipeline& p) {
             {
               nb::gil_scoped_release release;
               p.close();
             }
             release_borrowed(true);
           })
      .def(
          "feed_input",
          [](Pipeline& p, const std::string& name, nb::handle data, const std::string& layout,
             bool copy, const std::vector<int64_t>& wait_streams) {
            release_borrowed(false);
            const std::string what = "external_source '" + name + "'";
            Batch b = borrow_arrays(data, what, p.options().device_id);
            if (!layout.empty()) b.set_layout(layout);
            nb::gil_scoped_release release;
            if (b.memory() == MemoryKind::kDevice && p.feed_stream()) {
              // Producers that name their stream (the CUDA array interface's "stream"): the feed
              // stream waits for what they queued there.
              DeviceGuard guard(p.options().device_id.value_or(0));
              for (int64_t s : wait_streams) {
                CudaEvent e;
                e.record(reinterpret_cast<StreamHandle>(static_cast<intptr_t>(s)));
                e.wait_on(p.feed_stream());
              }
            }
            p.feed_input(name, std::move(b), copy);
          },
          nb::arg("name"), nb::arg("data"), nb::arg("layout"), nb::arg("copy"),
          nb::arg("wait_streams"),
          "Feeds external source `name` (see borrow_arrays). copy: the data is copied now; else "
          "the pipeline keeps the arrays, which must stay unchanged until it is done with them.")
      .def("feed_stream",
           [](const Pipeline& p) { return reinterpret_cast<intptr_t>(p.feed_stream()); })
      .def("feed_end", &Pipeline::feed_end)
      .def("checkpoint", &Pipeline::checkpoint)
      .def("take_incidents", &Pipeline::take_incidents)
      .def("operator_stats", &Pipeline::operator_stats)
      .def("autotune",
           [](const Pipeline& p) {
             auto a = p.autotune();
             nb::list changes;
             for (const auto& c : a.changes) {
               nb::dict d;
               d["time"] = c.time;
               d["threads"] = c.threads;
               d["rate"] = c.rate;
               d["wait"] = c.wait;
               d["why"] = c.why;
               changes.append(d);
             }
             nb::list prefetch;
             for (const auto& c : a.prefetch_changes) {
               nb::dict d;
               d["time"] = c.time;
               d["depth"] = c.depth;
               d["wait"] = c.wait;
               d["blocked"] = c.blocked;
               d["why"] = c.why;
               prefetch.append(d);
             }
             nb::dict d;
             d["threads"] = a.threads;
             d["changes"] = changes;
             d["prefetch_queue_depth"] = a.prefetch_depth;
             d["prefetch_changes"] = prefetch;
             return d;
           })
      .def("gpu_utilization",
           [](const Pipeline& p) {
             const auto u = p.gpu_utilization();
             nb::dict d;
             d["available"] = u.available;
             d["why"] = u.why;
             d["samples"] = u.samples;
             d["sm_percent"] = u.sm_percent;
             d["nvjpg_percent"] = u.nvjpg_percent;
             return d;
           })
      .def("stage_stats",
           [](const Pipeline& p) {
             nb::list out;
             for (const auto& s : p.stage_stats()) {
               nb::dict d;
               d["stage"] = s.name;
               d["iterations"] = s.iterations;
               d["busy"] = s.busy;
               d["starved"] = s.starved;
               d["blocked"] = s.blocked;
               d["queue_mean"] = s.queue_mean;
               d["queue_capacity"] = s.queue_capacity;
               d["cpu"] = s.cpu;
               d["threads"] = s.threads;
               out.append(d);
             }
             return out;
           })
      .def("cpu_times",
           [](const Pipeline& p) {
             auto t = p.cpu_times();
             nb::dict threads;
             for (const auto& [name, s] : t.threads) threads[name.c_str()] = s;
             nb::dict d;
             d["threads"] = threads;
             d["wall"] = t.wall;
             return d;
           })
      .def("operator_times",
           [](const Pipeline& p) {
             nb::list out;
             for (const auto& t : p.operator_times()) {
               nb::dict d;
               d["name"] = t.name;
               d["op"] = t.op;
               d["backend"] = t.backend;
               d["runs"] = t.runs;
               d["samples"] = t.samples;
               d["seconds"] = t.seconds;
               d["bytes_in"] = t.bytes_in;
               d["bytes_out"] = t.bytes_out;
               d["gpu_runs"] = t.gpu_runs;
               d["gpu_seconds"] = t.gpu_seconds;
               out.append(d);
             }
             return out;
           })
      .def("error_stats",
           [](const Pipeline& p) {
             auto s = p.error_stats();
             nb::dict d;
             d["skipped"] = s.skipped;
             d["warnings"] = s.warnings;
             d["recent"] = s.recent;
             return d;
           })
      .def("external_source_names", &Pipeline::external_source_names)
      .def("reader_names", &Pipeline::reader_names)
      .def("reader_meta",
           [](const Pipeline& p, const std::string& name) {
             auto meta = p.reader_meta(name);
             nb::dict d;
             d["epoch_size"] = meta.epoch_size;
             d["shard_size"] = meta.shard_size;
             d["shard_id"] = meta.shard_id;
             d["number_of_shards"] = meta.num_shards;
             d["epoch_size_padded"] = meta.epoch_size_padded;
             d["pad_last_batch"] = meta.pad_last_batch;
             d["stick_to_shard"] = meta.stick_to_shard;
             return d;
           })
      .def_prop_ro("seed", &Pipeline::seed)
      .def("trim_memory", &Pipeline::trim_memory, nb::call_guard<nb::gil_scoped_release>())
      .def("memory_stats", [](const Pipeline& p) {
        nb::dict d;
        auto m = p.memory_stats();
        d["host"] = stats_dict(m.host);
        d["device"] = stats_dict(m.device);
        d["pinned"] = stats_dict(m.pinned);
        return d;
      });
}

}  // namespace stoker::python
