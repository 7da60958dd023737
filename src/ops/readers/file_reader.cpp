#include "stoker/ops/readers/file_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "stoker/ops/readers/reader_base.hpp"
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

class FileReader final : public ReaderOperator {
 public:
  explicit FileReader(const OpSpec& spec) : ReaderOperator(spec) { init(); }

  void run(Workspace& ws) override {
    auto picks = next_indices(ws);
    const int n = ws.batch_size;
    ws.outputs.push_back(Batch::with_samples(n, DType::kU8));
    Batch& labels =
        add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n), TensorShape{1}), {});
    Batch& bytes = ws.outputs[0];
    for (int i = 0; i < n; ++i) {
      const auto& entry = index_[size_t(picks[size_t(i)])];
      bytes.set_source_info(i, entry.path);
      labels.set_source_info(i, entry.path);
      labels.data_as<int32_t>(i)[0] = entry.label;
    }
    for_each_sample(
        ws, n,
        [&](int i, int) {
          size_t size = 0;
          auto buf = read_whole_file(index_[size_t(picks[size_t(i)])].path, *ws.host_pool, size);
          void* data = buf->data();
          bytes.set_sample(i, std::move(buf), data, TensorShape{int64_t(size)});
        },
        &bytes);
  }

 private:
  int64_t build_index() override {
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
    return int64_t(index_.size());
  }

  std::vector<readers::FileEntry> index_;  // built once, then read-only
};

}  // namespace

OpSchema file_reader_schema() {
  OpSchema schema{
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
          {
              {"file_root", ArgType::kString,
               "Folder of class sub-folders, or the base of "
               "relative paths in `file_list`/`files`.",
               std::string()},
              {"file_list", ArgType::kString, "Text file of '<path> <label>' lines.",
               std::string()},
              {"files", ArgType::kStringList, "Explicit list of files.",
               std::vector<std::string>{}},
              {"labels", ArgType::kIntList, "Labels for `files` (default 0).",
               std::vector<int64_t>{}},
              {"file_filters", ArgType::kStringList,
               "Glob patterns of files to take from "
               "`file_root` (case-insensitive).",
               std::vector<std::string>(readers::default_image_filters())},
          },
      .make_cpu = [](const OpSpec& s) { return std::make_unique<FileReader>(s); },
  };
  for (auto& a : loader_arg_schemas()) schema.args.push_back(a);
  return schema;
}

}  // namespace stoker::ops
