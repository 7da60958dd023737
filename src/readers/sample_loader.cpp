#include "stoker/readers/sample_loader.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <random>

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
  STOKER_ENFORCE(!(o.shuffle_after_epoch && o.stick_to_shard), ValueError,
                 "shuffle_after_epoch and stick_to_shard cannot be both true");
  STOKER_ENFORCE(!(o.shuffle_after_epoch && o.shuffle == ShuffleMode::kGlobal), ValueError,
                 "shuffle_after_epoch and shuffle='global' cannot be combined (both reorder the "
                 "dataset every epoch)");
  if (!o.file_starts.empty()) {
    STOKER_ASSERT(o.file_starts.front() == 0 &&
                      std::is_sorted(o.file_starts.begin(), o.file_starts.end()) &&
                      o.file_starts.back() <= dataset_size,
                  "file_starts must ascend from 0 within the dataset");
  }
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
  if (options_.stick_to_shard || options_.shuffle_after_epoch ||
      options_.shuffle == ShuffleMode::kGlobal)
    return options_.shard_id;
  return int((options_.shard_id + epoch) % options_.num_shards);
}

int64_t SampleLoader::epoch_length(int64_t epoch) const {
  return options_.pad_last_batch ? padded_length_ : shard_size(virtual_shard(epoch));
}

int64_t SampleLoader::epoch_size_padded() const {
  // DALI's figure: every shard padded to the largest shard (not to whole batches).
  const int64_t n = options_.num_shards;
  return options_.pad_last_batch ? (dataset_size_ + n - 1) / n * n : dataset_size_;
}

const std::vector<int64_t>& SampleLoader::order(int64_t epoch) {
  const auto& o = options_;
  if (order_epoch_ == epoch) return order_;
  auto identity = [&] {
    order_.resize(size_t(dataset_size_));
    std::iota(order_.begin(), order_.end(), int64_t(0));
  };
  auto dali_engine = [&](int64_t e) {  // DALI counts epochs from 1 here
    return std::mt19937_64(o.shuffle_after_epoch_seed + (uint64_t(e + 1) << 32));
  };
  if (o.shuffle_after_epoch && !o.file_starts.empty()) {
    // Fresh every epoch: the files in a shuffled order, each file's samples in order.
    std::vector<size_t> files(o.file_starts.size());
    std::iota(files.begin(), files.end(), size_t(0));
    auto g = dali_engine(epoch);
    std::shuffle(files.begin(), files.end(), g);
    order_.clear();
    for (size_t f : files) {
      int64_t end = f + 1 < o.file_starts.size() ? o.file_starts[f + 1] : dataset_size_;
      for (int64_t i = o.file_starts[f]; i < end; ++i) order_.push_back(i);
    }
  } else if (o.shuffle_after_epoch) {
    // Cumulative: epoch e shuffles epoch e-1's order (replayed from the start when resuming).
    int64_t from = order_epoch_ >= 0 && order_epoch_ < epoch ? order_epoch_ + 1 : 0;
    if (from == 0) identity();
    for (int64_t e = from; e <= epoch; ++e) {
      auto g = dali_engine(e);
      std::shuffle(order_.begin(), order_.end(), g);
    }
  } else if (o.shuffle == ShuffleMode::kGlobal) {
    // Fisher-Yates; the stream is keyed by the epoch (and a tag that keeps it apart from the
    // buffer shuffle's draws), identical on every shard.
    identity();
    auto rng = random_stream(o.seed, o.instance, uint64_t(epoch), 0x9106a1u);
    for (int64_t i = dataset_size_ - 1; i > 0; --i) {
      auto j = int64_t(rng.below(uint32_t(i + 1)));
      std::swap(order_[size_t(i)], order_[size_t(j)]);
    }
  } else if (o.preshuffle && o.shuffle == ShuffleMode::kBuffer) {
    if (order_epoch_ < 0) {  // the same every epoch
      identity();
      std::mt19937 g(kDaliLoaderSeed);
      std::shuffle(order_.begin(), order_.end(), g);
    }
  } else {
    order_.clear();  // identity, not stored
  }
  order_epoch_ = epoch;
  return order_;
}

SampleLoader::Stream SampleLoader::sequential() {
  const int shard = virtual_shard(stream_epoch_);
  const auto& ord = order(stream_epoch_);
  const int64_t pos = shard_begin(shard) + stream_position_;
  Stream s{ord.empty() ? pos : ord[size_t(pos)], stream_epoch_};
  if (++stream_position_ == shard_size(shard)) {
    stream_position_ = 0;
    ++stream_epoch_;
  }
  return s;
}

