// Every operator with inputs runs on an empty batch (no samples): the output batches are empty
// too, with no crash, no allocation trouble and no error. Source operators (random.*) run with
// batch size 0. Readers and external_source set the batch size themselves and are exempt. A
// newly registered operator fails this test until it is listed here.
#include <gtest/gtest.h>

#include <set>

#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;

struct EmptyCase {
  std::map<std::string, ArgValue> args;
  DType dtype = DType::kU8;
  TensorLayout layout = "HWC";
};

const std::map<std::string, EmptyCase>& cases() {
  static const std::map<std::string, EmptyCase> c = {
      {"arithmetic", {{{"expr", std::string("add(&0,$2:i32)")}}}},
      {"brightness", {}},
      {"brightness_contrast", {}},
      {"cast", {{{"dtype", std::string("float32")}}}},
      {"cat", {}},
      {"color_space_conversion",
       {{{"image_type", std::string("RGB")}, {"output_type", std::string("YCbCr")}}}},
      {"color_twist", {}},
      {"contrast", {}},
      {"crop", {{{"crop", std::vector<double>{2, 2}}}}},
      {"crop_mirror_normalize", {{{"crop", std::vector<double>{2, 2}}}}},
      {"decoders.image", {{}, DType::kU8, ""}},
      {"decoders.image_crop", {{{"crop", std::vector<double>{2, 2}}}, DType::kU8, ""}},
      {"decoders.image_random_crop", {{}, DType::kU8, ""}},
      {"decoders.image_slice", {{}, DType::kU8, ""}},
      {"erase", {{{"anchor", std::vector<double>{0, 0}}, {"shape", std::vector<double>{1, 1}}}}},
      {"flip", {}},
      {"gaussian_blur", {{{"sigma", std::vector<double>{1.0}}}}},
      {"hsv", {}},
      {"hue", {}},
      {"jitter", {}},
      {"normalize", {{}, DType::kF32, ""}},
      {"pad", {}},
      {"paste", {{{"ratio", 2.0}}}},
      {"peek_image_shape", {{}, DType::kU8, ""}},
      {"random_resized_crop", {{{"size", std::vector<int64_t>{4, 4}}}}},
      {"reshape", {{{"shape", std::vector<int64_t>{-1}}}}},
      {"resize", {{{"size", std::vector<double>{4, 4}}}}},
      {"rotate", {{{"angle", 30.0}}}},
      {"saturation", {}},
      {"stack", {}},
      {"transpose", {{{"perm", std::vector<int64_t>{2, 0, 1}}}}},
      {"warp_affine", {{{"matrix", std::vector<double>{1, 0, 0, 0, 1, 0}}}}},
      // Sources: no inputs, batch size 0.
      {"random.choice", {{{"a", std::vector<double>{1, 2, 3}}}}},
      {"random.coin_flip", {}},
      {"random.normal", {}},
      {"random.uniform", {}},
  };
  return c;
}

// They choose their own batch size (files, external data): an empty batch never reaches them.
// copy_to_device has no CPU backend (the GPU tests cover its empty batches).
const std::set<std::string> kExempt = {"copy_to_device", "external_source",  "readers.caffe",
                                       "readers.caffe2", "readers.file",     "readers.mxnet",
                                       "readers.numpy",  "readers.tfrecord", "readers.webdataset"};

TEST(EmptyBatch, EveryOperatorIsCovered) {
  for (const auto& s : op_schemas())
    EXPECT_TRUE(cases().count(s.name) || kExempt.count(s.name))
        << s.name << ": add it to the empty-batch cases (or exempt it, saying why)";
}

TEST(EmptyBatch, EveryOperatorGivesEmptyOutputs) {
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    const OpSchema* schema = find_op_schema(name);
    ASSERT_NE(schema, nullptr);
    OpRunner r(name, c.args);
    std::vector<Batch> inputs;
    for (size_t k = 0; k < schema->inputs.size(); ++k)
      inputs.push_back(Batch::allocate(default_host_pool(), c.dtype, {}, c.layout));
    std::vector<Batch> out;
    ASSERT_NO_THROW(out = r.run(std::move(inputs), 0));
    ASSERT_FALSE(out.empty());
    for (const auto& b : out) EXPECT_EQ(b.size(), 0);
  }
}

// A sample with no pixels (0 rows; encoded data of 0 bytes) gives an empty result or a stoker
// error, never a crash (the sanitizer build checks the memory accesses).
TEST(EmptyBatch, ZeroSizedSamplesGiveResultsOrErrors) {
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    const OpSchema* schema = find_op_schema(name);
    if (schema->inputs.empty()) continue;
    OpRunner r(name, c.args);
    const std::vector<TensorShape> shapes =
        c.layout == "HWC" ? std::vector<TensorShape>{{0, 5, 3}, {5, 0, 3}, {0, 0, 3}}
                          : std::vector<TensorShape>{{0}};
    for (const auto& shape : shapes) {
      std::vector<Batch> inputs;
      for (size_t k = 0; k < schema->inputs.size(); ++k)
        inputs.push_back(Batch::allocate(default_host_pool(), c.dtype, {shape}, c.layout));
      try {
        auto out = r.run(std::move(inputs), 1);
        for (const auto& b : out) EXPECT_EQ(b.size(), 1);
      } catch (const Error& e) {
        EXPECT_FALSE(std::string(e.what()).empty());
      }
    }
  }
}

}  // namespace
}  // namespace stoker::ops
