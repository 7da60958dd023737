// Operator schemas as data: name, documentation, inputs, outputs, arguments (type, default,
// doc, whether a per-sample tensor may replace the constant) and backends. The Python fn.*
// functions, their signatures and docstrings are generated from these at import.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace stoker::ops {

enum class ArgType { kBool, kInt, kFloat, kString, kIntList, kFloatList, kStringList, kDType };
std::string_view arg_type_name(ArgType t);

using ArgValue = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                              std::vector<double>, std::vector<std::string>>;
// Python-like text of a value: True, 3, 0.5, 'RGB', [1, 2].
std::string format_arg_value(const ArgValue& v);

// A reader's dataset and shard (Operator::reader_meta(), Pipeline::reader_meta()).
struct ReaderMeta {
  int64_t epoch_size = 0;         // samples in the whole dataset (all shards)
  int64_t epoch_size_padded = 0;  // with pad_last_batch: ceil(N / shards) x shards (DALI's)
  int64_t shard_size = 0;         // samples per epoch of this reader (padded when asked)
  int shard_id = 0;
  int num_shards = 1;
  bool pad_last_batch = false;
  bool stick_to_shard = false;
  template <typename Self, typename F>
  static void fields(Self& s, F&& f) {
    f("epoch_size", s.epoch_size), f("shard_size", s.shard_size), f("shard_id", s.shard_id),
        f("number_of_shards", s.num_shards), f("epoch_size_padded", s.epoch_size_padded),
        f("pad_last_batch", s.pad_last_batch), f("stick_to_shard", s.stick_to_shard);
  }
};

struct ArgSchema {
  std::string name;
  ArgType type = ArgType::kInt;
  std::string doc;
  std::optional<ArgValue> default_value;  // none: required, unless `optional`
  bool per_sample = false;        // a per-sample tensor (another operator's output) may be given
  bool optional = false;          // may be left unset with no default ("None")
  bool number_as_string = false;  // a string argument that also takes a number ("auto" or 0.7)
  bool bool_as_string = false;    // a string argument that also takes True/False ('True')
};

// An argument that may be left unset (no default, "None"); with per_sample, a constant or a
// per-sample tensor.
inline ArgSchema optional_arg(std::string name, ArgType type, std::string doc,
                              bool per_sample = true) {
  ArgSchema a{std::move(name), type, std::move(doc)};
  a.optional = true;
  a.per_sample = per_sample;
  return a;
}

// DALI's per-operator `seed`, for every operator that draws random numbers
// (Operator::sample_rng): operators given the same seed draw the same numbers.
inline ArgSchema seed_arg() {
  return {"seed", ArgType::kInt,
          "This operator's own random seed (as DALI's): operators given the same seed draw the "
          "same numbers, whatever the pipeline's seed; -1: derived from the pipeline's seed and "
          "the operator's place in the pipeline.",
          int64_t{-1}};
}

enum class Backend { kCpu, kMixed, kGpu };
std::string_view backend_name(Backend b);

class Operator;
struct OpSpec;

// What an operator's gpu backend offers the graph's fusion pass (pipeline::fuse), which
// composes what operators declare and names none of them.
struct FusionTraits {
  // A resampling chain: a kStart (a resize) feeding kMiddle steps (crops, flips), each used
  // only by the next, and then a kEnd (a normalisation) becomes the kEnd node doing all their
  // work in one pass (OpSpec::fused_first, fused_middle); every step is a ResamplingStep.
  enum class Chain { kNone, kStart, kMiddle, kEnd };
  Chain chain = Chain::kNone;
  // A per-sample mirror (horizontal, vertical flags) that a warp can compose into its map.
  bool mirror = false;
  // Takes a mirror feeding it into its own map (OpSpec::fused_middle).
  bool absorbs_mirror = false;
  // Whether this node may take the roles above with its arguments (empty: always): a padding
  // crop may not sit in a chain; only a bilinear warp composes a mirror exactly.
  std::function<bool(const OpSpec&)> fusable;
  // Takes over the gpu node `next` that reads only its output, by changing its own arguments
  // (a normalisation producing the layout or dtype a following transpose or cast would):
  // returns false, changing nothing, when it cannot.
  std::function<bool(OpSpec& self, const OpSpec& next)> absorb_next;
};

// The smallest valid use of an operator: arguments, and its inputs' dtype and layout. Every
// operator's generated tests run it this way (an empty batch, zero-sized samples), and the
// operator reference shows it.
struct OpExample {
  std::map<std::string, ArgValue> args;
  std::string dtype = "uint8";
  std::string layout = "HWC";
  // Inputs of other types than `dtype`, by position (box_encoder's int32 labels).
  std::map<int, std::string> input_dtypes;
};

struct OpSchema {
  std::string name;  // dotted: "readers.file", "decoders.image", "random.coin_flip"
  std::string doc;
  std::vector<std::string> inputs;   // positional (required but optional_inputs)
  bool variadic_inputs = false;      // the last input may repeat (cat, stack)
  int optional_inputs = 0;           // how many of the last inputs may be left out (slice's
                                     // anchor and shape)
  int host_inputs = 0;               // gpu backend: the last k inputs stay host data, read by
                                     // the operator's planning (slice's anchor and shape)
  std::vector<std::string> outputs;  // names of the outputs (fixed count)
  // For operators whose outputs depend on their arguments or inputs (readers.tfrecord: one
  // output per feature; random_bbox_crop: labels when given labels): the names for a given spec
  // (its args and the number of its inputs). Empty function: `outputs`.
  std::function<std::vector<std::string>(const OpSpec&)> output_names;
  // Or: a string-list argument with one entry per output (readers.webdataset's `ext`).
  std::string outputs_from;
  std::vector<ArgSchema> args;
  // Draws random numbers (Operator::sample_rng): the registry adds DALI's `seed` (seed_arg).
  bool random = false;
  // One factory per backend the operator has (cpu: CPU in and out; mixed: CPU in, GPU out;
  // gpu: GPU in and out). An empty factory: no such backend.
  using Factory = std::function<std::unique_ptr<Operator>(const OpSpec&)>;
  Factory make_cpu;
  Factory make_mixed;
  Factory make_gpu;
  FusionTraits fusion;
  // Fed from outside the pipeline (Pipeline::feed_input): a serialised pipeline cannot hold it.
  bool external_input = false;
  // Its outputs hold other samples than its inputs, sample for sample (an `if`'s split and
  // merge): on_error="skip" cannot replace a sample once such a node ran before the failing one.
  bool regroups_samples = false;
  // Takes sequences too (ops/sequence_operator.hpp): an input whose layout starts with F runs
  // frame by frame, the frames of a sample sharing its arguments and random draws unless an
  // argument is given per frame (per_frame).
  bool sequences = false;
  // With `sequences`: the outputs (by index) that describe a whole sample rather than a frame
  // (resize's save_attrs: the input's extents, alike in every frame). A sequence gets its
  // first frame's, without a frame axis.
  std::vector<int> per_sequence_outputs;
  // None only for sources that choose their own batch size (readers, external_source).
  std::optional<OpExample> example;
  // The older names DALI still accepts for this operator, with a DeprecationWarning naming
  // this one (fn.file_reader for readers.file); Python's fn and ops offer them too.
  std::vector<std::string> deprecated_names;

  const ArgSchema* find_arg(std::string_view arg) const;
  const Factory& factory(Backend b) const;
  bool supports(Backend b) const { return bool(factory(b)); }
  std::vector<Backend> backends() const;
};

}  // namespace stoker::ops
