#include "stoker/ops/tensor/get_property.hpp"

#include <cstring>
#include <string>
#include <vector>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// Reads only the input's metadata: the gpu backend takes a device input without touching its
// data and copies the bytes to the device.
class GetProperty : public Operator {
 public:
  explicit GetProperty(const OpSpec& spec) : Operator(spec), key_(spec.arg<std::string>("key")) {
    STOKER_ENFORCE(key_ == "source_info" || key_ == "layout", ValueError,
                   "get_property: unsupported key '", key_,
                   "' (supported: 'source_info', 'layout')");
  }
  void run(Workspace& ws) override {
    const auto values = properties(ws.input(0));
    Batch& out = add_output(ws, DType::kU8, shapes(values), {});
    for (size_t i = 0; i < values.size(); ++i)
      if (!values[i].empty()) std::memcpy(out.data(int(i)), values[i].data(), values[i].size());
  }

 protected:
  // Each sample's bytes (the layout is the batch's, the same for every sample).
  std::vector<std::string> properties(const Batch& in) const {
    std::vector<std::string> out;
    for (int i = 0; i < in.size(); ++i)
      out.push_back(key_ == "layout" ? in.layout().str() : in.source_info(i));
    return out;
  }
  static std::vector<TensorShape> shapes(const std::vector<std::string>& values) {
    std::vector<TensorShape> out;
    for (const auto& v : values) out.push_back(TensorShape{int64_t(v.size())});
    return out;
  }

 private:
  std::string key_;
};

#ifdef STOKER_HAVE_CUDA
class GetPropertyGpu final : public GetProperty {
 public:
  using GetProperty::GetProperty;
  void run(Workspace& ws) override {
    const auto values = properties(ws.input(0));
    Batch& out = add_output(ws, DType::kU8, shapes(values), {});
    std::string all;
    for (const auto& v : values) all += v;
    if (all.empty()) return;
    // Through pinned staging, recycled only after the copies on ws.stream.
    auto staging = ws.pinned_pool->acquire(all.size());
    std::memcpy(staging->data(), all.data(), all.size());
    size_t offset = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].empty())
        copy_to_device_async(out.data(int(i)), static_cast<uint8_t*>(staging->data()) + offset,
                             values[i].size(), ws.stream);
      offset += values[i].size();
    }
    staging->record_stream(ws.stream);
  }
};
#endif

}  // namespace

OpSchema get_property_schema() {
  return {
      .name = "get_property",
      .doc =
          "A property of each sample as a 1-D uint8 byte string (as DALI): key 'source_info' "
          "(where the sample came from: a reader's file path, record or offset; empty for "
          "external sources) or 'layout' (the batch's layout, such as 'HWC'). The output has no "
          "layout. The gpu backend reads only the input's metadata.",
      .inputs = {"input"},
      .outputs = {"property"},
      .args = {{"key", ArgType::kString, "'source_info' or 'layout'.", std::nullopt}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<GetProperty>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<GetPropertyGpu>(s); },
#endif
      .example = OpExample{.args = {{"key", std::string("layout")}}},
  };
}

}  // namespace stoker::ops
