#include "stoker/ops/readers/file_reader.hpp"

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/file_index.hpp"

namespace stoker::ops {
namespace {

class FileSource final : public ReaderSource {
 public:
  explicit FileSource(const OpSpec& spec) : spec_(spec), files_(file_options(spec)) {}

  std::vector<DType> output_dtypes() const override { return {DType::kU8, DType::kI32}; }
  std::string source_info(int64_t index) const override { return index_[size_t(index)].path; }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    const auto& entry = index_[size_t(s.index)];
    auto bytes = readers::read_whole_file(entry.path, files_, pool);
    auto label = pool.acquire(sizeof(int32_t));
    *static_cast<int32_t*>(label->data()) = entry.label;
    const void* l = label->data();
    s.outputs = {{std::move(bytes.owner), bytes.data, TensorShape{int64_t(bytes.size)}},
                 {std::move(label), l, TensorShape{1}}};
  }

  bool preshuffles() const override { return true; }  // as DALI's file lists

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

 private:
  OpSpec spec_;
  readers::FileOptions files_;
  std::vector<readers::FileEntry> index_;  // built once, then read-only
};

// DALI's default: the image extensions and the audio ones decoders.audio reads.
std::vector<std::string> default_file_filters() {
  std::vector<std::string> filters = readers::default_image_filters();
  for (const char* audio : {"*.flac", "*.ogg", "*.wav"}) filters.emplace_back(audio);
  return filters;
}

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
              {"labels", ArgType::kIntList,
               "Labels for `files` (default: the file's position in `files`, as in DALI).",
               std::vector<int64_t>{}},
              {"file_filters", ArgType::kStringList,
               "Glob patterns of files to take from "
               "`file_root` (case-insensitive).",
               default_file_filters()},
          },
      .make_cpu = [](const OpSpec& s) { return make_reader<FileSource>(s); },
      .deprecated_names = {"file_reader"},
  };
  for (auto& a : loader_arg_schemas()) schema.args.push_back(a);
  return schema;
}

}  // namespace stoker::ops
