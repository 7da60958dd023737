// Test helper: runs one operator outside a pipeline on given input batches.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/ops/registry.hpp"

namespace stoker::ops::testing {

class OpRunner {
 public:
  OpRunner(const std::string& op, const std::map<std::string, ArgValue>& args, int threads = 2,
           uint64_t seed = 42, int64_t instance = 0);
  // The CPU backend of a spec made by spec() and changed (e.g. fused_middle set, as the graph's
  // fusion pass does).
  explicit OpRunner(OpSpec spec, int threads = 2, uint64_t seed = 42);
  static OpSpec spec(const std::string& op, const std::map<std::string, ArgValue>& args,
                     int64_t instance = 0);
  // Runs one iteration; `arg_inputs` bind per-sample arguments, `fused_arg_inputs` those of the
  // operators fused into this one (OpSpec::fused_steps() order).
  std::vector<Batch> run(std::vector<Batch> inputs, int batch_size = -1,
                         const std::map<std::string, Batch>& arg_inputs = {},
                         const std::vector<std::map<std::string, Batch>>& fused_arg_inputs = {});
  MemoryPool& pool() { return pool_; }
  Operator& op() { return *op_; }
  int64_t iteration = 0;

 private:
  OpSpec spec_;
  MemoryPool pool_;
  ThreadPool threads_;
  uint64_t seed_;
  std::unique_ptr<Operator> op_;
};

// A batch of 1-D uint8 byte strings with source_info set to the given names.
Batch bytes_batch(const std::vector<std::vector<uint8_t>>& samples,
                  const std::vector<std::string>& sources);
// A batch of scalars of type T.
template <typename T>
Batch scalar_batch(const std::vector<T>& values) {
  auto b = Batch::allocate(default_host_pool(), dtype_of<T>,
                           std::vector<TensorShape>(values.size(), TensorShape{}));
  for (size_t i = 0; i < values.size(); ++i) b.template data_as<T>(int(i))[0] = values[i];
  return b;
}
// A batch of HWC uint8 images.
Batch image_batch(const std::vector<std::vector<uint8_t>>& pixels,
                  const std::vector<TensorShape>& shapes);

}  // namespace stoker::ops::testing
