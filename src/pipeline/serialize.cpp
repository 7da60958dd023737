// PipelineDefinition as JSON, both ways (the only implementation: Python's serialize() and
// deserialize() call it). A node reads only nodes before it. Arguments convert as the Python
// binding converts them (bool, int, float, string, and lists of ints, numbers or strings).
#include <algorithm>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/ops/registry.hpp"
#include "stoker/pipeline.hpp"

namespace stoker {
namespace {

using Json = nlohmann::json;
constexpr int kSerialVersion = 2;
constexpr const char* kWhere = "serialized pipeline: ";

// `v` for a message: its JSON text, cut to 200 characters, and not printed at all when nested
// more than 64 levels deep (printing recurses: a fuzzed document could exhaust the stack).
std::string describe(const Json& v) {
  std::vector<std::pair<const Json*, int>> todo{{&v, 0}};
  while (!todo.empty()) {
    auto [x, depth] = todo.back();
    todo.pop_back();
    if (depth > 64) return "(a value nested more than 64 levels deep)";
    if (x->is_structured())
      for (const auto& e : *x) todo.emplace_back(&e, depth + 1);
  }
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 200 ? text.substr(0, 200) + "..." : text;
}

// An integer JSON value that fits int64_t (an unsigned one past it does not).
bool is_int64(const Json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
}

ArgValue to_arg(const Json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (is_int64(v)) return v.get<int64_t>();
  if (v.is_number() && !v.is_number_integer()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    bool all_int = true, all_num = true, all_str = true;
    for (const auto& x : v) {
      all_int &= is_int64(x);
      all_num &= x.is_number() && (is_int64(x) || !x.is_number_integer());
      all_str &= x.is_string();
    }
    if (v.empty()) return std::vector<double>{};
    if (all_int) return v.get<std::vector<int64_t>>();
    if (all_num) return v.get<std::vector<double>>();
    if (all_str) return v.get<std::vector<std::string>>();
  }
  throw ValueError(where + ": unsupported argument value " + describe(v));
}

// [node, output] in document node `i`: an earlier node's output (whether that node has such
// an output, the build checks).
Value to_value(const Json& ref, size_t i, const std::string& where) {
  STOKER_ENFORCE(ref.is_array() && ref.size() == 2 && is_int64(ref[0]) && is_int64(ref[1]),
                 ValueError, where, ": an input must be [node, output], got ", describe(ref));
  const int64_t node = ref[0].get<int64_t>(), output = ref[1].get<int64_t>();
  STOKER_ENFORCE(node >= 0 && uint64_t(node) < i && output >= 0 && output < (int64_t(1) << 31),
                 ValueError, where, " reads output ", output, " of node ", node,
                 ", which does not come before it");
  return {int(node), int(output)};
}

// `v` as T, strictly: an integer option must be a JSON integer within T's range (2.5 or
// 1e30 are refused, not truncated), a flag a boolean, a text a string.
template <typename T>
bool convert(const Json& v, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return false;
    out = v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      if (u > uint64_t(std::numeric_limits<T>::max())) return false;
      out = T(u);
    } else if (v.is_number_integer()) {
      const auto i = v.get<int64_t>();
      if (i < int64_t(std::numeric_limits<T>::min()) ||
          (i > 0 && uint64_t(i) > uint64_t(std::numeric_limits<T>::max())))
        return false;
      out = T(i);
    } else {
      return false;
    }
  } else if constexpr (std::is_same_v<T, std::optional<int>>) {
    if (v.is_null()) {
      out.reset();
      return true;
    }
    int x = 0;
    if (!convert(v, x)) return false;
    out = x;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return false;
    out = v.get<std::string>();
  } else {  // std::vector<int>
    if (!v.is_array()) return false;
    out.clear();
    for (const auto& x : v) {
      typename T::value_type e{};
      if (!convert(x, e)) return false;
      out.push_back(e);
    }
  }
  return true;
}

template <typename T>
T field(const Json& doc, const char* key, T fallback, const std::string& where = "option") {
  if (!doc.is_object() || !doc.contains(key) || doc[key].is_null()) return fallback;
  T out{};
  STOKER_ENFORCE(convert(doc[key], out), ValueError, kWhere, where, " '", key,
                 "' is ", describe(doc[key]));
  return out;
}

// A node's list or object member (absent: empty), refused when it is something else.
const Json& member(const Json& node, const char* key, bool list, const std::string& where) {
  static const Json empty_list = Json::array(), empty_object = Json::object();
  if (!node.contains(key) || node[key].is_null()) return list ? empty_list : empty_object;
  const Json& v = node[key];
  STOKER_ENFORCE(list ? v.is_array() : v.is_object(), ValueError, where, ": \"", key, "\" must be ",
                 list ? "a list" : "an object", ", got ", describe(v));
  return v;
}

