// The pipeline graph: operator specs in definition order (a topological order by construction:
// inputs must exist before they are used), the outputs, validation and pruning.
#pragma once

#include <string>
#include <vector>

#include "stoker/ops/op_spec.hpp"

namespace stoker::pipeline {

struct Graph {
  std::vector<ops::OpSpec> nodes;
  std::vector<ops::InputRef> outputs;
};

// Checks a node about to be added to `g` (schema found, backend supported, inputs and argument
// inputs valid, arguments known/typed/required). Converts argument values in place. Errors
// name the operator and where it was defined.
void validate_node(const Graph& g, ops::OpSpec& node);

// A graph holding only the nodes the outputs depend on, re-indexed, order kept. Instance
// numbers (random streams) are preserved.
Graph prune(const Graph& g);

// The graph with what operators declare fusable (OpSchema::fusion) fused; it names no operator.
// A resampling chain of gpu nodes, each used only by the next (a kStart, any kMiddle steps, a
// kEnd: today resize or random_resized_crop, crops without padding and flips,
// crop_mirror_normalize), becomes the kEnd node doing their work in one kernel that never
// writes an intermediate image (OpSpec::fused_first, fused_middle, and the start's input); a
// mirror (flip) used only by a node absorbing mirrors (a bilinear warp) becomes part of it; a
// gpu node that reads only a node declaring absorb_next is taken over by it when that says so
// (a transpose to or from CHW, or a cast, after crop_mirror_normalize). Instance numbers
// (random streams) are kept.
Graph fuse(const Graph& g);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace stoker::pipeline
