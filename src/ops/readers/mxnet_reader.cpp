#include "stoker/ops/readers/mxnet_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "stoker/core/file_io.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/recordio.hpp"
#include "stoker/readers/text_lines.hpp"

namespace stoker::ops {
namespace {

struct RecFile {
  std::string path;
  int fd = -1;
  std::vector<readers::RecordIOEntry> records;
  ~RecFile() {
    if (fd >= 0) ::close(fd);
  }
};

class MXNetReader final : public ReaderOperator {
 public:
  explicit MXNetReader(const OpSpec& spec) : ReaderOperator(spec) { init(); }

  void run(Workspace& ws) override {
    auto picks = next_indices(ws);
    const int n = ws.batch_size;
    ws.outputs.push_back(Batch::with_samples(n, DType::kU8));
    ws.outputs.push_back(Batch::with_samples(n, DType::kF32));
    for (int i = 0; i < n; ++i) {
      auto [file, rec] = locate(picks[size_t(i)]);
      auto info = detail::concat(file->path, " (record ", rec, " at offset ",
                                 file->records[size_t(rec)].offset, ")");
      ws.outputs[0].set_source_info(i, info);
      ws.outputs[1].set_source_info(i, info);
    }
    for_each_sample(
        ws, n,
        [&](int i, int) {
          auto [file, rec] = locate(picks[size_t(i)]);
          const auto& e = file->records[size_t(rec)];
          std::vector<uint8_t> raw(size_t(e.size));
          ssize_t got = ::pread(file->fd, raw.data(), raw.size(), off_t(e.offset));
          STOKER_ENFORCE(got == e.size, IOError, "cannot read ", e.size, " bytes at offset ",
                         e.offset, ": ", got < 0 ? std::strerror(errno) : "short read");
          auto data = readers::read_recordio_record(raw, {0, e.size}, file->path);
          auto image = readers::parse_image_record(data, ws.outputs[0].source_info(i));
          auto img = ws.host_pool->acquire(image.image.size());
          std::memcpy(img->data(), image.image.data(), image.image.size());
          void* p = img->data();
          ws.outputs[0].set_sample(i, std::move(img), p, TensorShape{int64_t(image.image.size())});
          auto lab = ws.host_pool->acquire(image.labels.size() * 4);
          std::memcpy(lab->data(), image.labels.data(), image.labels.size() * 4);
          p = lab->data();
          ws.outputs[1].set_sample(i, std::move(lab), p, TensorShape{int64_t(image.labels.size())});
        },
        &ws.outputs[0]);
  }

 private:
  int64_t build_index() override {
    auto paths = spec_.arg<std::vector<std::string>>("path");
    auto index_paths = spec_.arg<std::vector<std::string>>("index_path");
    STOKER_ENFORCE(!paths.empty(), ValueError, "readers.mxnet: `path` is empty");
    STOKER_ENFORCE(index_paths.empty() || index_paths.size() == paths.size(), ValueError,
                   "readers.mxnet: got ", paths.size(), " files but ", index_paths.size(),
                   " index files");
    int64_t total = 0;
    for (size_t k = 0; k < paths.size(); ++k) {
      auto f = std::make_unique<RecFile>();
      f->path = paths[k];
      f->fd = ::open(f->path.c_str(), O_RDONLY | O_CLOEXEC);
      STOKER_ENFORCE(f->fd >= 0, IOError, "cannot open '", f->path, "': ", std::strerror(errno));
      struct stat st {};
      ::fstat(f->fd, &st);
      if (!index_paths.empty()) {
        f->records = readers::parse_recordio_index(read_file_text(index_paths[k]), index_paths[k],
                                                   int64_t(st.st_size));
      } else {
        f->records = readers::index_recordio(read_file_bytes(f->path), f->path);
      }
      total += int64_t(f->records.size());
      index_.add_file(int64_t(f->records.size()));
      files_.push_back(std::move(f));
    }
    STOKER_ENFORCE(total > 0, ValueError, "readers.mxnet: the files hold no records");
    return total;
  }

  std::pair<const RecFile*, int64_t> locate(int64_t index) const {
    auto [k, local] = index_.locate(index);
    return {files_[k].get(), local};
  }

  std::vector<std::unique_ptr<RecFile>> files_;
  readers::MultiFileIndex index_;
};

}  // namespace

OpSchema mxnet_reader_schema() {
  OpSchema s{
      .name = "readers.mxnet",
      .doc =
          "Reads image records from MXNet RecordIO files (magic/length framing with "
          "continuation parts re-joined, IRHeader with one or `flag` labels). Outputs the "
          "encoded image (uint8, 1-D) and the labels (float32, 1-D). With `index_path` "
          "(MXNet .idx files, 'key<TAB>offset') records are located from the index; without, "
          "the files are scanned once at build.",
      .outputs = {"data", "label"},
      .args = {{"path", ArgType::kStringList, "RecordIO (.rec) files."},
               {"index_path", ArgType::kStringList, "MXNet .idx files, one per .rec file.",
                std::vector<std::string>{}}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<MXNetReader>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
