#include "stoker/readers/sample_loader.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "stoker/core/error.hpp"
#include "stoker/core/rng.hpp"

namespace stoker::readers {

ShuffleMode parse_shuffle_mode(std::string_view s) {
  if (s == "none") return ShuffleMode::kNone;
  if (s == "buffer") return ShuffleMode::kBuffer;
  if (s == "global") return ShuffleMode::kGlobal;
  throw ValueError(detail::concat("shuffle must be 'none', 'buffer' or 'global', got '", s, "'"));
}

SampleLoader::SampleLoader(int64_t dataset_size, const LoaderOptions& o)
    : dataset_size_(dataset_size), options_(o) {
  STOKER_ENFORCE(o.num_shards >= 1, ValueError, "num_shards must be at least 1, got ",
                 o.num_shards);
  STOKER_ENFORCE(o.shard_id >= 0 && o.shard_id < o.num_shards, ValueError,
                 "shard_id must be in [0, num_shards) = [0, ", o.num_shards, "), got ", o.shard_id);
  STOKER_ENFORCE(o.initial_fill >= 1, ValueError, "initial_fill must be at least 1, got ",
                 o.initial_fill);
  STOKER_ENFORCE(o.batch_size >= 1, ValueError, "batch_size must be at least 1");
  int64_t smallest = dataset_size, largest = 0;
  for (int k = 0; k < o.num_shards; ++k) {
    smallest = std::min(smallest, shard_size(k));
    largest = std::max(largest, shard_size(k));
  }
  STOKER_ENFORCE(smallest > 0, ValueError, "num_shards=", o.num_shards,
                 " leaves a shard empty: the dataset has only ", dataset_size, " samples");
  padded_length_ = (largest + o.batch_size - 1) / o.batch_size * o.batch_size;
}

int64_t SampleLoader::shard_begin(int k) const {
  if (k < 0) k = options_.shard_id;
  return dataset_size_ * k / options_.num_shards;
}

int64_t SampleLoader::shard_size(int k) const {
  if (k < 0) k = options_.shard_id;
  return dataset_size_ * (k + 1) / options_.num_shards - shard_begin(k);
}

int SampleLoader::virtual_shard(int64_t epoch) const {
  if (options_.stick_to_shard || options_.shuffle == ShuffleMode::kGlobal) return options_.shard_id;
  return int((options_.shard_id + epoch) % options_.num_shards);
}

int64_t SampleLoader::epoch_length(int64_t epoch) const {
  return options_.pad_last_batch ? padded_length_ : shard_size(virtual_shard(epoch));
}

int64_t SampleLoader::epoch_size_padded() const {
  return options_.pad_last_batch ? padded_length_ * options_.num_shards : dataset_size_;
}

void SampleLoader::make_permutation(int64_t epoch) {
  if (permutation_epoch_ == epoch) return;
  permutation_.resize(size_t(dataset_size_));
  std::iota(permutation_.begin(), permutation_.end(), int64_t(0));
  // Fisher-Yates; the stream is keyed by the epoch (and a tag that keeps it apart from the
  // buffer shuffle's draws), identical on every shard.
  auto rng = random_stream(options_.seed, options_.instance, uint64_t(epoch), 0x9106a1u);
  for (int64_t i = dataset_size_ - 1; i > 0; --i) {
    auto j = int64_t(rng.below(uint32_t(i + 1)));
    std::swap(permutation_[size_t(i)], permutation_[size_t(j)]);
  }
  permutation_epoch_ = epoch;
}

SampleLoader::Next SampleLoader::sequential() {
  const int shard = virtual_shard(epoch_);
  const int64_t size = shard_size(shard);
  const bool padded = position_ >= size;
  const int64_t pos = padded ? size - 1 : position_;
  Next n{0, epoch_, padded};
  if (options_.shuffle == ShuffleMode::kGlobal) {
    make_permutation(epoch_);
    n.index = permutation_[size_t(shard_begin(shard) + pos)];
  } else {
    n.index = shard_begin(shard) + pos;
  }
  if (++position_ == epoch_length(epoch_)) {
    position_ = 0;
    ++epoch_;
  }
  return n;
}

SampleLoader::Next SampleLoader::next() {
  if (options_.shuffle != ShuffleMode::kBuffer) return sequential();
  const size_t fill = size_t(std::min<int64_t>(options_.initial_fill, epoch_length(epoch_)));
  while (buffer_.size() < fill) buffer_.push_back(sequential());
  auto rng = random_stream(options_.seed, options_.instance, draws_++);
  size_t pick = rng.below(uint32_t(buffer_.size()));
  Next out = buffer_[pick];
  buffer_[pick] = sequential();
  return out;
}

std::string SampleLoader::save_state() const {
  std::string s = detail::concat("v1 ", epoch_, " ", position_, " ", draws_, " ", buffer_.size());
  for (const auto& b : buffer_) s += detail::concat(" ", b.index, ":", b.epoch, ":", int(b.padded));
  return s;
}

void SampleLoader::restore_state(std::string_view text) {
  auto fail = [&]() { throw ValueError(detail::concat("invalid reader state '", text, "'")); };
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    fields.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  auto num = [&](std::string_view f) {
    int64_t v = 0;
    auto r = std::from_chars(f.data(), f.data() + f.size(), v);
    if (r.ec != std::errc() || r.ptr != f.data() + f.size()) fail();
    return v;
  };
  if (fields.size() < 5 || fields[0] != "v1") fail();
  int64_t epoch = num(fields[1]), position = num(fields[2]), draws = num(fields[3]);
  auto count = size_t(num(fields[4]));
  if (fields.size() != 5 + count || epoch < 0 || position < 0 || position >= epoch_length(epoch))
    fail();
  std::vector<Next> buffer;
  for (size_t i = 0; i < count; ++i) {
    auto f = fields[5 + i];
    auto a = f.find(':'), b = f.rfind(':');
    if (a == std::string_view::npos || a == b) fail();
    Next n{num(f.substr(0, a)), num(f.substr(a + 1, b - a - 1)), num(f.substr(b + 1)) != 0};
    if (n.index < 0 || n.index >= dataset_size_) fail();
    buffer.push_back(n);
  }
  epoch_ = epoch;
  position_ = position;
  draws_ = uint64_t(draws);
  buffer_ = std::move(buffer);
}

}  // namespace stoker::readers