// The value of an ArgValue in JSON.
Json from_arg(const ArgValue& v) {
  return std::visit([](const auto& x) { return Json(x); }, v);
}

Json from_ref(const Value& v) { return Json::array({v.node, v.output}); }

// Version 1 kept its options at the top level in Python's form: num_threads "auto" with
// cpu_budget, prefetch_queue_depth "auto", a depth or {"cpu_size", "gpu_size"}.
PipelineOptions options_v1(const Json& doc) {
  PipelineOptions o;
  o.batch_size = field<int>(doc, "batch_size", o.batch_size);
  if (doc.contains("num_threads") && doc["num_threads"] == "auto") {
    o.auto_threads = true;
    o.num_threads = field<int>(doc, "cpu_budget", 0);  // 0: every core
  } else {
    o.num_threads = field<int>(doc, "num_threads", o.num_threads);
  }
  o.device_id = field<std::optional<int>>(doc, "device_id", std::nullopt);
  o.seed = field<int64_t>(doc, "seed", o.seed);
  if (doc.contains("prefetch_queue_depth") && doc["prefetch_queue_depth"] == "auto") {
    o.auto_prefetch = true;
  } else if (doc.contains("prefetch_queue_depth") && !doc["prefetch_queue_depth"].is_null()) {
    const auto& q = doc["prefetch_queue_depth"];
    if (q.is_number()) {
      o.prefetch_queue_depth = o.gpu_queue_depth = field<int>(doc, "prefetch_queue_depth", 2);
    } else {
      STOKER_ENFORCE(q.is_object(), ValueError, kWhere, "option 'prefetch_queue_depth' is ",
                     describe(q), " (\"auto\", a depth, or {\"cpu_size\": N, \"gpu_size\": M})");
      o.prefetch_queue_depth = field<int>(q, "cpu_size", o.prefetch_queue_depth);
      o.gpu_queue_depth = field<int>(q, "gpu_size", o.gpu_queue_depth);
    }
  }
  o.host_memory_budget = field<size_t>(doc, "host_memory_budget", 0);
  o.device_memory_budget = field<size_t>(doc, "device_memory_budget", 0);
  o.on_error = field<std::string>(doc, "on_error", o.on_error);
  o.pinned_outputs = field<bool>(doc, "pinned_outputs", o.pinned_outputs);
  o.cpu_affinity = field<std::vector<int>>(doc, "cpu_affinity", o.cpu_affinity);
  return o;
}

PipelineOptions options_v2(const Json& doc) {
  PipelineOptions o;
  if (!doc.contains("options")) return o;
  const Json& saved = doc["options"];
  STOKER_ENFORCE(saved.is_object(), ValueError, kWhere, "\"options\" must be an object, got ",
                 describe(saved));
  std::vector<std::string> known;
  PipelineOptions::fields([&](const char* name, auto member, const char*, bool keep) {
    if (!keep) return;
    known.push_back(name);
    o.*member = field(saved, name, o.*member);
  });
  for (const auto& [k, v] : saved.items())
    STOKER_ENFORCE(std::find(known.begin(), known.end(), k) != known.end(), ValueError, kWhere,
                   "unknown option '", k, "'");
  return o;
}

PipelineDefinition parse(const Json& doc) {
  STOKER_ENFORCE(doc.is_object() && doc.contains("format") && doc["format"] == "stoker.pipeline",
                 ValueError, kWhere,
                 "not a serialized stoker pipeline (no \"format\": \"stoker.pipeline\")");
  const int version = field<int>(doc, "version", -1);
  STOKER_ENFORCE(version == 1 || version == kSerialVersion, ValueError, kWhere,
                 "schema version ", version, "; this stoker reads versions 1 and ",
                 kSerialVersion);
  PipelineDefinition def;
  def.options = version == 1 ? options_v1(doc) : options_v2(doc);
  STOKER_ENFORCE(doc.contains("nodes") && doc["nodes"].is_array() && doc.contains("outputs") &&
                     doc["outputs"].is_array(),
                 ValueError, kWhere, "\"nodes\" and \"outputs\" must be lists");
  const auto& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    STOKER_ENFORCE(n.is_object() && n.contains("op") && n["op"].is_string(), ValueError, kWhere,
                   "node ", i, " has no \"op\"");
    NodeDef d;
    d.op = n["op"].get<std::string>();
    const std::string node_i = "node " + std::to_string(i) + " (" + d.op + ")";
    d.node.name = field<std::string>(n, "name", "", node_i + " field");
    d.node.device = field<std::string>(n, "device", "cpu", node_i + " field");
    d.node.defined_at = "serialized node " + std::to_string(i);
    const std::string where =
        kWhere + std::string("node ") + std::to_string(i) + " ('" + d.node.name + "', " + d.op + ")";
    const ops::OpSchema* schema = ops::find_op_schema(d.op);
    STOKER_ENFORCE(!schema || !schema->external_input, ValueError, where, " is ", d.op,
                   ", which needs Python (a source or a function)");
    for (const auto& ref : member(n, "inputs", true, where))
      d.inputs.push_back(to_value(ref, i, where));
    for (const auto& [k, v] : member(n, "args", false, where).items())
      d.args[k] = to_arg(v, where + " argument '" + k + "'");
    for (const auto& [k, v] : member(n, "arg_inputs", false, where).items())
      d.arg_inputs[k] = to_value(v, i, where);
    def.nodes.push_back(std::move(d));
  }
  for (const auto& ref : doc["outputs"])
    def.outputs.push_back(to_value(ref, nodes.size(), std::string(kWhere) + "an output"));
  return def;
}

}  // namespace

