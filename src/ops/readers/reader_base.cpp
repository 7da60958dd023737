#include "stoker/ops/readers/reader_base.hpp"

#include <algorithm>

#include "stoker/core/cuda.hpp"

namespace stoker::ops {

std::vector<ArgSchema> loader_arg_schemas() {
  return {
      {"shard_id", ArgType::kInt,
       "Index of this shard. From Python, in a distributed job (torch.distributed initialised, "
       "or torchrun's RANK and WORLD_SIZE) where neither shard_id nor num_shards is given, they "
       "are the process's rank and world size.",
       int64_t{0}},
      {"num_shards", ArgType::kInt, "Number of shards the dataset is split into.", int64_t{1}},
      {"random_shuffle", ArgType::kBool,
       "Shuffle through a buffer of `initial_fill` samples (DALI's shuffle; same as "
       "shuffle='buffer'). Each output is drawn among the buffered samples of the current "
       "epoch: every epoch delivers each sample of its shard exactly once. readers.file, "
       "readers.numpy and experimental.readers.fits also permute their file list once, as DALI "
       "does (a fixed permutation, the same on every shard), so that shards are random subsets "
       "of the dataset.",
       false},
      {"initial_fill", ArgType::kInt, "Size of the shuffling buffer.", int64_t{1024}},
      seed_arg(),
      {"shuffle", ArgType::kString,
       "'none', 'buffer' or 'global' (a fresh seeded permutation of the whole dataset every "
       "epoch, split across shards: every sample exactly once per epoch over all shards). "
       "Empty: decided by random_shuffle.",
       std::string()},
      {"shuffle_after_epoch", ArgType::kBool,
       "Reshuffle the dataset after every epoch, the same way on every shard, so that the "
       "shards of one epoch together hold every sample once (DALI's order, exactly). Readers "
       "of container files (TFRecord, RecordIO, webdataset) shuffle the order of the files, "
       "keeping each file's samples in sequence. Implies stick_to_shard.",
       false},
      {"shuffle_after_epoch_seed", ArgType::kInt,
       "Seed of shuffle_after_epoch's permutations (DALI's default: 524287, the same in every "
       "run). Use the same value on every shard.",
       int64_t(readers::kDaliLoaderSeed)},
      {"stick_to_shard", ArgType::kBool,
       "Read only this shard every epoch (default: epoch e reads shard (shard_id + e) mod "
       "num_shards, as DALI does).",
       false},
      {"pad_last_batch", ArgType::kBool,
       "Pad every epoch, repeating its last delivered sample, to the same batch-divisible "
       "length on all shards, so batches do not straddle epochs.",
       false},
      {"lazy_init", ArgType::kBool, "Index the dataset at the first run, not at build.", false},
      {"dont_use_mmap", ArgType::kBool,
       "Read files with pread into pooled buffers (consecutive records with one large read) "
       "instead of mapping them (samples then view the mapping, no copy). Files of one "
       "sample under 1 MiB are read either way: mapping them costs more.",
       false},
      {"read_ahead", ArgType::kBool,
       "Ask the kernel to read each container file whole when it is opened (slower start, no "
       "disk waits afterwards).",
       false},
      {"prefetch_queue_depth", ArgType::kInt,
       "Batches the reader loads ahead of the one being produced, on its I/O threads.", int64_t{2}},
      {"num_io_threads", ArgType::kInt,
       "The reader's own threads for reading and parsing samples (never the compute threads).",
       int64_t{2}},
  };
}

readers::FileOptions file_options(const OpSpec& spec) {
  readers::FileOptions o;
  o.mode = spec.arg<bool>("dont_use_mmap") ? readers::IoMode::kPread : readers::IoMode::kMmap;
  o.read_ahead = spec.arg<bool>("read_ahead");
  return o;
}

ReaderOperator::ReaderOperator(const OpSpec& spec, std::unique_ptr<ReaderSource> source)
    : Operator(spec), source_(std::move(source)) {
  readers::LoaderOptions o;
  o.shard_id = int(spec.arg<int64_t>("shard_id"));
  o.num_shards = int(spec.arg<int64_t>("num_shards"));
  o.stick_to_shard = spec.arg<bool>("stick_to_shard");
  o.pad_last_batch = spec.arg<bool>("pad_last_batch");
  // The shuffle buffer's size: at most 2^20 samples (filling a larger one took seconds and
  // gigabytes before the first batch); checked before narrowing to int.
  const int64_t initial_fill = spec.arg<int64_t>("initial_fill");
  STOKER_ENFORCE(initial_fill >= 1 && initial_fill <= (int64_t(1) << 20), ValueError,
                 spec.schema->name, ": initial_fill must be in [1, 1048576], got ", initial_fill);
  o.initial_fill = int(initial_fill);
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
  o.preshuffle = source_->preshuffles();
  o.shuffle_after_epoch = spec.arg<bool>("shuffle_after_epoch");
  o.shuffle_after_epoch_seed = uint64_t(spec.arg<int64_t>("shuffle_after_epoch_seed"));
  STOKER_ENFORCE(!(o.shuffle_after_epoch && o.stick_to_shard), ValueError, spec.schema->name,
                 ": shuffle_after_epoch and stick_to_shard cannot be both true");
  // DALI's file lists forbid the pair; its container readers combine them (files reshuffled,
  // samples shuffled in the buffer).
  STOKER_ENFORCE(
      !(o.shuffle_after_epoch && o.preshuffle && o.shuffle == readers::ShuffleMode::kBuffer),
      ValueError, spec.schema->name,
      ": shuffle_after_epoch and random_shuffle cannot be both true");
  options_ = o;
  // Checked before narrowing to int (2^32 + 2 must not pass as 2). At most 64 batches, as the
  // pipeline's prefetch_queue_depth: the reader holds that many batches of loaded samples.
  const int64_t io_threads = spec.arg<int64_t>("num_io_threads");
  const int64_t depth = spec.arg<int64_t>("prefetch_queue_depth");
  STOKER_ENFORCE(io_threads >= 1 && io_threads <= 64, ValueError, spec.schema->name,
                 ": num_io_threads must be in [1, 64], got ", io_threads);
  STOKER_ENFORCE(depth >= 1, ValueError, spec.schema->name,
                 ": prefetch_queue_depth must be at least 1, got ", depth,
                 " (its range is [1, 64])");
  STOKER_ENFORCE(depth <= 64, ValueError, spec.schema->name,
                 ": prefetch_queue_depth must be at most 64, got ", depth,
                 " (its range is [1, 64])");
  io_threads_ = int(io_threads);
  depth_batches_ = int(depth);
  if (!spec.arg<bool>("lazy_init")) dataset_size();
}

ReaderOperator::~ReaderOperator() { prefetcher_.reset(); }

int64_t ReaderOperator::dataset_size() const {
  std::lock_guard lock(index_mutex_);
  if (size_ < 0) {
    size_ = source_->build_index();  // once, lazily: the only mutation of the source
    STOKER_ASSERT(size_ > 0, spec_.schema->name, " built an empty index");
    file_starts_ = source_->file_starts();
  }
  return size_;
}

readers::LoaderOptions ReaderOperator::loader_options() const {
  auto o = options_;
  std::lock_guard lock(index_mutex_);
  o.file_starts = file_starts_;
  return o;
}

std::optional<ReaderMeta> ReaderOperator::reader_meta() const {
  readers::SampleLoader l(dataset_size(), loader_options());
  return ReaderMeta{l.dataset_size(), l.epoch_size_padded(), l.epoch_length(), options_.shard_id,
                    options_.num_shards, options_.pad_last_batch,
                    // whether every epoch reads the own shard (the iterators' epoch sizes)
                    options_.stick_to_shard || options_.shuffle_after_epoch ||
                        options_.shuffle == readers::ShuffleMode::kGlobal};
}

std::optional<std::string> ReaderOperator::save_state() const {
  if (delivered_) return delivered_->save_state();
  if (!pending_state_.empty()) return pending_state_;
  {
    // lazy_init: the executor's snapshot at build must not index the dataset. Before the first
    // run the state is a fresh loader's, whatever the dataset's size.
    std::lock_guard lock(index_mutex_);
    if (size_ < 0) return readers::SampleLoader(options_.num_shards, options_).save_state();
  }
  return readers::SampleLoader(dataset_size(), loader_options()).save_state();
}

void ReaderOperator::restore_state(const std::string& state) {
  readers::SampleLoader(dataset_size(), loader_options()).restore_state(state);  // validates
  prefetcher_.reset();  // drops what was read ahead; start() resumes from the state
  ahead_.reset();
  delivered_.reset();
  pending_state_ = state;
}

void ReaderSource::load(readers::LoadedSample& sample, MemoryPool& pool) const {
  std::vector<readers::FileRange> ranges;
  STOKER_ASSERT(this->ranges(sample.index, ranges),
                "a reader source must implement load() or ranges()");
  auto bytes = readers::read_ranges(ranges, pool);
  parse(sample, bytes, pool);
}

void ReaderOperator::load_group(std::span<readers::LoadedSample> group, MemoryPool& pool) const {
  for (auto& s : group) s.source_info = source_->source_info(s.index);
  auto load_each = [&] {
    for (auto& s : group) {
      try {
        source_->load(s, pool);
      } catch (...) {
        s.error = std::current_exception();
      }
    }
  };
  std::vector<readers::FileRange> ranges;
  std::vector<size_t> first;  // sample k's ranges: [first[k], first[k + 1])
  for (auto& s : group) {
    first.push_back(ranges.size());
    if (!source_->ranges(s.index, ranges)) return load_each();
  }
  first.push_back(ranges.size());
  std::vector<readers::FileBytes> bytes;
  try {
    bytes = readers::read_ranges(ranges, pool);
  } catch (...) {
    return load_each();  // read alone, so that the error lands on the sample it belongs to
  }
  for (size_t k = 0; k < group.size(); ++k) {
    try {
      source_->parse(group[k], std::span(bytes).subspan(first[k], first[k + 1] - first[k]), pool);
    } catch (...) {
      group[k].error = std::current_exception();
    }
  }
}

void ReaderOperator::start(const Workspace& ws) {
  dataset_size();
  auto o = loader_options();  // options_ stays as built: reader_meta() reads it concurrently
  if (own_seed() >= 0) {      // the reader's own seed: readers given one seed shuffle alike
    o.seed = uint64_t(own_seed()), o.instance = kSeededInstance;
  } else {
    o.seed = ws.seed;  // the shuffle order follows the pipeline seed
  }
  ahead_.emplace(dataset_size(), o);
  delivered_.emplace(dataset_size(), o);
  if (!pending_state_.empty()) {
    ahead_->restore_state(pending_state_);
    delivered_->restore_state(pending_state_);
  }
  dtypes_ = source_->output_dtypes();
  source_->start(ws);
  MemoryPool* pool = spec_.backend == Backend::kGpu ? ws.device_pool : ws.host_pool;
  const int depth = depth_batches_ * std::max(ws.batch_size, 1);
  // Groups small enough to keep every I/O thread busy twice over within the depth.
  const int group = std::clamp(depth / (2 * io_threads_), 1, 64);
  prefetcher_ = std::make_unique<readers::Prefetcher>(
      io_threads_, depth, group, [this] { return ahead_->next().index; },
      [this, pool](std::span<readers::LoadedSample> g) { load_group(g, *pool); });
}

void ReaderOperator::run(Workspace& ws) {
  if (!prefetcher_) start(ws);
  const int n = ws.batch_size;
  const bool gpu = spec_.backend == Backend::kGpu;
  // The loaded samples, each in its own buffer.
  std::vector<Batch> loaded;
  for (size_t k = 0; k < dtypes_.size(); ++k)
    loaded.push_back(Batch::with_samples(n, dtypes_[k], source_->output_layout(k),
                                         gpu ? MemoryKind::kDevice : MemoryKind::kHost));
  std::vector<readers::LoadedSample> samples(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& s = samples[size_t(i)];
    s = prefetcher_->pop();
    const int64_t expected = delivered_->next().index;
    STOKER_ASSERT(s.index == expected, spec_.schema->name, ": read-ahead delivered sample ",
                  s.index, " where the loader expects ", expected);
    for (auto& out : loaded) out.set_source_info(i, s.source_info);
  }
  for_each_sample(
      ws, n,
      [&](int i, int) {
        auto& s = samples[size_t(i)];
        if (s.error) std::rethrow_exception(s.error);
        source_->finish(s, *this, ws, i);
        STOKER_ASSERT(s.outputs.size() == dtypes_.size(), spec_.schema->name, " loaded ",
                      s.outputs.size(), " outputs, expected ", dtypes_.size());
        for (size_t k = 0; k < dtypes_.size(); ++k) {
          auto& d = s.outputs[k];
          loaded[k].set_sample(i, std::move(d.owner), const_cast<void*>(d.data),
                               std::move(d.shape));
        }
      },
      loaded.empty() ? nullptr : &loaded[0]);
  if (!gpu) {
    for (auto& b : loaded) ws.outputs.push_back(std::move(b));
    return;
  }
  // A gpu reader's samples were written (and synchronised) on its I/O threads' streams. They
  // are gathered, on the stage's stream, into one buffer per output, as every gpu operator's
  // outputs are: a batch consumers (DLPack, torch) can view as one array. A copy of a few
  // hundred MB on the device against the tens of ms its decoding took.
  for (auto& b : loaded) {
    auto& out = add_output(ws, b.dtype(), b.shapes(), b.layout(), &b);
    for (int i = 0; i < n; ++i)
      copy_device_async(out.data(i), b.data(i), b.sample(i).num_bytes(), ws.stream);
    b.record_use(ws.stream);  // the loaded buffers return to the pool once the copies ran
  }
}

}  // namespace stoker::ops
