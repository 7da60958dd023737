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
#include "stoker/ops/op_spec.hpp"
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

// Python's node list ([{"op", "name", "device", "defined_at", "inputs": [(node, out)],
// "args": {...}, "arg_inputs": {name: (node, out)}}], inputs by position in the list) and
// outputs [(node, out)] as a definition.
PipelineDefinition to_definition(const nb::list& nodes, const nb::list& outputs,
                                 const PipelineOptions& options) {
  PipelineDefinition def;
  def.options = options;
  const auto ref = [](nb::handle h) {
    auto t = nb::cast<nb::tuple>(h);
    return Value{nb::cast<int>(t[0]), nb::cast<int>(t[1])};
  };
  for (nb::handle h : nodes) {
    auto d = nb::cast<nb::dict>(h);
    NodeDef n;
    n.op = nb::cast<std::string>(d["op"]);
    n.node.name = nb::cast<std::string>(d["name"]);
    n.node.device = nb::cast<std::string>(d["device"]);
    n.node.defined_at = nb::cast<std::string>(d["defined_at"]);
    const std::string where =
        n.op + (n.node.defined_at.empty() ? "" : " (defined at " + n.node.defined_at + ")");
    for (nb::handle x : nb::cast<nb::list>(d["inputs"])) n.inputs.push_back(ref(x));
    for (auto [k, v] : nb::cast<nb::dict>(d["args"]))
      n.args[nb::cast<std::string>(k)] = to_arg_value(v, where);
    for (auto [k, v] : nb::cast<nb::dict>(d["arg_inputs"]))
      n.arg_inputs[nb::cast<std::string>(k)] = ref(v);
    def.nodes.push_back(std::move(n));
  }
  for (nb::handle x : outputs) def.outputs.push_back(ref(x));
  return def;
}

// A definition as (options, nodes, outputs) in the same Python form.
nb::tuple from_definition(const PipelineDefinition& def) {
  nb::list nodes, outputs;
  for (const auto& n : def.nodes) {
    nb::dict d, args, arg_inputs;
    nb::list inputs;
    for (const auto& v : n.inputs) inputs.append(nb::make_tuple(v.node, v.output));
    for (const auto& [k, v] : n.args) args[k.c_str()] = nb::cast(v);
    for (const auto& [k, v] : n.arg_inputs)
      arg_inputs[k.c_str()] = nb::make_tuple(v.node, v.output);
    d["op"] = n.op, d["name"] = n.node.name, d["device"] = n.node.device;
    d["defined_at"] = n.node.defined_at, d["inputs"] = inputs, d["args"] = args;
    d["arg_inputs"] = arg_inputs;
    nodes.append(d);
  }
  for (const auto& v : def.outputs) outputs.append(nb::make_tuple(v.node, v.output));
  return nb::make_tuple(def.options, nodes, outputs);
}

// Statistics (stats.hpp) to Python: a struct with fields() becomes a dict of its fields,
// a list of (name, value) pairs a dict, other lists lists.
template <typename T>
nb::object to_python(const T& v) {
  if constexpr (requires { T::fields(v, [](const char*, const auto&) {}); }) {
    nb::dict d;
    T::fields(v, [&](const char* k, const auto& m) { d[k] = to_python(m); });
    return d;
  } else if constexpr (std::is_same_v<T, std::vector<std::pair<std::string, double>>>) {
    nb::dict d;
    for (const auto& [k, x] : v) d[k.c_str()] = x;
    return d;
  } else if constexpr (requires { v.begin(); } && !std::is_same_v<T, std::string>) {
    nb::list l;
    for (const auto& x : v) l.append(to_python(x));
    return l;
  } else {
    return nb::cast(v);
  }
}

// The Pipeline method returning `get(p)` as Python objects.
template <typename Get>
auto stats_method(Get get) {
  return [get](const Pipeline& p) { return to_python(get(p)); };
}

