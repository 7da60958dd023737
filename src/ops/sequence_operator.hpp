// Sequences through image operators, as DALI's "sequence inputs".
//
// An operator whose schema sets `sequences` also takes batches of sequences: an input whose
// layout starts with F (FHWC, FCHW). SequenceOperator unfolds every sequence into its frames
// (views of the sequence's memory: no copy), runs the operator once on the batch of all frames
// (one kernel launch on the GPU), and folds its outputs back into sequences (views again where
// the operator wrote a sequence's frames back to back, as add_output does; a copy otherwise).
//   - The frames of a sample share the sample's argument values and its random draws
//     (Workspace::frames maps each frame to its sequence): random_resized_crop cuts one window
//     for the whole clip, coin_flip(mirror) flips all its frames or none.
//   - An argument given per frame (per_frame: a per-sample tensor whose layout starts with F)
//     has one value per frame of its sequence, or one for all frames.
//   - Other inputs are sequences with the same frame counts (unfolded alike) or samples
//     (repeated for every frame of their sequence).
//   - An `output_layout` with F (crop_mirror_normalize's FCHW or CFHW) says where the frame axis
//     goes: the operator runs with the layout without F; CFHW (channels outermost, what 3-D
//     convolutions take) is gathered from the frames' planes.
// Frames of one sequence must come out alike in shape (a per-frame crop size that differs is an
// error naming the sample), as DALI requires.
#pragma once

#include <memory>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {

// The operator for `spec` on its backend: the schema's factory, wrapped in SequenceOperator
// when the schema takes sequences. What the executor instantiates.
std::unique_ptr<Operator> make_operator(const OpSpec& spec);

}  // namespace stoker::ops