PipelineDefinition PipelineDefinition::from_json(const std::string& json) {
  Json doc;
  try {
    doc = Json::parse(json);
  } catch (const Json::exception& e) {  // a syntax error, or a number out of range ("1e999")
    throw ValueError(std::string(kWhere) + "not JSON (" + e.what() + ")");
  }
  try {
    return parse(doc);
  } catch (const Json::exception& e) {  // a shape the checks above did not foresee
    throw ValueError(std::string(kWhere) + e.what());
  }
}

std::string PipelineDefinition::to_json() const {
  Json saved = Json::object();
  PipelineOptions::fields([&](const char* name, auto member, const char*, bool keep) {
    if (!keep) return;
    const auto& value = options.*member;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::optional<int>>)
      saved[name] = value ? Json(*value) : Json(nullptr);
    else
      saved[name] = value;
  });
  Json nodes_json = Json::array();
  for (const auto& n : nodes) {
    Json args = Json::object(), arg_inputs = Json::object(), inputs = Json::array();
    for (const auto& v : n.inputs) inputs.push_back(from_ref(v));
    for (const auto& [k, v] : n.args) args[k] = from_arg(v);
    for (const auto& [k, v] : n.arg_inputs) arg_inputs[k] = from_ref(v);
    nodes_json.push_back({{"op", n.op}, {"name", n.node.name}, {"device", n.node.device},
                          {"inputs", inputs}, {"args", args}, {"arg_inputs", arg_inputs}});
  }
  Json outputs_json = Json::array();
  for (const auto& v : outputs) outputs_json.push_back(from_ref(v));
  Json doc = {{"format", "stoker.pipeline"}, {"version", kSerialVersion},
              {"options", saved}, {"nodes", nodes_json}, {"outputs", outputs_json}};
  return doc.dump(1, ' ', false, Json::error_handler_t::replace);
}

std::unique_ptr<Pipeline> PipelineDefinition::build() const {
  PipelineBuilder b(options);
  std::vector<std::vector<Value>> added;  // per definition node: its outputs in the builder
  const auto at = [&](const Value& v, const std::string& where) {
    STOKER_ENFORCE(v.node >= 0 && size_t(v.node) < added.size() && v.output >= 0 &&
                       size_t(v.output) < added[size_t(v.node)].size(),
                   ValueError, where, " reads output ", v.output, " of node ", v.node,
                   ", which does not exist");
    return added[size_t(v.node)][size_t(v.output)];
  };
  for (const auto& n : nodes) {
    const std::string where =
        n.op + (n.node.defined_at.empty() ? "" : " (defined at " + n.node.defined_at + ")");
    std::vector<Value> inputs;
    for (const auto& v : n.inputs) inputs.push_back(at(v, where));
    std::map<std::string, Value> arg_inputs;
    for (const auto& [k, v] : n.arg_inputs) arg_inputs[k] = at(v, where);
    added.push_back(b.add(n.op, inputs, n.args, arg_inputs, n.node));
  }
  std::vector<Value> outs;
  for (const auto& v : outputs) outs.push_back(at(v, "an output"));
  b.set_outputs(outs);
  return b.build();
}

std::unique_ptr<Pipeline> Pipeline::from_json(const std::string& json,
                                              const std::function<void(PipelineOptions&)>& adjust) {
  auto def = PipelineDefinition::from_json(json);
  if (adjust) adjust(def.options);
  return def.build();
}

}  // namespace stoker
