// OpSpec: one operator instance in a pipeline graph — its schema, validated arguments,
// inputs, and where the user defined it (for error messages).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/ops/schema.hpp"

namespace stoker::ops {

struct InputRef {
  int node = -1;   // index of the producing node in the graph
  int output = 0;  // which of its outputs
};

struct OpSpec {
  const OpSchema* schema = nullptr;
  std::string name;        // unique in the pipeline (user-given or generated)
  int64_t instance = 0;    // position in definition order; keys the operator's random streams
  std::string defined_at;  // "train.py:12", or "" when unknown
  Backend backend = Backend::kCpu;
  int num_outputs = 0;  // set by validation (schema outputs, or output_names(spec))
  int batch_size = 1;   // the pipeline's batch size (readers pad and size epochs with it)
  std::map<std::string, ArgValue, std::less<>> args;  // given (converted) constants
  std::vector<InputRef> inputs;
  std::map<std::string, InputRef, std::less<>> arg_inputs;  // per-sample argument tensors
  // Set by the graph's fusion pass: this operator also does the work of `fused_first` and then
  // of `fused_middle` (in order), whose input it now takes. Each keeps its own per-sample
  // arguments (its arg_inputs, re-indexed with the graph; its inputs are cleared), which the
  // executor binds as Workspace::fused_arg_inputs, in fused_steps() order.
  std::shared_ptr<const OpSpec> fused_first;
  std::vector<std::shared_ptr<const OpSpec>> fused_middle;
  // fused_first (when set), then fused_middle.
  std::vector<const OpSpec*> fused_steps() const {
    std::vector<const OpSpec*> steps;
    if (fused_first) steps.push_back(fused_first.get());
    for (const auto& m : fused_middle) steps.push_back(m.get());
    return steps;
  }

  // "decoders.image (defined at train.py:12)"
  std::string describe() const;
  bool has_arg(std::string_view arg) const { return args.count(arg) > 0; }
  // Given by the user at all: as a constant or as a per-sample tensor.
  bool given(std::string_view arg) const { return has_arg(arg) || arg_inputs.count(arg) > 0; }
  // The given value or the schema default, converted to T (bool, int64_t, double, std::string
  // or vectors of those). Throws InternalError for unknown names (a schema bug).
  template <typename T>
  T arg(std::string_view arg) const;
};

// Checks a user-given value against the schema and converts it: int -> float, scalar -> list,
// bool -> int; dtype names are validated. Throws TypeError/ValueError naming op and argument.
ArgValue coerce_arg(const OpSchema& schema, const ArgSchema& arg, ArgValue value);

}  // namespace stoker::ops
