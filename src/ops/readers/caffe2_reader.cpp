#include "stoker/ops/readers/caffe2_reader.hpp"

#include <cstring>

#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/caffe2_tensor.hpp"
#include "stoker/readers/data_file.hpp"
#include "stoker/readers/lmdb_env.hpp"

namespace stoker::ops {
namespace {

using readers::TensorProtoView;

// DALI's (and Caffe2's ImageInputOp's) label types.
enum LabelType : int {
  kSingleLabel = 0,         // one value
  kMultiLabelSparse = 1,    // active label indices -> a num_labels vector of 0 and 1
  kMultiLabelDense = 2,     // all values as they are
  kMultiLabelWeighted = 3,  // indices in protos[1], weights in protos[2] -> a float vector
  kNoLabel = 4,             // no label output
};

int label_type_of(const OpSpec& spec) {
  auto t = spec.arg<int64_t>("label_type");
  STOKER_ENFORCE(t >= 0 && t <= 4, ValueError, "readers.caffe2: label_type must be 0-4, got ", t);
  return int(t);
}

std::vector<std::string> caffe2_output_names(const OpSpec& spec) {
  if (label_type_of(spec) == kNoLabel) return {"images"};
  return {"images", "labels"};
}

class Caffe2Source final : public ReaderSource {
 public:
  explicit Caffe2Source(const OpSpec& spec)
      : label_type_(label_type_of(spec)), num_labels_(spec.arg<int64_t>("num_labels")) {
    STOKER_ENFORCE(num_labels_ >= 1, ValueError,
                   "readers.caffe2: num_labels must be at least 1, got ", num_labels_);
    // Each label is a vector of num_labels (multi-label types): arg_limits.hpp.
    check_arg_elements("readers.caffe2", "num_labels", std::vector<int64_t>{num_labels_});
    lmdb_.path = spec.arg<std::string>("path");
  }

  std::vector<DType> output_dtypes() const override {
    if (label_type_ == kNoLabel) return {DType::kU8};
    bool f = float_labels_ || label_type_ == kMultiLabelWeighted;
    return {DType::kU8, f ? DType::kF32 : DType::kI32};
  }
  std::string source_info(int64_t index) const override { return lmdb_.source_info(index); }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    auto protos = readers::parse_tensor_protos(lmdb_.value(s.index));
    const size_t needed = label_type_ == kNoLabel ? 1 : label_type_ == kMultiLabelWeighted ? 3 : 2;
    STOKER_ENFORCE(protos.size() >= needed, ValueError, "expected TensorProtos with ", needed,
                   " tensors (image", needed > 1 ? ", labels" : "", needed > 2 ? ", weights" : "",
                   ") for label_type ", label_type_, ", got ", protos.size());
    s.outputs = {image(protos[0])};
    if (label_type_ != kNoLabel) s.outputs.push_back(labels(protos, pool));
  }

  int64_t build_index() override {
    const int64_t size = lmdb_.open();
    auto first = readers::parse_tensor_protos(lmdb_.value(0));
    float_labels_ = first.size() >= 2 && first[1].data_type == TensorProtoView::kFloat;
    return size;
  }

 private:
  readers::SampleData image(const TensorProtoView& img) const {
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
    // A view into LMDB's map, which lmdb_.owner keeps alive.
    readers::prefault(bytes.data(), bytes.size());
    return {lmdb_.owner, bytes.data(), shape};
  }

  // The values of a label tensor as doubles (int32/int64 or float data).
  std::vector<double> values(const TensorProtoView& t, const char* what) const {
    const bool is_float = t.data_type == TensorProtoView::kFloat;
    STOKER_ENFORCE(is_float || t.data_type == TensorProtoView::kInt32 ||
                       t.data_type == TensorProtoView::kInt64,
                   TypeError, "the ", what, " tensor has data_type ", t.data_type,
                   "; expected INT32, INT64 or FLOAT");
    return is_float ? std::vector<double>(t.floats.begin(), t.floats.end())
                    : std::vector<double>(t.ints.begin(), t.ints.end());
  }

  readers::SampleData labels(const std::vector<TensorProtoView>& protos, MemoryPool& pool) const {
    const auto& lab = protos[1];
    const bool is_float = lab.data_type == TensorProtoView::kFloat;
    STOKER_ENFORCE(is_float == float_labels_, TypeError, "label tensor of data_type ",
                   lab.data_type, " in a database whose first record has ",
                   float_labels_ ? "float" : "integer", " labels");
    auto v = values(lab, "label");
    std::vector<double> out;
    switch (label_type_) {
      case kSingleLabel:
        STOKER_ENFORCE(v.size() == 1, ValueError,
                       "label_type 0 (single label) expects one label, "
                       "the record has ",
                       v.size(), " (label_type 2 reads them all)");
        out = v;
        break;
      case kMultiLabelDense:
        out = v;
        break;
      case kMultiLabelSparse:
      case kMultiLabelWeighted: {
        std::vector<double> weights(v.size(), 1.0);
        if (label_type_ == kMultiLabelWeighted) {
          weights = values(protos[2], "weight");
          STOKER_ENFORCE(weights.size() == v.size(), ValueError, "the record has ", v.size(),
                         " label indices but ", weights.size(), " weights");
        }
        out.assign(size_t(num_labels_), 0.0);
        for (size_t k = 0; k < v.size(); ++k) {
          STOKER_ENFORCE(v[k] >= 0 && v[k] < double(num_labels_) && v[k] == double(int64_t(v[k])),
                         ValueError, "label index ", v[k],
                         " is outside [0, num_labels=", num_labels_, ")");
          out[size_t(v[k])] = weights[k];
        }
        break;
      }
    }
    const bool f = is_float || label_type_ == kMultiLabelWeighted;
    auto buf = pool.acquire(out.size() * 4);
    for (size_t k = 0; k < out.size(); ++k) {
      if (f)
        static_cast<float*>(buf->data())[k] = float(out[k]);
      else
        static_cast<int32_t*>(buf->data())[k] = int32_t(out[k]);
    }
    const void* p = buf->data();
    return {std::move(buf), p, TensorShape{int64_t(out.size())}};
  }

  int label_type_;
  int64_t num_labels_;
  readers::LmdbSourceDb lmdb_;
  bool float_labels_ = false;
};

}  // namespace

OpSchema caffe2_reader_schema() {
  OpSchema s{
      .name = "readers.caffe2",
      .doc =
          "Reads a Caffe2 LMDB of TensorProtos: protos[0] is the image (STRING: the encoded "
          "file bytes, 1-D uint8; BYTE/UINT8: raw pixels shaped by its dims), protos[1] the "
          "labels (INT32/INT64 as int32, FLOAT as float32; 1-D), read as `label_type` says "
          "(DALI's and Caffe2's ImageInputOp's types). Source info is 'path[key]'. Needs "
          "stoker built with liblmdb.",
      .output_names = caffe2_output_names,
      .args = {{"path", ArgType::kString, "The LMDB environment (folder with data.mdb)."},
               {"label_type", ArgType::kInt,
                "0: a single label (shape (1,)); 1: sparse label indices, returned as a "
                "num_labels vector of 0 and 1; 2: dense labels, all values; 3: sparse indices "
                "(protos[1]) with weights (protos[2]), a float32 num_labels vector of the "
                "weights; 4: no label (one output).",
                int64_t{0}},
               {"num_labels", ArgType::kInt, "Number of classes, for label_type 1 and 3.",
                int64_t{1}}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<Caffe2Source>(sp); },
      .deprecated_names = {"caffe2_reader"},
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
