#include "stoker/ops/readers/file_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "stoker/ops/operator.hpp"
#include "stoker/readers/file_index.hpp"
#include "stoker/readers/sample_loader.hpp"

namespace stoker::ops {
namespace {

// Reads a whole file into a pooled buffer. Throws IOError naming the file and errno's text.
std::shared_ptr<Buffer> read_whole_file(const std::string& path, MemoryPool& pool, size_t& size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  STOKER_ENFORCE(fd >= 0, IOError, "cannot open '", path, "': ", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  STOKER_ENFORCE(::fstat(fd, &st) == 0, IOError, "cannot stat '", path,
                 "': ", std::strerror(errno));
  size = size_t(st.st_size);
  auto buf = pool.acquire(size);
  size_t done = 0;
  while (done < size) {
    ssize_t r = ::pread(fd, static_cast<char*>(buf->data()) + done, size - done, off_t(done));
    if (r < 0 && errno == EINTR) continue;
    STOKER_ENFORCE(r >= 0, IOError, "cannot read '", path, "': ", std::strerror(errno));
    STOKER_ENFORCE(r > 0, IOError, "'", path, "' shrank while being read (", done, " of ", size,
                   " bytes)");
    done += size_t(r);
  }
  return buf;
}

class FileReader final : public Operator {
 public:
  explicit FileReader(const OpSpec& spec) : Operator(spec) {
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
                   "readers.file: random_shuffle=True asks for the buffer shuffle; it cannot be "
                   "combined with shuffle='",
                   shuffle, "'");
    o.shuffle = !shuffle.empty() ? readers::parse_shuffle_mode(shuffle)
                : random_shuffle ? readers::ShuffleMode::kBuffer
                                 : readers::ShuffleMode::kNone;
    options_ = o;
    if (!spec.arg<bool>("lazy_init")) ensure_index();
  }

  // Called from the consumer's thread while the producer runs: uses only the index (built
  // once, under a lock) and the options, never the loader the producer advances.
  std::optional<ReaderMeta> reader_meta() const override {
    ensure_index();
    readers::SampleLoader l(int64_t(index_.size()), options_);
    return ReaderMeta{l.dataset_size(),       l.epoch_size_padded(), l.epoch_length(),
                      options_.shard_id,      options_.num_shards,   options_.pad_last_batch,
                      options_.stick_to_shard};
  }

  // Producer thread (or before it starts).
  std::optional<std::string> save_state() const override {
    if (loader_) return loader_->save_state();
    if (!pending_state_.empty()) return pending_state_;
    ensure_index();
    return readers::SampleLoader(int64_t(index_.size()), options_).save_state();
  }
  void restore_state(const std::string& state) override {
    ensure_index();
    readers::SampleLoader(int64_t(index_.size()), options_).restore_state(state);  // validates
    pending_state_ = state;
    if (loader_) loader_->restore_state(state);
  }

  void run(Workspace& ws) override {
    if (!loader_) {
      ensure_index();
      auto o = options_;  // options_ stays as built: reader_meta() reads it concurrently
      o.seed = ws.seed;   // the shuffle order follows the pipeline seed
      loader_.emplace(int64_t(index_.size()), o);
      if (!pending_state_.empty()) loader_->restore_state(pending_state_);
    }
    const int n = ws.batch_size;
    std::vector<const readers::FileEntry*> picks(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) picks[size_t(i)] = &index_[size_t(loader_->next().index)];
    ws.outputs.push_back(Batch::with_samples(n, DType::kU8));
    Batch& labels =
        add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n), TensorShape{1}), {});
    Batch& bytes = ws.outputs[0];
    for (int i = 0; i < n; ++i) {
      bytes.set_source_info(i, picks[size_t(i)]->path);
      labels.set_source_info(i, picks[size_t(i)]->path);
      labels.data_as<int32_t>(i)[0] = picks[size_t(i)]->label;
    }
    for_each_sample(
        ws, n,
        [&](int i, int) {
          size_t size = 0;
          auto buf = read_whole_file(picks[size_t(i)]->path, *ws.host_pool, size);
          void* data = buf->data();
          bytes.set_sample(i, std::move(buf), data, TensorShape{int64_t(size)});
        },
        &bytes);
  }

 private:
  void ensure_index() const {
    std::lock_guard lock(index_mutex_);
    if (!index_.empty()) return;
    auto root = spec_.arg<std::string>("file_root");
    auto list = spec_.arg<std::string>("file_list");
    auto files = spec_.arg<std::vector<std::string>>("files");
    STOKER_ENFORCE(list.empty() || files.empty(), ValueError,
                   "readers.file: give only one of `file_list` and `files`");
    if (!list.empty()) {
      index_ = readers::index_file_list(list, root);
    } else if (!files.empty()) {
      index_ = readers::index_files(files, spec_.arg<std::vector<int64_t>>("labels"), root);
    } else {
      STOKER_ENFORCE(!root.empty(), ValueError,
                     "readers.file: give `file_root`, `file_list` or `files`");
      index_ =
          readers::index_class_folders(root, spec_.arg<std::vector<std::string>>("file_filters"));
    }
  }
  mutable std::mutex index_mutex_;
  mutable std::vector<readers::FileEntry> index_;  // built once, then read-only
  readers::LoaderOptions options_;
  std::optional<readers::SampleLoader> loader_;  // the producer's
  std::string pending_state_;
};

}  // namespace

