#include "stoker/readers/sample_loader.hpp"

#include "stoker/core/error.hpp"
#include "stoker/core/rng.hpp"

namespace stoker::readers {

SampleLoader::SampleLoader(int64_t dataset_size, const LoaderOptions& o)
    : dataset_size_(dataset_size), options_(o) {
  STOKER_ENFORCE(o.num_shards >= 1, ValueError, "num_shards must be at least 1, got ",
                 o.num_shards);
  STOKER_ENFORCE(o.shard_id >= 0 && o.shard_id < o.num_shards, ValueError,
                 "shard_id must be in [0, num_shards) = [0, ", o.num_shards, "), got ", o.shard_id);
  STOKER_ENFORCE(o.initial_fill >= 1, ValueError, "initial_fill must be at least 1, got ",
                 o.initial_fill);
  begin_ = dataset_size * o.shard_id / o.num_shards;
  end_ = dataset_size * (o.shard_id + 1) / o.num_shards;
  STOKER_ENFORCE(end_ > begin_, ValueError, "shard ", o.shard_id, " of ", o.num_shards,
                 " is empty: the dataset has only ", dataset_size, " samples");
}

SampleLoader::Next SampleLoader::sequential() {
  Next n{begin_ + position_, epoch_};
  if (++position_ == end_ - begin_) {
    position_ = 0;
    ++epoch_;
  }
  return n;
}

SampleLoader::Next SampleLoader::next() {
  if (!options_.random_shuffle) return sequential();
  const size_t fill = size_t(std::min<int64_t>(options_.initial_fill, shard_size()));
  while (buffer_.size() < fill) buffer_.push_back(sequential());
  auto rng = random_stream(options_.seed, options_.instance, draws_++);
  size_t pick = rng.below(uint32_t(buffer_.size()));
  Next out = buffer_[pick];
  buffer_[pick] = sequential();
  return out;
}

}  // namespace stoker::readers
