// Every operator runs its schema's example (OpExample) on an empty batch (no samples): the
// output batches are empty too, with no crash, no allocation trouble and no error; sources
// (random.*) run with batch size 0. Readers and external_source choose their own batch size and
// have no example. A new operator is covered by its schema, not by a list here.
#include <gtest/gtest.h>

#include "stoker/ops/op_test_util.hpp"
#include "stoker/ops/registry.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

// Operators whose example runs here: those with a CPU backend (copy_to_device has none; the
// GPU tests cover its empty batches).
std::vector<const OpSchema*> runnable() {
  std::vector<const OpSchema*> out;
  for (const auto& s : op_schemas())
    if (s.example && s.supports(Backend::kCpu)) out.push_back(&s);
  return out;
}

// Input k of the example.
Batch input_batch(const OpExample& e, const std::vector<TensorShape>& shapes, size_t k) {
  const auto other = e.input_dtypes.find(int(k));
  const std::string& dtype = other == e.input_dtypes.end() ? e.dtype : other->second;
  return Batch::allocate(default_host_pool(), dtype_from_name(dtype), shapes, e.layout);
}

TEST(EmptyBatch, EveryOperatorHasAnExample) {
  for (const auto& s : op_schemas()) {
    // Readers (readers.*, experimental.readers.*) and external inputs choose their own batches.
    const bool own_batch_size =
        s.name.find("readers.") != std::string::npos || s.external_input;
    EXPECT_TRUE(s.example.has_value() || own_batch_size)
        << s.name << ": give its schema an `example` (the smallest valid arguments)";
  }
}

TEST(EmptyBatch, EveryOperatorGivesEmptyOutputs) {
  for (const OpSchema* schema : runnable()) {
    SCOPED_TRACE(schema->name);
    const OpExample& e = *schema->example;
    OpRunner r(schema->name, e.args);
    std::vector<Batch> inputs;
    for (size_t k = 0; k + size_t(schema->optional_inputs) < schema->inputs.size(); ++k) {
      inputs.push_back(input_batch(e, {}, k));
    }
    std::vector<Batch> out;
    ASSERT_NO_THROW(out = r.run(std::move(inputs), 0));
    ASSERT_FALSE(out.empty());
    for (const auto& b : out) EXPECT_EQ(b.size(), 0);
  }
}

// A sample with no pixels (0 rows; encoded data of 0 bytes) gives an empty result or a stoker
// error, never a crash (the sanitizer build checks the memory accesses).
TEST(EmptyBatch, ZeroSizedSamplesGiveResultsOrErrors) {
  for (const OpSchema* schema : runnable()) {
    SCOPED_TRACE(schema->name);
    if (schema->inputs.empty()) continue;
    const OpExample& e = *schema->example;
    OpRunner r(schema->name, e.args);
    const std::vector<TensorShape> shapes =
        e.layout == "HWC" ? std::vector<TensorShape>{{0, 5, 3}, {5, 0, 3}, {0, 0, 3}}
                          : std::vector<TensorShape>{{0}};
    for (const auto& shape : shapes) {
      std::vector<Batch> inputs;
      for (size_t k = 0; k + size_t(schema->optional_inputs) < schema->inputs.size(); ++k) {
        inputs.push_back(input_batch(e, {shape}, k));
      }
      try {
        auto out = r.run(std::move(inputs), 1);
        for (const auto& b : out) EXPECT_EQ(b.size(), 1);
      } catch (const Error& e) {
        EXPECT_FALSE(std::string(e.what()).empty());
      }
    }
  }
}

}  // namespace
}  // namespace stoker::ops
