#include "stoker/ops/registry.hpp"

#include <gtest/gtest.h>

#include <set>

#include "stoker/ops/op_spec.hpp"

namespace stoker::ops {
namespace {

TEST(Registry, EverySchemaIsCompleteAndNamesAreUnique) {
  std::set<std::string> names;
  for (auto& s : op_schemas()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_FALSE(s.doc.empty()) << s.name;
    EXPECT_TRUE(!s.outputs.empty() || s.output_names || !s.outputs_from.empty()) << s.name;
    // Every operator runs on the CPU (the fallback of STOKER_FORCE_CPU=1), except the copy to
    // the device, which STOKER_FORCE_CPU turns into the identity, and optical_flow, which is
    // the GPU's optical-flow engine (as in DALI: a CPU flow would be another algorithm's
    // vectors); without CUDA it has no backend at all.
    const bool engine_only = s.name == "optical_flow";
    EXPECT_TRUE(bool(s.make_cpu) || s.name == "copy_to_device" || engine_only) << s.name;
#ifdef STOKER_HAVE_CUDA
    EXPECT_FALSE(s.backends().empty()) << s.name;
#else
    EXPECT_TRUE(!s.backends().empty() || engine_only) << s.name;
#endif
    std::set<std::string> args;
    for (auto& a : s.args) {
      EXPECT_TRUE(args.insert(a.name).second) << s.name << "." << a.name;
      EXPECT_FALSE(a.doc.empty()) << s.name << "." << a.name;
      if (a.default_value) {  // defaults must already be of the declared type
        EXPECT_NO_THROW(coerce_arg(s, a, *a.default_value)) << s.name << "." << a.name;
      }
    }
  }
  EXPECT_NE(find_op_schema("decoders.image"), nullptr);
  EXPECT_EQ(find_op_schema("decoders.nope"), nullptr);
}

TEST(ArgCoercion, ConvertsAndRejectsWithNames) {
  const OpSchema& s = *find_op_schema("crop_mirror_normalize");
  EXPECT_EQ(std::get<std::vector<double>>(coerce_arg(s, *s.find_arg("mean"), int64_t{3})),
            std::vector<double>{3.0});
  EXPECT_EQ(std::get<double>(coerce_arg(s, *s.find_arg("scale"), int64_t{2})), 2.0);
  EXPECT_EQ(std::get<std::string>(coerce_arg(s, *s.find_arg("dtype"), std::string("FLOAT16"))),
            "float16");
  try {
    coerce_arg(s, *s.find_arg("output_layout"), 3.5);
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(),
                 "crop_mirror_normalize: argument 'output_layout' expects str, got float 3.5");
  }
  try {
    coerce_arg(s, *s.find_arg("dtype"), std::string("float7"));
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "crop_mirror_normalize: argument 'dtype' got unknown dtype 'float7'");
  }
}

}  // namespace
}  // namespace stoker::ops
