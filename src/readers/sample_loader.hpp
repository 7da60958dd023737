// SampleLoader: the order in which a reader visits its dataset — sharding, shuffling and
// epochs — independent of the container format.
//
// Sharding follows DALI: shard k of n holds the contiguous index range
// [floor(N*k/n), floor(N*(k+1)/n)). The loader cycles through its shard, epoch after epoch
// (stick_to_shard semantics). With random_shuffle, samples pass through a buffer of
// `initial_fill` entries and each output is drawn from it uniformly (as DALI does); draws come
// from random_stream(seed, instance, draw number), so the order is a pure function of the seed.
#pragma once

#include <cstdint>
#include <vector>

namespace stoker::readers {

struct LoaderOptions {
  int shard_id = 0;
  int num_shards = 1;
  bool random_shuffle = false;
  int initial_fill = 1024;
  uint64_t seed = 0;
  uint64_t instance = 0;  // the operator instance, so two readers shuffle differently
};

class SampleLoader {
 public:
  SampleLoader(int64_t dataset_size, const LoaderOptions& options);

  struct Next {
    int64_t index;  // into the dataset
    int64_t epoch;  // epoch in which this sample entered the loader
  };
  Next next();

  int64_t dataset_size() const { return dataset_size_; }
  int64_t shard_begin() const { return begin_; }
  int64_t shard_size() const { return end_ - begin_; }

 private:
  Next sequential();

  int64_t dataset_size_;
  LoaderOptions options_;
  int64_t begin_ = 0, end_ = 0;
  int64_t position_ = 0;  // next sequential index within the shard
  int64_t epoch_ = 0;
  uint64_t draws_ = 0;
  std::vector<Next> buffer_;
};

}  // namespace stoker::readers
