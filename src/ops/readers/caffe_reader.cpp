#include "stoker/ops/readers/caffe_reader.hpp"

#include <cstring>

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/caffe_datum.hpp"
#include "stoker/readers/data_file.hpp"
#include "stoker/readers/lmdb_env.hpp"

namespace stoker::ops {
namespace {

class CaffeSource final : public ReaderSource {
 public:
  explicit CaffeSource(const OpSpec& spec) { lmdb_.path = spec.arg<std::string>("path"); }

  std::vector<DType> output_dtypes() const override { return {DType::kU8, DType::kI32}; }
  TensorLayout output_layout(size_t k) const override {
    return k == 0 && raw_ ? TensorLayout("HWC") : TensorLayout();
  }
  std::string source_info(int64_t index) const override { return lmdb_.source_info(index); }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    auto d = readers::parse_datum(lmdb_.value(s.index));
    STOKER_ENFORCE(d.encoded != raw_, ValueError,
                   "the database mixes encoded and raw Datum records (a batch holds one kind)");
    auto label = pool.acquire(sizeof(int32_t));
    *static_cast<int32_t*>(label->data()) = int32_t(d.label);
    const void* l = label->data();
    readers::SampleData image;
    if (d.encoded) {  // a view into LMDB's map, which lmdb_.owner keeps alive
      readers::prefault(d.data.data(), d.data.size());
      image = {lmdb_.owner, d.data.data(), TensorShape{int64_t(d.data.size())}};
    } else {
      const int64_t C = d.channels, H = d.height, W = d.width;
      auto buf = pool.acquire(size_t(C * H * W));
      auto* out = static_cast<uint8_t*>(buf->data());
      for (int64_t c = 0; c < C; ++c)  // Caffe stores CHW; images are HWC
        for (int64_t y = 0; y < H; ++y)
          for (int64_t x = 0; x < W; ++x)
            out[(y * W + x) * C + c] = d.data[size_t((c * H + y) * W + x)];
      image = {std::move(buf), out, TensorShape{H, W, C}};
    }
    s.outputs = {std::move(image), {std::move(label), l, TensorShape{1}}};
  }

  int64_t build_index() override {
    const int64_t size = lmdb_.open();
    raw_ = !readers::parse_datum(lmdb_.value(0)).encoded;
    return size;
  }

 private:
  readers::LmdbSourceDb lmdb_;
  bool raw_ = false;
};

}  // namespace

OpSchema caffe_reader_schema() {
  OpSchema s{
      .name = "readers.caffe",
      .doc =
          "Reads a Caffe LMDB of Datum records (keys in LMDB order). Outputs the image — the "
          "encoded file bytes (uint8, 1-D) for encoded records, or the pixels as HWC uint8 "
          "for raw CHW records — and the label (int32, shape (1,)). Source info is "
          "'path[key]'. Needs stoker built with liblmdb.",
      .outputs = {"images", "labels"},
      .args = {{"path", ArgType::kString, "The LMDB environment (folder with data.mdb)."}},
      .make_cpu = [](const OpSpec& sp) { return make_reader<CaffeSource>(sp); },
      .deprecated_names = {"caffe_reader"},
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
