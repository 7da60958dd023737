#include "stoker/ops/readers/caffe2_reader.hpp"

#include <cstring>

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/caffe2_tensor.hpp"
#include "stoker/readers/lmdb_env.hpp"

namespace stoker::ops {
namespace {

using readers::TensorProtoView;

class Caffe2Source final : public ReaderSource {
 public:
  explicit Caffe2Source(const OpSpec& spec) : path_(spec.arg<std::string>("path")) {}

  std::vector<DType> output_dtypes() const override {
    return {DType::kU8, float_labels_ ? DType::kF32 : DType::kI32};
  }
  std::string source_info(int64_t index) const override {
    return path_ + "[" + db_->key(size_t(index)) + "]";
  }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    auto protos = readers::parse_tensor_protos(db_->value(size_t(s.index)));
    STOKER_ENFORCE(protos.size() >= 2, ValueError,
                   "expected TensorProtos with an image and a "
                   "label tensor, got ",
                   protos.size(), " tensor(s)");
    const auto& img = protos[0];
    std::span<const uint8_t> bytes;
    TensorShape shape;
    if (img.data_type == TensorProtoView::kString) {
      STOKER_ENFORCE(!img.strings.empty(), ValueError, "the image tensor has no string_data");
      bytes = img.strings[0];
      shape = TensorShape{int64_t(bytes.size())};
    } else {
      STOKER_ENFORCE(
          img.data_type == TensorProtoView::kByte || img.data_type == TensorProtoView::kUint8,
          ValueError, "the image tensor has data_type ", img.data_type,
          "; expected STRING (encoded) or BYTE/UINT8 (raw)");
      bytes = img.bytes;
      shape = TensorShape(img.dims);
      STOKER_ENFORCE(shape.volume() == int64_t(bytes.size()), ValueError, "raw image of dims ",
                     shape.to_string(), " has ", bytes.size(), " bytes");
    }
    // LMDB's map is not owned by the batch: copy, so the batch may outlive the reader.
    auto buf = pool.acquire(bytes.size());
    if (!bytes.empty()) std::memcpy(buf->data(), bytes.data(), bytes.size());
    const void* p = buf->data();
    readers::SampleData image{std::move(buf), p, shape};

    const auto& lab = protos[1];
    const bool is_float = lab.data_type == TensorProtoView::kFloat;
    STOKER_ENFORCE(is_float == float_labels_, TypeError, "label tensor of data_type ",
                   lab.data_type, " in a database whose first record has ",
                   float_labels_ ? "float" : "integer", " labels");
    size_t count = is_float ? lab.floats.size() : lab.ints.size();
    auto lbuf = pool.acquire(count * 4);
    if (is_float) {
      if (count) std::memcpy(lbuf->data(), lab.floats.data(), count * 4);
    } else {
      auto* o = static_cast<int32_t*>(lbuf->data());
      for (size_t k = 0; k < count; ++k) o[k] = int32_t(lab.ints[k]);
    }
    p = lbuf->data();
    s.outputs = {std::move(image), {std::move(lbuf), p, TensorShape{int64_t(count)}}};
  }

  int64_t build_index() override {
    db_ = std::make_unique<readers::LmdbDatabase>(path_);
    STOKER_ENFORCE(db_->size() > 0, ValueError, "LMDB '", path_, "' is empty");
    auto first = readers::parse_tensor_protos(db_->value(0));
    float_labels_ = first.size() >= 2 && first[1].data_type == TensorProtoView::kFloat;
    return int64_t(db_->size());
  }

  std::string path_;
  std::unique_ptr<readers::LmdbDatabase> db_;
  bool float_labels_ = false;
};

}  // namespace

OpSchema caffe2_reader_schema() {
  OpSchema s{
      .name = "readers.caffe2",
      .doc =
          "Reads a Caffe2 LMDB of TensorProtos: protos[0] is the image (STRING: the encoded "
          "file bytes, 1-D uint8; BYTE/UINT8: raw pixels shaped by its dims), protos[1] the "
          "labels (INT32/INT64 as int32, FLOAT as float32; 1-D). Source info is "
          "'path[key]'. Needs stoker built with liblmdb.",
      .outputs = {"images", "labels"},
      .args = {{"path", ArgType::kString, "The LMDB environment (folder with data.mdb)."}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<Caffe2Source>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
