// optical_flow's arguments are checked where the operator is made, on any machine with a CUDA
// build (the engine itself runs in python/tests/test_optical_flow.py on a GPU).
#include "stoker/ops/flow/optical_flow.hpp"

#include <gtest/gtest.h>

#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

void expect_refused(std::map<std::string, ArgValue> args, int inputs, const std::string& what) {
  OpSpec spec = testing::OpRunner::spec("optical_flow", args);
  spec.backend = Backend::kGpu;
  spec.inputs.resize(size_t(inputs));
  if (!spec.schema->make_gpu) GTEST_SKIP() << "stoker was built without CUDA";
  try {
    spec.schema->make_gpu(spec);
    FAIL() << "expected: " << what;
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(OpticalFlow, ArgumentsAreCheckedWhereTheOperatorIsMade) {
  expect_refused({{"preset", 1.5}}, 1, "preset must be in [0, 1]");
  expect_refused({{"output_grid", int64_t{3}}}, 1, "output_grid must be 1, 2 or 4, got 3");
  expect_refused({{"hint_grid", int64_t{16}}}, 1, "hint_grid must be 1, 2, 4 or 8, got 16");
  expect_refused({{"enable_external_hints", true}}, 1,
                 "enable_external_hints needs the hints as a second input");
  expect_refused({}, 2, "a second input (hints) needs enable_external_hints=True");
  expect_refused({{"enable_external_hints", true}, {"hint_grid", int64_t{2}}}, 2,
                 "hint_grid (2) must be at least output_grid (4)");
  expect_refused({{"image_type", std::string("YCbCr")}}, 1,
                 "image_type must be RGB, BGR or GRAY, got 'YCbCr'");
}

TEST(OpticalFlow, IsAGpuOperatorOnly) {
  const OpSchema* s = find_op_schema("optical_flow");
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->supports(Backend::kCpu));
  EXPECT_FALSE(s->sequences);  // it takes whole sequences itself
}

}  // namespace
}  // namespace stoker::ops
