#include "stoker/ops/readers/file_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
    auto root = spec.arg<std::string>("file_root");
    auto list = spec.arg<std::string>("file_list");
    auto files = spec.arg<std::vector<std::string>>("files");
    int sources = int(!list.empty()) + int(!files.empty());
    STOKER_ENFORCE(sources <= 1, ValueError,
                   "readers.file: give only one of `file_list` and `files`");
    if (!list.empty()) {
      index_ = readers::index_file_list(list, root);
    } else if (!files.empty()) {
      index_ = readers::index_files(files, spec.arg<std::vector<int64_t>>("labels"), root);
    } else {
      STOKER_ENFORCE(!root.empty(), ValueError,
                     "readers.file: give `file_root`, `file_list` or `files`");
      auto filters = spec.arg<std::vector<std::string>>("file_filters");
      index_ = readers::index_class_folders(root, filters);
    }
    readers::LoaderOptions o;
    o.shard_id = int(spec.arg<int64_t>("shard_id"));
    o.num_shards = int(spec.arg<int64_t>("num_shards"));
    o.random_shuffle = spec.arg<bool>("random_shuffle");
    o.initial_fill = int(spec.arg<int64_t>("initial_fill"));
    o.instance = uint64_t(spec.instance);
    options_ = o;
  }

  std::optional<ReaderMeta> reader_meta() const override {
    readers::SampleLoader l(int64_t(index_.size()), options_);
    return ReaderMeta{int64_t(index_.size()), l.shard_size(), options_.shard_id,
                      options_.num_shards};
  }

  void run(Workspace& ws) override {
    if (!loader_) {
      options_.seed = ws.seed;  // the shuffle order follows the pipeline seed
      loader_.emplace(int64_t(index_.size()), options_);
    }
    const int n = ws.batch_size;
    std::vector<const readers::FileEntry*> picks(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) picks[size_t(i)] = &index_[size_t(loader_->next().index)];
    ws.outputs.push_back(Batch::with_samples(n, DType::kU8));
    ws.outputs.push_back(Batch::allocate(*ws.host_pool, DType::kI32,
                                         std::vector<TensorShape>(size_t(n), TensorShape{1})));
    Batch& bytes = ws.outputs[0];
    Batch& labels = ws.outputs[1];
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
  std::vector<readers::FileEntry> index_;
  readers::LoaderOptions options_;
  std::optional<readers::SampleLoader> loader_;
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
          "[N*k/n, N*(k+1)/n) cyclically; `random_shuffle` draws each sample from a buffer "
          "of `initial_fill` samples, seeded by the pipeline seed.",
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
           {"random_shuffle", ArgType::kBool, "Shuffle through a buffer of `initial_fill`.", false},
           {"initial_fill", ArgType::kInt, "Size of the shuffling buffer.", int64_t{1024}}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<FileReader>(s); },
  };
}

}  // namespace stoker::ops
