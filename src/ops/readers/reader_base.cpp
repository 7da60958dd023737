#include "stoker/ops/readers/reader_base.hpp"

namespace stoker::ops {

std::vector<ArgSchema> loader_arg_schemas() {
  return {
      {"shard_id", ArgType::kInt, "Index of this shard.", int64_t{0}},
      {"num_shards", ArgType::kInt, "Number of shards the dataset is split into.", int64_t{1}},
      {"random_shuffle", ArgType::kBool,
       "Shuffle through a buffer of `initial_fill` samples (DALI's shuffle; same as "
       "shuffle='buffer').",
       false},
      {"initial_fill", ArgType::kInt, "Size of the shuffling buffer.", int64_t{1024}},
      {"shuffle", ArgType::kString,
       "'none', 'buffer' or 'global' (a fresh seeded permutation of the whole dataset every "
       "epoch, split across shards: every sample exactly once per epoch over all shards). "
       "Empty: decided by random_shuffle.",
       std::string()},
      {"stick_to_shard", ArgType::kBool,
       "Read only this shard every epoch (default: epoch e reads shard (shard_id + e) mod "
       "num_shards, as DALI does).",
       false},
      {"pad_last_batch", ArgType::kBool,
       "Pad every epoch, repeating the shard's last sample, to the same batch-divisible length "
       "on all shards, so batches do not straddle epochs.",
       false},
      {"lazy_init", ArgType::kBool, "Index the dataset at the first run, not at build.", false},
  };
}

ReaderOperator::ReaderOperator(const OpSpec& spec) : Operator(spec) {
  readers::LoaderOptions o;
  o.shard_id = int(spec.arg<int64_t>("shard_id"));
  o.num_shards = int(spec.arg<int64_t>("num_shards"));
  o.stick_to_shard = spec.arg<bool>("stick_to_shard");
  o.pad_last_batch = spec.arg<bool>("pad_last_batch");
  o.initial_fill = int(spec.arg<int64_t>("initial_fill"));
  o.instance = uint64_t(spec.instance);
  o.batch_size = spec.batch_size;
  auto shuffle = spec.arg<std::string>("shuffle");
  bool random_shuffle = spec.arg<bool>("random_shuffle");
  STOKER_ENFORCE(shuffle.empty() || !random_shuffle || shuffle == "buffer", ValueError,
                 spec.schema->name,
                 ": random_shuffle=True asks for the buffer shuffle; it "
                 "cannot be combined with shuffle='",
                 shuffle, "'");
  o.shuffle = !shuffle.empty() ? readers::parse_shuffle_mode(shuffle)
              : random_shuffle ? readers::ShuffleMode::kBuffer
                               : readers::ShuffleMode::kNone;
  options_ = o;
}

void ReaderOperator::init() {
  if (!spec_.arg<bool>("lazy_init")) dataset_size();
}

int64_t ReaderOperator::dataset_size() const {
  std::lock_guard lock(index_mutex_);
  if (size_ < 0) {
    auto* self = const_cast<ReaderOperator*>(this);  // the index is built once, lazily
    self->size_ = self->build_index();
    STOKER_ASSERT(size_ > 0, spec_.schema->name, " built an empty index");
  }
  return size_;
}

std::optional<ReaderMeta> ReaderOperator::reader_meta() const {
  readers::SampleLoader l(dataset_size(), options_);
  return ReaderMeta{l.dataset_size(),       l.epoch_size_padded(), l.epoch_length(),
                    options_.shard_id,      options_.num_shards,   options_.pad_last_batch,
                    options_.stick_to_shard};
}

std::optional<std::string> ReaderOperator::save_state() const {
  if (loader_) return loader_->save_state();
  if (!pending_state_.empty()) return pending_state_;
  return readers::SampleLoader(dataset_size(), options_).save_state();
}

void ReaderOperator::restore_state(const std::string& state) {
  readers::SampleLoader(dataset_size(), options_).restore_state(state);  // validates
  pending_state_ = state;
  if (loader_) loader_->restore_state(state);
}

std::vector<int64_t> ReaderOperator::next_indices(const Workspace& ws) {
  if (!loader_) {
    auto o = options_;  // options_ stays as built: reader_meta() reads it concurrently
    o.seed = ws.seed;   // the shuffle order follows the pipeline seed
    loader_.emplace(dataset_size(), o);
    if (!pending_state_.empty()) loader_->restore_state(pending_state_);
  }
  std::vector<int64_t> picks(static_cast<size_t>(ws.batch_size));
  for (auto& p : picks) p = loader_->next().index;
  return picks;
}

}  // namespace stoker::ops
