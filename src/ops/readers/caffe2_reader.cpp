#include "stoker/ops/readers/caffe2_reader.hpp"

#include <cstring>

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/caffe2_tensor.hpp"
#include "stoker/readers/lmdb_env.hpp"

namespace stoker::ops {
namespace {

using readers::TensorProtoView;

class Caffe2Reader final : public ReaderOperator {
 public:
  explicit Caffe2Reader(const OpSpec& spec) : ReaderOperator(spec) { init(); }

  void run(Workspace& ws) override {
    auto picks = next_indices(ws);
    const int n = ws.batch_size;
    ws.outputs.push_back(Batch::with_samples(n, DType::kU8));
    ws.outputs.push_back(Batch::with_samples(n, float_labels_ ? DType::kF32 : DType::kI32));
    const std::string path = spec_.arg<std::string>("path");
    for (int i = 0; i < n; ++i) {
      auto info = path + "[" + db_->key(size_t(picks[size_t(i)])) + "]";
      ws.outputs[0].set_source_info(i, info);
      ws.outputs[1].set_source_info(i, info);
    }
    for_each_sample(
        ws, n, [&](int i, int) { read_sample(ws, i, picks[size_t(i)]); }, &ws.outputs[0]);
  }

 private:
  void read_sample(Workspace& ws, int i, int64_t index) {
    auto protos = readers::parse_tensor_protos(db_->value(size_t(index)));
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
    auto buf = ws.host_pool->acquire(bytes.size());
    if (!bytes.empty()) std::memcpy(buf->data(), bytes.data(), bytes.size());
    void* p = buf->data();
    ws.outputs[0].set_sample(i, std::move(buf), p, shape);

    const auto& lab = protos[1];
    const bool is_float = lab.data_type == TensorProtoView::kFloat;
    STOKER_ENFORCE(is_float == float_labels_, TypeError, "label tensor of data_type ",
                   lab.data_type, " in a database whose first record has ",
                   float_labels_ ? "float" : "integer", " labels");
    size_t count = is_float ? lab.floats.size() : lab.ints.size();
    auto lbuf = ws.host_pool->acquire(count * 4);
    if (is_float) {
      if (count) std::memcpy(lbuf->data(), lab.floats.data(), count * 4);
    } else {
      auto* o = static_cast<int32_t*>(lbuf->data());
      for (size_t k = 0; k < count; ++k) o[k] = int32_t(lab.ints[k]);
    }
    p = lbuf->data();
    ws.outputs[1].set_sample(i, std::move(lbuf), p, TensorShape{int64_t(count)});
  }

  int64_t build_index() override {
    db_ = std::make_unique<readers::LmdbDatabase>(spec_.arg<std::string>("path"));
    STOKER_ENFORCE(db_->size() > 0, ValueError, "LMDB '", spec_.arg<std::string>("path"),
                   "' is empty");
    auto first = readers::parse_tensor_protos(db_->value(0));
    float_labels_ = first.size() >= 2 && first[1].data_type == TensorProtoView::kFloat;
    return int64_t(db_->size());
  }

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
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<Caffe2Reader>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
