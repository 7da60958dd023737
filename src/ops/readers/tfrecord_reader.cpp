#include "stoker/ops/readers/tfrecord_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "stoker/core/file_io.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/text_lines.hpp"
#include "stoker/readers/tf_example.hpp"
#include "stoker/readers/tfrecord.hpp"

namespace stoker::ops {
namespace {

enum class FeatureType { kString, kInt64, kFloat32 };

struct FeatureSpec {
  std::string name;
  FeatureType type;
  bool var_len;
  std::vector<int64_t> shape;  // fixed-length: the output shape
  std::string default_text;    // "" : no default
};

std::vector<int64_t> parse_dims(const std::string& s, const std::string& what) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    int64_t d = -1;
    auto r = std::from_chars(s.data() + pos, s.data() + end, d);
    STOKER_ENFORCE(r.ec == std::errc() && r.ptr == s.data() + end && d >= 0, ValueError,
                   "readers.tfrecord: bad shape '", s, "' for feature '", what, "'");
    dims.push_back(d);
    pos = end + 1;
  }
  return dims;
}

std::vector<FeatureSpec> parse_features(const OpSpec& spec) {
  auto names = spec.arg<std::vector<std::string>>("feature_names");
  auto types = spec.arg<std::vector<std::string>>("feature_types");
  auto var = spec.arg<std::vector<int64_t>>("feature_var_len");
  auto shapes = spec.arg<std::vector<std::string>>("feature_shapes");
  auto defaults = spec.arg<std::vector<std::string>>("feature_defaults");
  STOKER_ENFORCE(!names.empty(), ValueError, "readers.tfrecord: no features given");
  STOKER_ENFORCE(types.size() == names.size() && var.size() == names.size() &&
                     shapes.size() == names.size() && defaults.size() == names.size(),
                 ValueError,
                 "readers.tfrecord: feature_* arguments must have one entry per "
                 "feature (",
                 names.size(), ")");
  std::vector<FeatureSpec> out;
  for (size_t i = 0; i < names.size(); ++i) {
    FeatureSpec f{names[i], FeatureType::kString, var[i] != 0, parse_dims(shapes[i], names[i]),
                  defaults[i]};
    if (types[i] == "int64") {
      f.type = FeatureType::kInt64;
    } else if (types[i] == "float32") {
      f.type = FeatureType::kFloat32;
    } else {
      STOKER_ENFORCE(types[i] == "string", ValueError, "readers.tfrecord: feature '", names[i],
                     "' has type '", types[i], "'; expected string, int64 or float32");
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> feature_output_names(const OpSpec& spec) {
  return spec.arg<std::vector<std::string>>("feature_names");
}

// One TFRecord file, opened once; gzip files are decompressed into memory at build.
struct RecordFile {
  std::unique_ptr<readers::DataFile> file;
  std::vector<readers::RecordSpan> records;
};

class TFRecordSource final : public ReaderSource {
 public:
  explicit TFRecordSource(const OpSpec& spec)
      : spec_(spec),
        features_(parse_features(spec)),
        check_crc_(spec.arg<bool>("check_crc")),
        file_options_(file_options(spec)) {}

  std::vector<DType> output_dtypes() const override {
    std::vector<DType> out;
    for (auto& f : features_)
      out.push_back(f.type == FeatureType::kString  ? DType::kU8
                    : f.type == FeatureType::kInt64 ? DType::kI64
                                                    : DType::kF32);
    return out;
  }

  std::string source_info(int64_t index) const override {
    auto [file, rec] = locate(index);
    return detail::concat(file->file->path(), " (record ", rec, " at offset ",
                          file->records[size_t(rec)].offset, ")");
  }

  std::vector<int64_t> file_starts() const override { return index_.starts(); }

  int64_t build_index() override {
    auto paths = spec_.arg<std::vector<std::string>>("path");
    auto index_paths = spec_.arg<std::vector<std::string>>("index_path");
    STOKER_ENFORCE(!paths.empty(), ValueError, "readers.tfrecord: `path` is empty");
    STOKER_ENFORCE(index_paths.empty() || index_paths.size() == paths.size(), ValueError,
                   "readers.tfrecord: got ", paths.size(), " files but ", index_paths.size(),
                   " index files");
    MemoryPool& pool = default_host_pool();
    int64_t total = 0;
    for (size_t k = 0; k < paths.size(); ++k) {
      auto f = std::make_unique<RecordFile>();
      f->file = std::make_unique<readers::DataFile>(paths[k], file_options_);
      auto head = f->file->read(0, std::min<int64_t>(2, f->file->size()), pool);
      if (readers::is_gzip(head.span())) {
        auto inflated = readers::gunzip(f->file->read_all(pool).span(), paths[k]);
        f->file = std::make_unique<readers::DataFile>(paths[k], std::move(inflated));
        f->records = readers::index_tfrecord(f->file->read_all(pool).span(), paths[k], check_crc_);
      } else if (!index_paths.empty()) {
        auto text = read_file_text(index_paths[k]);
        f->records = readers::parse_tfrecord_index(text, index_paths[k], f->file->size());
      } else {
        f->records = readers::index_tfrecord(f->file->read_all(pool).span(), paths[k], check_crc_);
      }
      total += int64_t(f->records.size());
      index_.add_file(int64_t(f->records.size()));
      files_.push_back(std::move(f));
    }
    STOKER_ENFORCE(total > 0, ValueError, "readers.tfrecord: the files hold no records");
    return total;
  }

  bool ranges(int64_t index, std::vector<readers::FileRange>& out) const override {
    auto [file, rec] = locate(index);
    const auto& span = file->records[size_t(rec)];
    out.push_back({file->file.get(), span.offset, span.size});
    return true;
  }

  // The record (header, data, footer); byte features point into it.
  void parse(readers::LoadedSample& s, std::span<const readers::FileBytes> bytes,
             MemoryPool& pool) const override {
    const auto& record = bytes[0];
    // Re-frame the record alone so that the framing checks run on exactly these bytes.
    readers::RecordSpan local{0, int64_t(record.size)};
    auto payload = readers::tfrecord_payload(record.span(), local,
                                             locate(s.index).first->file->path(), check_crc_);
    auto example = readers::parse_example(payload);
    s.outputs.clear();
    for (const auto& f : features_) s.outputs.push_back(emit(f, example, record.owner, pool));
  }

 private:
  std::pair<const RecordFile*, int64_t> locate(int64_t index) const {
    auto [k, local] = index_.locate(index);
    return {files_[k].get(), local};
  }

  static readers::SampleData emit(const FeatureSpec& f,
                                  std::map<std::string, readers::FeatureValue>& example,
                                  const std::shared_ptr<Buffer>& record, MemoryPool& pool) {
    using Kind = readers::FeatureValue::Kind;
    auto it = example.find(f.name);
    const bool present = it != example.end() && it->second.kind != Kind::kNone;
    const Kind want = f.type == FeatureType::kString  ? Kind::kBytes
                      : f.type == FeatureType::kInt64 ? Kind::kInt64
                                                      : Kind::kFloat;
    static const char* kKindNames[] = {"no", "bytes", "float", "int64"};
    if (present)
      STOKER_ENFORCE(it->second.kind == want, TypeError, "feature '", f.name, "' holds ",
                     kKindNames[int(it->second.kind)], " values, expected ", kKindNames[int(want)]);
    if (f.type == FeatureType::kString) {
      if (present && !it->second.bytes.empty()) {
        auto b = it->second.bytes[0];
        return {record, b.data(), TensorShape{int64_t(b.size())}};
      }
      STOKER_ENFORCE(f.var_len || !f.default_text.empty(), ValueError, "feature '", f.name,
                     "' is missing from the record and has no default");
      auto d = pool.acquire(f.default_text.size());
      if (!f.default_text.empty())  // memcpy may not be given null, even for 0 bytes
        std::memcpy(d->data(), f.default_text.data(), f.default_text.size());
      const void* data = d->data();
      return {std::move(d), data, TensorShape{int64_t(f.default_text.size())}};
    }
    std::vector<double> values;
    if (present) {
      if (f.type == FeatureType::kInt64)
        values.assign(it->second.ints.begin(), it->second.ints.end());
      else
        values.assign(it->second.floats.begin(), it->second.floats.end());
    }
    TensorShape shape;
    if (f.var_len) {
      // DALI's VarLenFeature(partial_shape, ...): (n / volume, *partial_shape).
      int64_t inner = 1;
      for (int64_t d : f.shape) inner *= d;
      STOKER_ENFORCE(inner > 0 && int64_t(values.size()) % inner == 0, ValueError, "feature '",
                     f.name, "' has ", values.size(), " values, not a multiple of its partial ",
                     "shape's volume ", inner);
      std::vector<int64_t> dims{int64_t(values.size()) / inner};
      dims.insert(dims.end(), f.shape.begin(), f.shape.end());
      shape = TensorShape(dims);
    } else {
      shape = TensorShape(f.shape);
      if (!present) {
        STOKER_ENFORCE(!f.default_text.empty(), ValueError, "feature '", f.name,
                       "' is missing from the record and has no default");
        double dv = 0;
        auto r = std::from_chars(f.default_text.data(),
                                 f.default_text.data() + f.default_text.size(), dv);
        STOKER_ENFORCE(r.ec == std::errc(), ValueError, "feature '", f.name, "': bad default '",
                       f.default_text, "'");
        values.assign(size_t(shape.volume()), dv);
      }
      STOKER_ENFORCE(int64_t(values.size()) == shape.volume(), ValueError, "feature '", f.name,
                     "' has ", values.size(), " values, expected shape ", shape.to_string(), " = ",
                     shape.volume());
    }
    size_t esize = f.type == FeatureType::kInt64 ? 8 : 4;
    auto buf = pool.acquire(values.size() * esize);
    void* data = buf->data();
    if (f.type == FeatureType::kInt64) {
      // Straight from the parsed ints: doubles would round values above 2^53.
      const auto& ints = present ? it->second.ints : std::vector<int64_t>{};
      auto* o = static_cast<int64_t*>(data);
      for (size_t k = 0; k < values.size(); ++k) o[k] = present ? ints[k] : int64_t(values[k]);
    } else {
      auto* o = static_cast<float*>(data);
      for (size_t k = 0; k < values.size(); ++k) o[k] = float(values[k]);
    }
    return {std::move(buf), data, shape};
  }

  OpSpec spec_;
  std::vector<FeatureSpec> features_;
  bool check_crc_;
  readers::FileOptions file_options_;
  std::vector<std::unique_ptr<RecordFile>> files_;
  readers::MultiFileIndex index_;
};

}  // namespace

OpSchema tfrecord_reader_schema() {
  OpSchema s{
      .name = "readers.tfrecord",
      .doc =
          "Reads tf.train.Example records from TFRecord files (optionally gzip-compressed, "
          "optionally with DALI tfrecord2idx index files) and outputs one tensor per "
          "feature: bytes as uint8 (1-D, a view into the record), int64 as int64, floats as "
          "float32. Fixed-length features have the given shape (a default fills missing "
          "ones); variable-length ones are 1-D, or (n, *partial_shape) given a partial shape. In "
          "Python use fn.readers.tfrecord(path=..., "
          "index_path=..., features={name: stoker.tfrecord.FixedLenFeature(...)}), which "
          "fills the feature_* arguments and returns a dict of outputs.",
      .output_names = feature_output_names,
      .args = {{"path", ArgType::kStringList, "TFRecord files."},
               {"index_path", ArgType::kStringList,
                "Index files, one per file ('offset size' lines); without them the files are "
                "scanned once at build.",
                std::vector<std::string>{}},
               {"feature_names", ArgType::kStringList, "Feature keys, in output order."},
               {"feature_types", ArgType::kStringList, "string | int64 | float32, per feature."},
               {"feature_var_len", ArgType::kIntList, "1 for variable-length, per feature."},
               {"feature_shapes", ArgType::kStringList,
                "Fixed-length shapes as '2,3' ('' for a scalar); for variable-length features the "
                "partial shape of the inner dimensions ('' for 1-D), per feature."},
               {"feature_defaults", ArgType::kStringList,
                "Default values as text ('' for none), per feature."},
               {"check_crc", ArgType::kBool, "Verify the masked CRC32C of every record.", false}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<TFRecordSource>(sp); },
      .deprecated_names = {"tfrecord_reader"},
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
