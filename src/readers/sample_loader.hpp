// SampleLoader: the order in which a reader visits its dataset — sharding, shuffling, padding
// and epochs — independent of the container format, with a state that can be saved and
// restored exactly (checkpoints). The contract, for every option: one epoch of one loader
// delivers each sample of its shard exactly once (plus padding at the epoch's end), and the
// epochs of all shards together deliver each sample of the dataset exactly once.
//
// Sharding follows DALI: shard k of n holds positions [floor(N*k/n), floor(N*(k+1)/n)) of the
// dataset's order. An epoch reads one shard: its own when `stick_to_shard`, otherwise shard
// (k + epoch) mod n, so that over n epochs every loader sees the whole dataset (DALI's
// default). With `pad_last_batch` every epoch ends with repeats of its last delivered sample
// up to the same batch-divisible length on all shards (ceil(ceil(N/n) / batch) * batch), so
// that batches never straddle epochs.
//
// The dataset's order (position -> sample index), as DALI 2.4 orders it:
// - identity by default;
// - `preshuffle` (DALI's file and numpy readers with random_shuffle): one fixed permutation,
//   std::shuffle with std::mt19937(524287), the same on every shard and in every run, so that
//   shards are random subsets of the dataset rather than runs of sorted class folders;
// - `shuffle_after_epoch`: epoch e uses std::shuffle with std::mt19937_64(seed + ((e+1) << 32))
//   applied to epoch e-1's order (the whole list), or, when `file_starts` is given
//   (TFRecord, RecordIO, webdataset), to the order of the files alone (fresh every epoch,
//   samples stay in file order). Implies stick_to_shard, as in DALI.
// - kGlobal (stoker's shuffle="global"): epoch e uses a fresh Philox permutation of the whole
//   dataset seeded by the pipeline seed and e.
// The standard library's algorithms are what DALI runs (libstdc++), so these orders are
// DALI's exactly; the parity tests check them against DALI itself.
//
// kBuffer (DALI's random_shuffle): samples pass through a buffer of `initial_fill`; each
// output is drawn uniformly among the buffered samples of the epoch being delivered, and is
// replaced by the next sample of the sequential stream. The stream runs on into the next
// epoch, but those samples wait in the buffer until their epoch begins (DALI's rule: epochs
// never mix). The draws come from random_stream(seed, instance, ...): the order is a pure
// function of the seed, never of timing.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::readers {

enum class ShuffleMode { kNone, kBuffer, kGlobal };
// "none" | "buffer" | "global"; throws ValueError otherwise.
ShuffleMode parse_shuffle_mode(std::string_view s);

// DALI's kDaliDataloaderSeed: the fixed seed of its file-list shuffles.
inline constexpr uint64_t kDaliLoaderSeed = 524287;

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
  bool preshuffle = false;
  bool shuffle_after_epoch = false;
  uint64_t shuffle_after_epoch_seed = kDaliLoaderSeed;
  // First sample index of each container file, ascending from 0 (shuffle_after_epoch
  // shuffles files, not samples, when given).
  std::vector<int64_t> file_starts;
};

class SampleLoader {
 public:
  // Throws ValueError for options no loader can honour (an empty shard, a bad shard id,
  // shuffle_after_epoch with stick_to_shard or the global shuffle).
  SampleLoader(int64_t dataset_size, const LoaderOptions& options);

  struct Next {
    int64_t index = 0;    // into the dataset
    int64_t epoch = 0;    // the epoch this sample is delivered in
    bool padded = false;  // a repeat added by pad_last_batch
  };
  Next next();

  int64_t dataset_size() const { return dataset_size_; }
  // Begin and size of shard k (default: this loader's own shard).
  int64_t shard_begin(int k = -1) const;
  int64_t shard_size(int k = -1) const;
  // Samples per epoch: the padded length with pad_last_batch, else the shard's size.
  int64_t epoch_length(int64_t epoch = 0) const;
  // DALI's epoch_size_padded: with pad_last_batch, ceil(N / shards) * shards (every shard
  // padded to the largest; epochs are longer still, to whole batches), else N.
  int64_t epoch_size_padded() const;

  // The complete state as text (no newlines); restore_state() continues exactly from it.
  std::string save_state() const;
  // Throws ValueError when the text is not a state of a loader with these options.
  void restore_state(std::string_view state);

 private:
  struct Stream {
    int64_t index;
    int64_t epoch;
  };
  Stream sequential();
  Stream draw_from_buffer();
  int virtual_shard(int64_t epoch) const;
  const std::vector<int64_t>& order(int64_t epoch);

  int64_t dataset_size_;
  LoaderOptions options_;
  int64_t padded_length_ = 0;
  // Sequential stream position (ahead of delivery by the buffer's length).
  int64_t stream_epoch_ = 0;
  int64_t stream_position_ = 0;
  // Delivery position.
  int64_t epoch_ = 0;
  int64_t position_ = 0;
  int64_t last_index_ = 0;  // the last delivered sample (what padding repeats)
  // Buffer shuffle: the stream's samples not yet delivered, in stream order.
  uint64_t draws_ = 0;
  std::deque<Stream> buffer_;
  // The dataset order of epoch order_epoch_ (empty: identity).
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
};

}  // namespace stoker::readers
