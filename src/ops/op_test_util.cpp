#include "stoker/ops/op_test_util.hpp"

#include <cstring>

#include "stoker/ops/sequence_operator.hpp"

namespace stoker::ops::testing {

OpRunner::OpRunner(const std::string& op, const std::map<std::string, ArgValue>& args, int threads,
                   uint64_t seed, int64_t instance)
    : OpRunner(spec(op, args, instance), threads, seed) {}

OpRunner::OpRunner(OpSpec spec, int threads, uint64_t seed)
    : spec_(std::move(spec)), pool_(make_host_allocator()), threads_(threads), seed_(seed) {
  op_ = make_operator(spec_);  // as the executor makes it (sequences included)
}

OpSpec OpRunner::spec(const std::string& op, const std::map<std::string, ArgValue>& args,
                      int64_t instance) {
  OpSpec s;
  s.schema = find_op_schema(op);
  STOKER_ASSERT(s.schema, "unknown op ", op);
  s.name = op;
  s.instance = instance;
  s.defined_at = "test";
  for (auto& [k, v] : args) {
    const ArgSchema* a = s.schema->find_arg(k);
    STOKER_ASSERT(a, op, " has no argument ", k);
    s.args[k] = coerce_arg(*s.schema, *a, v);
  }
  return s;
}

std::vector<Batch> OpRunner::run(std::vector<Batch> inputs, int batch_size,
                                 const std::map<std::string, Batch>& arg_inputs,
                                 const std::vector<std::map<std::string, Batch>>& fused_arg_inputs) {
  Workspace ws;
  ws.outputs.reserve(16);
  for (auto& b : inputs) ws.inputs.push_back(&b);
  for (auto& [k, b] : arg_inputs) ws.arg_inputs[k] = &b;
  for (const auto& step : fused_arg_inputs) {
    auto& args = ws.fused_arg_inputs.emplace_back();
    for (auto& [k, b] : step) args[k] = &b;
  }
  ws.pool = &threads_;
  ws.host_pool = &pool_;
  ws.batch_size = batch_size >= 0 ? batch_size : (inputs.empty() ? 1 : inputs[0].size());
  ws.iteration = iteration++;
  ws.seed = seed_;
  op_->run(ws);
  return std::move(ws.outputs);
}

Batch bytes_batch(const std::vector<std::vector<uint8_t>>& samples,
                  const std::vector<std::string>& sources) {
  std::vector<TensorShape> shapes;
  shapes.reserve(samples.size());
  for (auto& s : samples) shapes.push_back(TensorShape{int64_t(s.size())});
  auto b = Batch::allocate(default_host_pool(), DType::kU8, shapes);
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].empty()) std::memcpy(b.data(int(i)), samples[i].data(), samples[i].size());
    if (i < sources.size()) b.set_source_info(int(i), sources[i]);
  }
  return b;
}

Batch image_batch(const std::vector<std::vector<uint8_t>>& pixels,
                  const std::vector<TensorShape>& shapes) {
  auto b = Batch::allocate(default_host_pool(), DType::kU8, shapes, "HWC");
  for (size_t i = 0; i < pixels.size(); ++i)
    std::memcpy(b.data(int(i)), pixels[i].data(), pixels[i].size());
  return b;
}

}  // namespace stoker::ops::testing