// stoker.PipelineOptions: a read-write property per PipelineOptions::fields() entry.
void bind_options(nb::module_& m) {
  auto c = nb::class_<PipelineOptions>(
      m, "PipelineOptions",
      "A pipeline's options (stoker::PipelineOptions); stoker.Pipeline(**options) sets them.");
  c.def(nb::init<>());
  PipelineOptions::fields(
      [&](const char* name, auto member, const char* doc, bool) { c.def_rw(name, member, doc); });
  c.def_static(
      "names",
      [](bool saved_only) {
        std::vector<std::string> names;
        PipelineOptions::fields([&](const char* n, auto, const char*, bool saved) {
          if (saved || !saved_only) names.push_back(n);
        });
        return names;
      },
      nb::arg("saved_only") = false, "Every option's name (saved_only: those serialised).");
}

}  // namespace

// The output names of operator `op` given these arguments and `num_inputs` inputs (for schemas
// whose outputs depend on them). Arguments are checked as when a pipeline is built.
std::vector<std::string> output_names(const std::string& op, const nb::dict& args,
                                      int num_inputs) {
  const ops::OpSchema* schema = ops::find_op_schema(op);
  STOKER_ENFORCE(schema, ValueError, "unknown operator '", op, "'");
  ops::OpSpec spec;
  spec.schema = schema;
  spec.name = op;
  spec.inputs.resize(size_t(std::max(num_inputs, 0)));
  for (auto [k, v] : args) {
    auto name = nb::cast<std::string>(k);
    const ops::ArgSchema* a = schema->find_arg(name);
    if (!a) continue;  // reported with its suggestions when the pipeline is built
    spec.args[name] = ops::coerce_arg(*schema, *a, to_arg_value(v, op));
  }
  return schema->output_names ? schema->output_names(spec) : schema->outputs;
}

void bind_pipeline(nb::module_& m) {
  bind_options(m);
  m.def(
      "serialize_pipeline",
      [](const nb::list& nodes, const nb::list& outputs, const PipelineOptions& options) {
        return to_definition(nodes, outputs, options).to_json();
      },
      "PipelineDefinition::to_json() of Python's node list.");
  m.def(
      "parse_pipeline",
      [](const std::string& text) { return from_definition(PipelineDefinition::from_json(text)); },
      "(options, nodes, outputs) of a serialized pipeline, checked.");
  m.def("output_names", &output_names, nb::arg("op"), nb::arg("args"), nb::arg("num_inputs") = 0,
        "Output names of an operator whose outputs depend on its arguments and inputs.");
  nb::class_<Pipeline>(m, "Pipeline", "A built pipeline (native). Use stoker.Pipeline.")
      .def_static(
          "build",
          [](const nb::list& nodes, const nb::list& outputs, const PipelineOptions& options) {
            auto definition = to_definition(nodes, outputs, options);  // reads Python objects
            // Building touches no Python object (operators never call into Python; a
            // python_function is served by a Python thread): other threads run meanwhile, as
            // a reader indexes a million files or parses a COCO annotations file.
            nb::gil_scoped_release release;
            return definition.build();
          },
          nb::arg("nodes"), nb::arg("outputs"), nb::arg("options"))
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
      .def("fed_batches", &Pipeline::fed_batches)
      .def("discard_ends", &Pipeline::discard_ends)
      .def("checkpoint", &Pipeline::checkpoint)
      .def("take_incidents", &Pipeline::take_incidents)
      .def("operator_stats", &Pipeline::operator_stats)
      .def("autotune", stats_method([](const Pipeline& p) { return p.autotune(); }))
      .def("gpu_utilization", stats_method([](const Pipeline& p) { return p.gpu_utilization(); }))
      .def("stage_stats", stats_method([](const Pipeline& p) { return p.stage_stats(); }))
      .def("cpu_times", stats_method([](const Pipeline& p) { return p.cpu_times(); }))
      .def("operator_times", stats_method([](const Pipeline& p) { return p.operator_times(); }))
      .def("error_stats", stats_method([](const Pipeline& p) { return p.error_stats(); }))
      .def("external_source_names", &Pipeline::external_source_names)
      .def("reader_names", &Pipeline::reader_names)
      .def("reader_meta",
           [](const Pipeline& p, const std::string& name) { return to_python(p.reader_meta(name)); })
      .def_prop_ro("seed", &Pipeline::seed)
      .def("trim_memory", &Pipeline::trim_memory, nb::call_guard<nb::gil_scoped_release>())
      .def("memory_stats", stats_method([](const Pipeline& p) { return p.memory_stats(); }));
}

}  // namespace stoker::python