OpSchema file_reader_schema() {
  return {
      .name = "readers.file",
      .doc =
          "Reads files and their integer labels. Sources: `file_root` with one sub-folder "
          "per class (classes sorted by name and labelled 0, 1, ...; files matched by "
          "`file_filters`, case-insensitively, sorted), a `file_list` of '<path> <label>' "
          "lines, or `files` (+ `labels`). Outputs the encoded bytes (uint8, 1-D) and the "
          "label (int32, shape (1,)). Shard k of n reads the contiguous index range "
          "[N*k/n, N*(k+1)/n); see stick_to_shard, pad_last_batch and shuffle for epochs. "
          "Shuffles are seeded by the pipeline seed; the reader's position is part of "
          "pipe.checkpoint().",
      .outputs = {"data", "label"},
      .args =
          {{"file_root", ArgType::kString,
            "Folder of class sub-folders, or the base of "
            "relative paths in `file_list`/`files`.",
            std::string()},
           {"file_list", ArgType::kString, "Text file of '<path> <label>' lines.", std::string()},
           {"files", ArgType::kStringList, "Explicit list of files.", std::vector<std::string>{}},
           {"labels", ArgType::kIntList, "Labels for `files` (default 0).", std::vector<int64_t>{}},
           {"file_filters", ArgType::kStringList,
            "Glob patterns of files to take from "
            "`file_root` (case-insensitive).",
            std::vector<std::string>(readers::default_image_filters())},
           {"shard_id", ArgType::kInt, "Index of this shard.", int64_t{0}},
           {"num_shards", ArgType::kInt, "Number of shards the dataset is split into.", int64_t{1}},
           {"random_shuffle", ArgType::kBool,
            "Shuffle through a buffer of `initial_fill` samples (DALI's shuffle; same as "
            "shuffle='buffer').",
            false},
           {"shuffle", ArgType::kString,
            "'none', 'buffer' or 'global' (a fresh seeded permutation of the whole dataset "
            "every epoch, split across shards: every sample exactly once per epoch over all "
            "shards). Empty: decided by random_shuffle.",
            std::string()},
           {"stick_to_shard", ArgType::kBool,
            "Read only this shard every epoch (default: epoch e reads shard (shard_id + e) mod "
            "num_shards, as DALI does).",
            false},
           {"pad_last_batch", ArgType::kBool,
            "Pad every epoch, repeating the shard's last sample, to the same batch-divisible "
            "length on all shards, so batches do not straddle epochs.",
            false},
           {"lazy_init", ArgType::kBool, "Index the dataset at the first run, not at build.",
            false},
           {"initial_fill", ArgType::kInt, "Size of the shuffling buffer.", int64_t{1024}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<FileReader>(s); },
  };
}

}  // namespace stoker::ops