SampleLoader::Stream SampleLoader::draw_from_buffer() {
  while (buffer_.size() < size_t(options_.initial_fill)) buffer_.push_back(sequential());
  // The buffer is in stream order, so the samples of the epoch being delivered lead it.
  auto end = std::partition_point(buffer_.begin(), buffer_.end(),
                                  [&](const Stream& s) { return s.epoch <= epoch_; });
  const auto candidates = uint32_t(end - buffer_.begin());
  STOKER_ASSERT(candidates > 0 && buffer_.front().epoch == epoch_,
                "the shuffle buffer holds no sample of epoch ", epoch_);
  auto rng = random_stream(options_.seed, options_.instance, draws_++);
  std::swap(buffer_[rng.below(candidates)], buffer_.front());
  Stream out = buffer_.front();
  buffer_.pop_front();
  buffer_.push_back(sequential());
  return out;
}

SampleLoader::Next SampleLoader::next() {
  Next n{last_index_, epoch_, true};
  if (position_ < shard_size(virtual_shard(epoch_))) {
    Stream s = options_.shuffle == ShuffleMode::kBuffer ? draw_from_buffer() : sequential();
    STOKER_ASSERT(s.epoch == epoch_, "the sample stream is in epoch ", s.epoch, " while epoch ",
                  epoch_, " is delivered");
    n = {s.index, epoch_, false};
    last_index_ = s.index;
  }
  if (++position_ == epoch_length(epoch_)) {
    position_ = 0;
    ++epoch_;
  }
  return n;
}

std::string SampleLoader::save_state() const {
  std::string s =
      detail::concat("v2 ", epoch_, " ", position_, " ", last_index_, " ", stream_epoch_, " ",
                     stream_position_, " ", draws_, " ", buffer_.size());
  for (const auto& b : buffer_) s += detail::concat(" ", b.index, ":", b.epoch);
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
    if (r.ec != std::errc() || r.ptr != f.data() + f.size() || v < 0) fail();
    return v;
  };
  if (!fields.empty() && fields[0] == "v1")
    throw ValueError(detail::concat(
        "reader state '", text.substr(0, 40), text.size() > 40 ? "...'" : "'",
        " was saved by an earlier stoker (reader state v1), whose buffer shuffle drew across "
        "epochs: this version's sample orders differ, so there is no place to resume it; start "
        "the reader anew"));
  if (fields.size() < 8 || fields[0] != "v2") fail();
  const int64_t epoch = num(fields[1]), position = num(fields[2]), last = num(fields[3]),
                stream_epoch = num(fields[4]), stream_position = num(fields[5]),
                draws = num(fields[6]);
  const auto count = size_t(num(fields[7]));
  if (fields.size() != 8 + count || position >= epoch_length(epoch) || last >= dataset_size_ ||
      stream_epoch < epoch || stream_position >= shard_size(virtual_shard(stream_epoch)))
    fail();
  std::deque<Stream> buffer;
  for (size_t i = 0; i < count; ++i) {
    auto f = fields[8 + i];
    auto a = f.find(':');
    if (a == std::string_view::npos) fail();
    Stream s{num(f.substr(0, a)), num(f.substr(a + 1))};
    if (s.index >= dataset_size_ || s.epoch < epoch || s.epoch > stream_epoch ||
        (!buffer.empty() && s.epoch < buffer.back().epoch))
      fail();
    buffer.push_back(s);
  }
  // Delivery and stream must agree, as in every state save_state() writes: each sample of the
  // epoch being delivered that is still due is in the buffer or ahead in the stream; the
  // epochs between are wholly in the buffer, and the stream's epoch up to its position.
  const auto in_buffer = [&](int64_t e) {
    return int64_t(
        std::count_if(buffer.begin(), buffer.end(), [&](const Stream& b) { return b.epoch == e; }));
  };
  const auto size_of = [&](int64_t e) { return shard_size(virtual_shard(e)); };
  const int64_t due = std::max<int64_t>(0, size_of(epoch) - position);
  const bool buffered = options_.shuffle == ShuffleMode::kBuffer;
  if ((!buffered && count != 0) || (buffered && count > size_t(options_.initial_fill))) fail();
  if (stream_epoch == epoch) {
    if (in_buffer(epoch) + size_of(epoch) - stream_position != due) fail();
  } else {
    if (in_buffer(epoch) != due || stream_epoch - epoch > int64_t(count) + 1 ||
        in_buffer(stream_epoch) != stream_position)
      fail();
    for (int64_t e = epoch + 1; e < stream_epoch; ++e)
      if (in_buffer(e) != size_of(e)) fail();
  }
  epoch_ = epoch;
  position_ = position;
  last_index_ = last;
  stream_epoch_ = stream_epoch;
  stream_position_ = stream_position;
  draws_ = uint64_t(draws);
  buffer_ = std::move(buffer);
}

}  // namespace stoker::readers
