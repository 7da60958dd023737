#include "stoker/ops/readers/mxnet_reader.hpp"

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
  std::unique_ptr<readers::DataFile> file;
  std::vector<readers::RecordIOEntry> records;
};

class MXNetSource final : public ReaderSource {
 public:
  explicit MXNetSource(const OpSpec& spec) : spec_(spec), file_options_(file_options(spec)) {}

  std::vector<DType> output_dtypes() const override { return {DType::kU8, DType::kF32}; }

  std::string source_info(int64_t index) const override {
    auto [file, rec] = locate(index);
    return detail::concat(file->file->path(), " (record ", rec, " at offset ",
                          file->records[size_t(rec)].offset, ")");
  }

  bool ranges(int64_t index, std::vector<readers::FileRange>& out) const override {
    auto [file, rec] = locate(index);
    const auto& e = file->records[size_t(rec)];
    out.push_back({file->file.get(), e.offset, e.size});
    return true;
  }

  void parse(readers::LoadedSample& s, std::span<const readers::FileBytes> bytes,
             MemoryPool& pool) const override {
    const auto& raw = bytes[0];
    const auto* file = locate(s.index).first;
    std::vector<uint8_t> joined;  // only for records split into parts
    auto data = readers::recordio_record_view(raw.span(), {0, int64_t(raw.size)},
                                              file->file->path(), joined);
    std::shared_ptr<Buffer> owner = joined.empty() ? raw.owner : nullptr;
    auto image = readers::parse_image_record(data, source_info(s.index));
    readers::SampleData img{owner, image.image.data(), TensorShape{int64_t(image.image.size())}};
    if (!owner) {  // the joined copy goes away: the image needs a buffer of its own
      auto buf = pool.acquire(image.image.size());
      if (!image.image.empty()) std::memcpy(buf->data(), image.image.data(), image.image.size());
      img.data = buf->data();
      img.owner = std::move(buf);
    }
    auto lab = pool.acquire(image.labels.size() * 4);
    std::memcpy(lab->data(), image.labels.data(), image.labels.size() * 4);
    const void* l = lab->data();
    s.outputs = {std::move(img), {std::move(lab), l, TensorShape{int64_t(image.labels.size())}}};
  }

  std::vector<int64_t> file_starts() const override { return index_.starts(); }

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
      f->file = std::make_unique<readers::DataFile>(paths[k], file_options_);
      if (!index_paths.empty()) {
        f->records = readers::parse_recordio_index(read_file_text(index_paths[k]), index_paths[k],
                                                   f->file->size());
      } else {
        f->records =
            readers::index_recordio(f->file->read_all(default_host_pool()).span(), paths[k]);
      }
      total += int64_t(f->records.size());
      index_.add_file(int64_t(f->records.size()));
      files_.push_back(std::move(f));
    }
    STOKER_ENFORCE(total > 0, ValueError, "readers.mxnet: the files hold no records");
    return total;
  }

 private:
  std::pair<const RecFile*, int64_t> locate(int64_t index) const {
    auto [k, local] = index_.locate(index);
    return {files_[k].get(), local};
  }

  OpSpec spec_;
  readers::FileOptions file_options_;
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
      .make_cpu = [](const OpSpec& sp) { return make_reader<MXNetSource>(sp); },
      .deprecated_names = {"mxnet_reader"},
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
