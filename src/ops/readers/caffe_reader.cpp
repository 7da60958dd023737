#include "stoker/ops/readers/caffe_reader.hpp"

#include <cstring>

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/caffe_datum.hpp"
#include "stoker/readers/lmdb_env.hpp"

namespace stoker::ops {
namespace {

class CaffeReader final : public ReaderOperator {
 public:
  explicit CaffeReader(const OpSpec& spec) : ReaderOperator(spec) { init(); }

  void run(Workspace& ws) override {
    auto picks = next_indices(ws);
    const int n = ws.batch_size;
    ws.outputs.push_back(Batch::with_samples(n, DType::kU8, raw_ ? "HWC" : ""));
    Batch& labels =
        add_output(ws, DType::kI32, std::vector<TensorShape>(size_t(n), TensorShape{1}), {});
    Batch& images = ws.outputs[0];
    const std::string path = spec_.arg<std::string>("path");
    for (int i = 0; i < n; ++i) {
      auto info = path + "[" + db_->key(size_t(picks[size_t(i)])) + "]";
      images.set_source_info(i, info);
      labels.set_source_info(i, info);
    }
    for_each_sample(
        ws, n,
        [&](int i, int) {
          auto d = readers::parse_datum(db_->value(size_t(picks[size_t(i)])));
          STOKER_ENFORCE(d.encoded != raw_, ValueError,
                         "the database mixes encoded and raw "
                         "Datum records (a batch holds one kind)");
          labels.data_as<int32_t>(i)[0] = int32_t(d.label);
          if (d.encoded) {
            // A view into LMDB's memory map, kept alive by nothing: copy into the pool so the
            // batch may outlive the reader.
            auto buf = ws.host_pool->acquire(d.data.size());
            if (!d.data.empty()) std::memcpy(buf->data(), d.data.data(), d.data.size());
            void* p = buf->data();
            images.set_sample(i, std::move(buf), p, TensorShape{int64_t(d.data.size())});
            return;
          }
          const int64_t C = d.channels, H = d.height, W = d.width;
          auto buf = ws.host_pool->acquire(size_t(C * H * W));
          auto* out = static_cast<uint8_t*>(buf->data());
          for (int64_t c = 0; c < C; ++c)  // Caffe stores CHW; images are HWC
            for (int64_t y = 0; y < H; ++y)
              for (int64_t x = 0; x < W; ++x)
                out[(y * W + x) * C + c] = d.data[size_t((c * H + y) * W + x)];
          images.set_sample(i, std::move(buf), out, TensorShape{H, W, C});
        },
        &images);
  }

 private:
  int64_t build_index() override {
    db_ = std::make_unique<readers::LmdbDatabase>(spec_.arg<std::string>("path"));
    STOKER_ENFORCE(db_->size() > 0, ValueError, "LMDB '", spec_.arg<std::string>("path"),
                   "' is empty");
    raw_ = !readers::parse_datum(db_->value(0)).encoded;
    return int64_t(db_->size());
  }

  std::unique_ptr<readers::LmdbDatabase> db_;
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
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<CaffeReader>(sp); },
  };
  for (auto& a : loader_arg_schemas()) s.args.push_back(a);
  return s;
}

}  // namespace stoker::ops
