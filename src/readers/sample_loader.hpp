// SampleLoader: the order in which a reader visits its dataset — sharding, shuffling, padding
// and epochs — independent of the container format, with a state that can be saved and
// restored exactly (checkpoints).
//
// Sharding follows DALI: shard k of n holds the contiguous index range
// [floor(N*k/n), floor(N*(k+1)/n)). An epoch of this loader reads one shard: its own when
// `stick_to_shard`, otherwise shard (k + epoch) mod n, so that over n epochs every loader
// sees the whole dataset (DALI's default). With `pad_last_batch` every epoch is padded, by
// repeating the shard's last sample, to the same batch-divisible length for all shards
// (ceil(max shard size / batch) * batch), so that batches never straddle epochs.
//
// Shuffling:
// - kBuffer (DALI's random_shuffle): samples pass through a buffer of `initial_fill`; each
//   output is drawn uniformly from it and replaced by the next sample of the sequential
//   stream, which continues into the next epoch.
// - kGlobal: epoch e uses a fresh permutation of the whole dataset (seeded by seed and e, the
//   same on every shard); shard k reads positions [floor(N*k/n), floor(N*(k+1)/n)) of it, so
//   over all shards every sample is read exactly once per epoch.
// All draws come from random_stream(seed, instance, ...): the order is a pure function of the
// seed, never of timing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::readers {

enum class ShuffleMode { kNone, kBuffer, kGlobal };
// "none" | "buffer" | "global"; throws ValueError otherwise.
ShuffleMode parse_shuffle_mode(std::string_view s);

struct LoaderOptions {
  int shard_id = 0;
  int num_shards = 1;
  bool stick_to_shard = false;
  bool pad_last_batch = false;
  int batch_size = 1;  // for pad_last_batch
  ShuffleMode shuffle = ShuffleMode::kNone;
  int initial_fill = 1024;
  uint64_t seed = 0;
  uint64_t instance = 0;  // the operator instance, so two readers shuffle differently
};

class SampleLoader {
 public:
  SampleLoader(int64_t dataset_size, const LoaderOptions& options);

  struct Next {
    int64_t index = 0;    // into the dataset
    int64_t epoch = 0;    // epoch of the sequential stream this sample came from
    bool padded = false;  // a repeat added by pad_last_batch
  };
  Next next();

  int64_t dataset_size() const { return dataset_size_; }
  // Begin and size of shard k (default: this loader's own shard).
  int64_t shard_begin(int k = -1) const;
  int64_t shard_size(int k = -1) const;
  // Samples per epoch: the padded length with pad_last_batch, else the shard's size.
  int64_t epoch_length(int64_t epoch = 0) const;
  // Padded samples per epoch summed over all shards (DALI's epoch_size_padded).
  int64_t epoch_size_padded() const;

  // The complete state as text (no newlines); restore_state() continues exactly from it.
  std::string save_state() const;
  // Throws ValueError when the text is not a state of a loader with these options.
  void restore_state(std::string_view state);

 private:
  Next sequential();
  int virtual_shard(int64_t epoch) const;
  void make_permutation(int64_t epoch);

  int64_t dataset_size_;
  LoaderOptions options_;
  int64_t padded_length_ = 0;
  // Sequential stream position.
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  // Buffer shuffle.
  uint64_t draws_ = 0;
  std::vector<Next> buffer_;
  // Global shuffle: the permutation of epoch permutation_epoch_.
  std::vector<int64_t> permutation_;
  int64_t permutation_epoch_ = -1;
};

}  // namespace stoker::readers
