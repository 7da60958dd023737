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

// The graph with GPU augmentation chains fused into one kernel that never writes an
// intermediate image: a gpu crop_mirror_normalize whose input comes, through any gpu crops
// (without padding) and flips, from a gpu resize or random_resized_crop, each used by nothing
// else, takes over their work (OpSpec::fused_first, fused_middle) and the resize's input; a
// bilinear gpu warp_affine or rotate whose input is a gpu flip used by nothing else takes over
// the flip (fused_middle) and its input. A transpose between HWC and CHW, or a cast to
// float16/float32/uint8/int8, that only follows a float32 crop_mirror_normalize becomes that
// operator's output_layout or dtype (the same values: its rounding is the cast's). Instance
// numbers (random streams) are kept.
Graph fuse(const Graph& g);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace stoker::pipeline
