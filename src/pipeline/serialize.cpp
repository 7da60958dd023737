// Pipeline::from_json: Python's pipe.serialize() JSON (python/stoker/pipeline.py) built in C++,
// without Python. The document is {"format": "stoker.pipeline", "version": 1, options...,
// "nodes": [{"op", "name", "device", "inputs": [[node, output]], "args": {...},
// "arg_inputs": {name: [node, output]}}], "outputs": [[node, output]]}; a node reads only nodes
// before it. Arguments convert as the Python binding converts them (bool, int, float, string,
// and lists of ints, numbers or strings).
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/pipeline.hpp"

namespace stoker {
namespace {

using Json = nlohmann::json;
constexpr int kSerialVersion = 1;  // SERIAL_VERSION in python/stoker/pipeline.py

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

// [node, output] of a document node `i` refers to -> the builder's value (the builder may add
// nodes of its own, so indices differ).
Value to_value(const Json& ref, const std::vector<std::vector<Value>>& added, size_t i,
               const std::string& where) {
  STOKER_ENFORCE(ref.is_array() && ref.size() == 2 && is_int64(ref[0]) && is_int64(ref[1]),
                 ValueError, where, ": an input must be [node, output], got ", describe(ref));
  const int64_t node = ref[0].get<int64_t>(), output = ref[1].get<int64_t>();
  STOKER_ENFORCE(node >= 0 && size_t(node) < std::min(i, added.size()) && output >= 0 &&
                     size_t(output) < added[size_t(node)].size(),
                 ValueError, where, " reads output ", output, " of node ", node,
                 ", which does not come before it");
  return added[size_t(node)][size_t(output)];
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
  STOKER_ENFORCE(convert(doc[key], out), ValueError, "Pipeline::from_json: ", where, " '", key,
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

}  // namespace

namespace {
std::unique_ptr<Pipeline> build_from(const Json& doc,
                                     const std::function<void(PipelineOptions&)>& adjust);
}  // namespace

std::unique_ptr<Pipeline> Pipeline::from_json(const std::string& json,
                                              const std::function<void(PipelineOptions&)>& adjust) {
  Json doc;
  try {
    doc = Json::parse(json);
  } catch (const Json::parse_error& e) {
    throw ValueError(std::string("Pipeline::from_json: not JSON (") + e.what() + ")");
  }
  try {
    return build_from(doc, adjust);
  } catch (const Json::exception& e) {  // a shape the checks below did not foresee
    throw ValueError(std::string("Pipeline::from_json: ") + e.what());
  }
}

namespace {
std::unique_ptr<Pipeline> build_from(const Json& doc,
                                     const std::function<void(PipelineOptions&)>& adjust) {
  STOKER_ENFORCE(doc.is_object() && doc.contains("format") && doc["format"] == "stoker.pipeline",
                 ValueError,
                 "Pipeline::from_json: not a serialized stoker pipeline (no \"format\": "
                 "\"stoker.pipeline\")");
  const int version = field<int>(doc, "version", -1);
  STOKER_ENFORCE(version == kSerialVersion, ValueError, "Pipeline::from_json: schema version ",
                 version, "; this stoker reads version ", kSerialVersion);
  PipelineOptions o;
  o.batch_size = field<int>(doc, "batch_size", o.batch_size);
  if (doc.contains("num_threads") && doc["num_threads"] == "auto") {
    // num_threads="auto" up to cpu_budget (null: this machine's cores).
    o.auto_threads = true;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    o.num_threads = doc.contains("cpu_budget") && !doc["cpu_budget"].is_null()
                        ? field<int>(doc, "cpu_budget", 1)
                        : int(cores);
  } else {
    o.num_threads = field<int>(doc, "num_threads", o.num_threads);
  }
  if (doc.contains("device_id") && !doc["device_id"].is_null())
    o.device_id = field<int>(doc, "device_id", 0);
  o.seed = field<int64_t>(doc, "seed", o.seed);
  if (doc.contains("prefetch_queue_depth") && doc["prefetch_queue_depth"] == "auto") {
    o.auto_prefetch = true;
  } else if (doc.contains("prefetch_queue_depth") && !doc["prefetch_queue_depth"].is_null()) {
    // {"cpu_size": N, "gpu_size": M}, or one depth N for both (as DALI takes it).
    const auto& q = doc["prefetch_queue_depth"];
    if (q.is_number()) {
      o.prefetch_queue_depth = o.gpu_queue_depth = field<int>(doc, "prefetch_queue_depth", 2);
    } else {
      STOKER_ENFORCE(q.is_object(), ValueError,
                     "Pipeline::from_json: option 'prefetch_queue_depth' is ", describe(q),
                     " (\"auto\", a depth, or {\"cpu_size\": N, \"gpu_size\": M})");
      o.prefetch_queue_depth = field<int>(q, "cpu_size", o.prefetch_queue_depth);
      o.gpu_queue_depth = field<int>(q, "gpu_size", o.gpu_queue_depth);
    }
  }
  o.host_memory_budget = field<size_t>(doc, "host_memory_budget", 0);
  o.device_memory_budget = field<size_t>(doc, "device_memory_budget", 0);
  o.on_error = field<std::string>(doc, "on_error", o.on_error);
  o.pinned_outputs = field<bool>(doc, "pinned_outputs", o.pinned_outputs);
  o.cpu_affinity = field<std::vector<int>>(doc, "cpu_affinity", o.cpu_affinity);
  if (adjust) adjust(o);

  STOKER_ENFORCE(doc.contains("nodes") && doc["nodes"].is_array() && doc.contains("outputs") &&
                     doc["outputs"].is_array(),
                 ValueError, "Pipeline::from_json: \"nodes\" and \"outputs\" must be lists");
  PipelineBuilder b(o);
  std::vector<std::vector<Value>> added;  // per document node: its outputs in the builder
  const auto& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    STOKER_ENFORCE(n.is_object() && n.contains("op") && n["op"].is_string(), ValueError,
                   "Pipeline::from_json: node ", i, " has no \"op\"");
    const std::string op = n["op"].get<std::string>();
    NodeOptions no;
    const std::string node_i = "node " + std::to_string(i) + " (" + op + ")";
    no.name = field<std::string>(n, "name", "", node_i + " field");
    no.device = field<std::string>(n, "device", "cpu", node_i + " field");
    no.defined_at = "serialized node " + std::to_string(i);
    const std::string where =
        "Pipeline::from_json: node " + std::to_string(i) + " ('" + no.name + "', " + op + ")";
    STOKER_ENFORCE(op != "external_source", ValueError, where,
                   " is an external_source, which needs a Python source");
    const Json& in = member(n, "inputs", true, where);
    const Json& a = member(n, "args", false, where);
    const Json& ai = member(n, "arg_inputs", false, where);
    std::vector<Value> inputs;
    for (const auto& ref : in) inputs.push_back(to_value(ref, added, i, where));
    std::map<std::string, ArgValue> args;
    for (const auto& [k, v] : a.items()) args[k] = to_arg(v, where + " argument '" + k + "'");
    std::map<std::string, Value> arg_inputs;
    for (const auto& [k, v] : ai.items()) arg_inputs[k] = to_value(v, added, i, where);
    added.push_back(b.add(op, inputs, args, arg_inputs, no));
  }
  std::vector<Value> outs;
  for (const auto& ref : doc["outputs"])
    outs.push_back(to_value(ref, added, nodes.size(), "Pipeline::from_json: an output"));
  b.set_outputs(outs);
  return b.build();
}
}  // namespace

}  // namespace stoker
