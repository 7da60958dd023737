#include "stoker/ops/readers/numpy_reader.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>

#include "stoker/core/file_io.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/npy.hpp"

namespace stoker::ops {
namespace {

class NumpySource final : public ReaderSource {
 public:
  explicit NumpySource(const OpSpec& spec) : spec_(spec), file_options_(file_options(spec)) {}

  std::vector<DType> output_dtypes() const override { return {dtype_}; }
  std::string source_info(int64_t index) const override { return files_[size_t(index)]; }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    const auto& path = files_[size_t(s.index)];
    auto bytes = readers::read_whole_file(path, file_options_, pool);
    auto h = readers::parse_npy_header(bytes.span(), path);
    STOKER_ENFORCE(h.dtype == dtype_, TypeError, "the array has dtype ", dtype_name(h.dtype),
                   ", but the first file of the dataset has ", dtype_name(dtype_),
                   " (a batch holds one dtype)");
    const bool aligned = uintptr_t(bytes.data + h.data_offset) % dtype_size(h.dtype) == 0;
    if (!h.fortran_order && aligned) {  // C order: the array is a view of the file's bytes
      s.outputs = {{std::move(bytes.owner), bytes.data + h.data_offset, TensorShape(h.shape)}};
      return;
    }
    auto buf = pool.acquire(h.data_bytes());
    readers::npy_to_c_order(h, bytes.data + h.data_offset, static_cast<uint8_t*>(buf->data()));
    const void* data = buf->data();
    s.outputs = {{std::move(buf), data, TensorShape(h.shape)}};
  }

  int64_t build_index() override {
    namespace fs = std::filesystem;
    auto root = spec_.arg<std::string>("file_root");
    auto files = spec_.arg<std::vector<std::string>>("files");
    if (!files.empty()) {
      for (auto& f : files)
        files_.push_back(root.empty() || fs::path(f).is_absolute() ? f
                                                                   : (fs::path(root) / f).string());
    } else {
      STOKER_ENFORCE(!root.empty(), ValueError, "readers.numpy: give `file_root` or `files`");
      std::error_code ec;
      STOKER_ENFORCE(fs::is_directory(root, ec), IOError, "file_root '", root,
                     "' is not a folder (or cannot be read)");
      auto filter = spec_.arg<std::string>("file_filter");
      for (auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file() &&
            fnmatch(filter.c_str(), e.path().filename().c_str(), FNM_CASEFOLD) == 0)
          files_.push_back(e.path().string());
      std::sort(files_.begin(), files_.end());
      STOKER_ENFORCE(!files_.empty(), ValueError, "file_root '", root,
                     "' holds no files matching '", filter, "'");
    }
    // The batch dtype comes from the first file's header.
    auto first = read_file_bytes(files_[0]);
    dtype_ = readers::parse_npy_header(first, files_[0]).dtype;
    return int64_t(files_.size());
  }

  OpSpec spec_;
  readers::FileOptions file_options_;
  std::vector<std::string> files_;
  DType dtype_ = DType::kU8;
};

}  // namespace

OpSchema numpy_reader_schema() {
  OpSchema s{
      .name = "readers.numpy",
      .doc =
          "Reads arrays from NumPy .npy files (format versions 1-3, little-endian bool, "
          "integer and float dtypes; Fortran-ordered arrays are returned in C order). All "
          "files must share the dtype of the first one. Files: `files` (relative to "
          "`file_root` when given) or every file under `file_root` matching `file_filter`, "
          "sorted.",
      .outputs = {"data"},
      .args = {{"file_root", ArgType::kString, "Folder to search, or base of `files`.",
                std::string()},
               {"files", ArgType::kStringList, "Explicit list of .npy files.",
                std::vector<std::string>{}},
               {"file_filter", ArgType::kString, "Glob of files to take from file_root.",
                std::string("*.npy")}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<NumpySource>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
