// Pipeline::from_json: Python's pipe.serialize() JSON (python/stoker/pipeline.py) built in C++,
// without Python. The document is {"format": "stoker.pipeline", "version": 1, options...,
// "nodes": [{"op", "name", "device", "inputs": [[node, output]], "args": {...},
// "arg_inputs": {name: [node, output]}}], "outputs": [[node, output]]}; a node reads only nodes
// before it. Arguments convert as the Python binding converts them (bool, int, float, string,
// and lists of ints, numbers or strings).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/pipeline.hpp"

namespace stoker {
namespace {

using Json = nlohmann::json;
constexpr int kSerialVersion = 1;  // SERIAL_VERSION in python/stoker/pipeline.py

ArgValue to_arg(const Json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    bool all_int = true, all_num = true, all_str = true;
    for (const auto& x : v) {
      all_int &= x.is_number_integer();
      all_num &= x.is_number();
      all_str &= x.is_string();
    }
    if (v.empty()) return std::vector<double>{};
    if (all_int) return v.get<std::vector<int64_t>>();
    if (all_num) return v.get<std::vector<double>>();
    if (all_str) return v.get<std::vector<std::string>>();
  }
  throw ValueError(where + ": unsupported argument value " + v.dump());
}

// [node, output] of a document node `i` refers to -> the builder's value (the builder may add
// nodes of its own, so indices differ).
Value to_value(const Json& ref, const std::vector<std::vector<Value>>& added, size_t i,
               const std::string& where) {
  STOKER_ENFORCE(
      ref.is_array() && ref.size() == 2 && ref[0].is_number_integer() && ref[1].is_number_integer(),
      ValueError, where, ": an input must be [node, output], got ", ref.dump());
  const int64_t node = ref[0].get<int64_t>(), output = ref[1].get<int64_t>();
  STOKER_ENFORCE(node >= 0 && size_t(node) < std::min(i, added.size()) && output >= 0 &&
                     size_t(output) < added[size_t(node)].size(),
                 ValueError, where, " reads output ", output, " of node ", node,
                 ", which does not come before it");
  return added[size_t(node)][size_t(output)];
}

template <typename T>
T field(const Json& doc, const char* key, T fallback) {
  if (!doc.contains(key) || doc[key].is_null()) return fallback;
  try {
    return doc[key].get<T>();
  } catch (const Json::exception&) {
    throw ValueError(std::string("Pipeline::from_json: option '") + key + "' is " +
                     doc[key].dump());
  }
}

}  // namespace

std::unique_ptr<Pipeline> Pipeline::from_json(const std::string& json,
                                              const std::function<void(PipelineOptions&)>& adjust) {
  Json doc;
  try {
    doc = Json::parse(json);
  } catch (const Json::parse_error& e) {
    throw ValueError(std::string("Pipeline::from_json: not JSON (") + e.what() + ")");
  }
  STOKER_ENFORCE(doc.is_object() && doc.value("format", "") == "stoker.pipeline", ValueError,
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
  } else if (doc.contains("prefetch_queue_depth")) {
    const auto& q = doc["prefetch_queue_depth"];
    o.prefetch_queue_depth = field<int>(q, "cpu_size", o.prefetch_queue_depth);
    o.gpu_queue_depth = field<int>(q, "gpu_size", o.gpu_queue_depth);
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
    no.name = n.value("name", "");
    no.device = n.value("device", "cpu");
    no.defined_at = "serialized node " + std::to_string(i);
    const std::string where =
        "Pipeline::from_json: node " + std::to_string(i) + " ('" + no.name + "', " + op + ")";
    STOKER_ENFORCE(op != "external_source", ValueError, where,
                   " is an external_source, which needs a Python source");
    // value() returns copies: kept here, as the loops below iterate into them.
    const Json in = n.value("inputs", Json::array()), a = n.value("args", Json::object()),
               ai = n.value("arg_inputs", Json::object());
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

}  // namespace stoker
