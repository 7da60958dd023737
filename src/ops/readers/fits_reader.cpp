#include "stoker/ops/readers/fits_reader.hpp"

#include <algorithm>
#include <climits>

#include "stoker/ops/readers/file_list.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/fits.hpp"

namespace stoker::ops {
namespace {

constexpr const char* kName = "experimental.readers.fits";

std::vector<int64_t> hdu_indices(const OpSpec& spec) {
  auto hdus = spec.arg<std::vector<int64_t>>("hdu_indices");
  STOKER_ENFORCE(!hdus.empty(), ValueError, kName,
                 ": hdu_indices is empty; it names the HDUs to read, one output each");
  for (auto h : hdus)
    STOKER_ENFORCE(h >= 1 && h <= INT_MAX, ValueError, kName, ": hdu_indices holds ", h,
                   "; HDUs are counted from 1 (the primary HDU) to ", INT_MAX);
  return hdus;
}

// The output names: "hdu<N>" per index, with the output's position appended to an index given
// twice. Asked for when the operator is defined, so that bad indices are named there.
std::vector<std::string> fits_output_names(const OpSpec& spec) {
  const auto hdus = hdu_indices(spec);
  std::vector<std::string> names;
  for (size_t k = 0; k < hdus.size(); ++k) {
    std::string name = "hdu";
    name += std::to_string(hdus[k]);
    if (std::count(hdus.begin(), hdus.end(), hdus[k]) > 1)
      name.append("_").append(std::to_string(k));
    names.push_back(std::move(name));
  }
  return names;
}

// DALI checks `dtypes` (one per HDU index, each a type it lists) and then gives every output
// the type its HDU holds: the same here.
void check_dtypes(const OpSpec& spec, size_t outputs) {
  if (!spec.has_arg("dtypes")) return;
  const auto names = spec.arg<std::vector<std::string>>("dtypes");
  STOKER_ENFORCE(names.size() == outputs, ValueError, kName, ": dtypes has ", names.size(),
                 " entries for ", outputs, " HDU ", outputs == 1 ? "index" : "indices",
                 " (one per entry of hdu_indices)");
  for (const auto& n : names) {
    DType d = DType::kBool;
    try {
      d = dtype_from_name(n);
    } catch (const TypeError&) {
      throw TypeError(detail::concat(kName, ": dtypes holds the unknown dtype '", n, "'"));
    }
    STOKER_ENFORCE(d != DType::kBool && d != DType::kBF16, TypeError, kName, ": dtypes holds ",
                   dtype_name(d),
                   ", which FITS images cannot hold (uint8, uint16, uint32, uint64, int8, int16, "
                   "int32, int64, float16, float32, float64)");
  }
}

class FitsSource final : public ReaderSource {
 public:
  explicit FitsSource(const OpSpec& spec)
      : spec_(spec), file_options_(file_options(spec)), hdus_(hdu_indices(spec)) {
    check_dtypes(spec, hdus_.size());
  }

  std::vector<DType> output_dtypes() const override { return dtypes_; }
  std::string source_info(int64_t index) const override { return files_[size_t(index)]; }
  bool preshuffles() const override { return true; }  // a file list, as DALI's FileLoader

  int64_t build_index() override {
    STOKER_ENFORCE(readers::fits_available(), RuntimeError, kName,
                   ": stoker was built without cfitsio (libcfitsio-dev): FITS files cannot be "
                   "read here");
    files_ = list_reader_files(spec_);
    // Each output's dtype and number of dimensions come from the first file's HDUs.
    const auto bytes = readers::read_whole_file(files_[0], file_options_, default_host_pool());
    readers::FitsFile file(bytes.span(), files_[0]);
    for (auto h : hdus_) {
      const auto img = file.image(int(h));
      dtypes_.push_back(img.dtype);
      ndims_.push_back(img.shape.size());
    }
    return int64_t(files_.size());
  }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    const auto& path = files_[size_t(s.index)];
    const auto bytes = readers::read_whole_file(path, file_options_, pool);
    readers::FitsFile file(bytes.span(), path);
    for (size_t k = 0; k < hdus_.size(); ++k) {
      const auto img = file.image(int(hdus_[k]));
      STOKER_ENFORCE(img.dtype == dtypes_[k], TypeError, "HDU ", img.hdu, " holds ",
                     dtype_name(img.dtype), " values, but the first file of the dataset holds ",
                     dtype_name(dtypes_[k]), " there (an output holds one dtype)");
      STOKER_ENFORCE(img.shape.size() == ndims_[k], ValueError, "HDU ", img.hdu, " has ",
                     img.shape.size(), " axes, but the first file of the dataset has ", ndims_[k],
                     " there (an output's samples have one number of dimensions)");
      auto buf = pool.acquire(img.bytes());
      file.read(img, buf->data());
      const void* data = buf->data();
      s.outputs.push_back({std::move(buf), data, TensorShape(img.shape)});
    }
  }

 private:
  OpSpec spec_;
  readers::FileOptions file_options_;
  std::vector<int64_t> hdus_;
  std::vector<std::string> files_;
  std::vector<DType> dtypes_;
  std::vector<size_t> ndims_;
};

}  // namespace

OpSchema fits_reader_schema() {
  OpSchema s{
      .name = kName,
      .doc =
          "Reads image HDUs from FITS files (DALI's experimental.readers.fits), one output per "
          "entry of `hdu_indices`, with cfitsio: plain images and tile-compressed ones (RICE_1, "
          "GZIP_1, GZIP_2, PLIO_1; quantised floats restored as cfitsio restores them; "
          "HCOMPRESS_1 is refused). Values come scaled by BZERO and BSCALE in the type they then "
          "have (BITPIX 16 with BZERO 32768: uint16; a scaled 8- or 16-bit image: float32, a "
          "scaled 32- or 64-bit one: float64), shaped NAXISn x ... x NAXIS1 (as astropy). Every "
          "file must give an output the dtype and number of dimensions of the first file. "
          "Files: `files` (relative to `file_root` when given), a `file_list` (one name per "
          "line, relative to `file_root` when given, else to the list's folder), or every file "
          "under `file_root` matching `file_filter`, sorted. gzip-compressed files (.fits.gz) "
          "are inflated first. Headers and tiles are checked before cfitsio reads them: a file "
          "whose header declares more data than it holds, or that cfitsio would mishandle, is "
          "an error naming it. device='gpu' reads and decodes on the CPU and copies each output "
          "to the GPU.",
      .output_names = fits_output_names,
      .args = {{"file_root", ArgType::kString, "Folder to search, or base of `files`.",
                std::string()},
               {"files", ArgType::kStringList, "Explicit list of FITS files.",
                std::vector<std::string>{}},
               {"file_list", ArgType::kString,
                "Text file of FITS file names, one per line (instead of `files`).", std::string()},
               {"file_filter", ArgType::kString, "Glob of files to take from file_root.",
                std::string("*.fits")},
               {"hdu_indices", ArgType::kIntList,
                "The HDUs to read, counted from 1 (the primary HDU): one output each. The "
                "default, [2], is the first extension (where a compressed image lives).",
                std::vector<int64_t>{2}},
               optional_arg("dtypes", ArgType::kStringList,
                            "One dtype per entry of hdu_indices, checked as DALI checks it; as in "
                            "DALI, each output has the type its HDU holds whatever this says.",
                            false)},
      .make_cpu = [](const OpSpec& sp) { return make_reader<FitsSource>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
