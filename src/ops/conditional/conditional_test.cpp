#include "stoker/ops/conditional/conditional.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "stoker/ops/op_test_util.hpp"

namespace stoker::ops {
namespace {

using testing::OpRunner;
using testing::scalar_batch;

template <typename T>
std::vector<T> values(const Batch& b) {
  std::vector<T> out;
  for (int i = 0; i < b.size(); ++i) out.push_back(b.data_as<T>(i)[0]);
  return out;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Conditional, SplitThenMergeRestoresOrderWithoutCopying) {
  Batch data = scalar_batch<int32_t>({10, 11, 12, 13, 14});
  for (int i = 0; i < data.size(); ++i) data.set_source_info(i, "s" + std::to_string(i));
  // Any numeric predicate: nonzero is true (float 0.5 and -1 too).
  Batch pred = scalar_batch<float>({1.f, 0.f, 0.5f, 0.f, -1.f});
  OpRunner split("_conditional.split", {});
  auto parts = split.run({data, pred});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(values<int32_t>(parts[0]), (std::vector<int32_t>{10, 12, 14}));
  EXPECT_EQ(values<int32_t>(parts[1]), (std::vector<int32_t>{11, 13}));
  EXPECT_EQ(parts[0].data(1), data.data(2));  // a view, not a copy
  EXPECT_EQ(parts[1].source_info(1), "s3");

  OpRunner merge("_conditional.merge", {});
  auto merged = merge.run({parts[0], parts[1], pred});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(values<int32_t>(merged[0]), (std::vector<int32_t>{10, 11, 12, 13, 14}));
  for (int i = 0; i < data.size(); ++i) {
    EXPECT_EQ(merged[0].data(i), data.data(i));
    EXPECT_EQ(merged[0].source_info(i), "s" + std::to_string(i));
  }
}

TEST(Conditional, BoolPredicatesAreReadAsBytes) {
  Batch pred = scalar_batch<uint8_t>({0, 190, 1});
  Batch as_bool = Batch::with_samples(3, DType::kBool);
  for (int i = 0; i < 3; ++i) as_bool.set_sample(i, pred.owner(i), pred.data(i), TensorShape{});
  auto parts = OpRunner("_conditional.split", {}).run({scalar_batch<int32_t>({1, 2, 3}), as_bool});
  EXPECT_EQ(values<int32_t>(parts[0]), (std::vector<int32_t>{2, 3}));
}

TEST(Conditional, AllSamplesOnOneSide) {
  Batch data = scalar_batch<uint8_t>({1, 2, 3});
  Batch pred = scalar_batch<bool>({false, false, false});
  auto parts = OpRunner("_conditional.split", {}).run({data, pred});
  EXPECT_EQ(parts[0].size(), 0);
  EXPECT_EQ(parts[1].size(), 3);
  // The empty `if` side may come from an operator that knew no layout: merged all the same.
  Batch empty = Batch::with_samples(0, DType::kU8);
  auto merged = OpRunner("_conditional.merge", {}).run({empty, parts[1], pred});
  EXPECT_EQ(values<uint8_t>(merged[0]), (std::vector<uint8_t>{1, 2, 3}));
}

TEST(Conditional, PredicateMustBeOneScalarPerSample) {
  Batch data = scalar_batch<int32_t>({1, 2});
  Batch pred = Batch::allocate(default_host_pool(), DType::kBool, {TensorShape{}, TensorShape{2}});
  std::memset(pred.data(0), 0, pred.total_bytes());  // contiguous: all samples
  pred.set_source_info(1, "b.jpg");
  expect_error(
      [&] {
        OpRunner("_conditional.split", {}).run({data, pred});
      },
      "the condition of an `if` statement must be a scalar (0-d tensor) per sample; "
      "sample 1 (source 'b.jpg') has shape (2,)");
  expect_error(
      [&] {
        OpRunner("_conditional.split", {}).run({data, scalar_batch<bool>({true})});
      },
      "the input has 2 samples but the predicate 1");
}

TEST(Conditional, MergeRefusesDivergentBranches) {
  Batch pred = scalar_batch<bool>({true, false});
  expect_error(
      [&] {
        OpRunner("_conditional.merge", {})
            .run({scalar_batch<int32_t>({1}), scalar_batch<float>({2.f}), pred});
      },
      "type int32 in the `if` branch, float32 in the `else` branch");
  Batch a = scalar_batch<int32_t>({1}), b = scalar_batch<int32_t>({2});
  a.set_layout("A");
  expect_error(
      [&] {
        OpRunner("_conditional.merge", {}).run({a, b, pred});
      },
      "layout 'A' in the `if` branch, '' in the `else` branch");
  Batch vec = Batch::allocate(default_host_pool(), DType::kI32, {TensorShape{3}});
  expect_error(
      [&] {
        OpRunner("_conditional.merge", {}).run({scalar_batch<int32_t>({1}), vec, pred});
      },
      "0 dimensions in the `if` branch, 1 in the `else` branch");
  expect_error(
      [&] {
        OpRunner("_conditional.merge", {})
            .run({scalar_batch<int32_t>({1, 2}), scalar_batch<int32_t>({3}), pred});
      },
      "the branches give 2 + 1 samples for a predicate of 2");
}

TEST(Conditional, NotAndValidateLogical) {
  auto out = OpRunner("_conditional.not_", {}).run({scalar_batch<int32_t>({0, 3, -1})});
  EXPECT_EQ(out[0].dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(out[0]), (std::vector<bool>{true, false, false}));
  auto same = OpRunner("_conditional.validate_logical", {{"expression_name", std::string("or")},
                                                         {"expression_side", std::string("right")}})
                  .run({scalar_batch<bool>({true, false})});
  EXPECT_EQ(values<bool>(same[0]), (std::vector<bool>{true, false}));
  expect_error(
      [&] {
        OpRunner("_conditional.validate_logical", {{"expression_name", std::string("or")},
                                                   {"expression_side", std::string("right")}})
            .run({scalar_batch<int32_t>({1})});
      },
      "the right side of `or` must be of type bool; got int32");
}

TEST(Constant, RepeatsItsValuesForEverySample) {
  auto out = OpRunner("constant", {{"idata", std::vector<int64_t>{7}},
                                   {"shape", std::vector<int64_t>{}},
                                   {"dtype", std::string("int32")}})
                 .run({}, 3);
  ASSERT_EQ(out[0].size(), 3);
  EXPECT_EQ(values<int32_t>(out[0]), (std::vector<int32_t>{7, 7, 7}));
  EXPECT_EQ(out[0].shape(0).ndim(), 0);
  auto f = OpRunner("constant", {{"fdata", std::vector<double>{1.5, 2.5, 3.5, 4.5}},
                                 {"shape", std::vector<int64_t>{2, 2}},
                                 {"layout", std::string("HW")}})
               .run({}, 1);
  EXPECT_EQ(f[0].dtype(), DType::kF32);
  EXPECT_EQ(f[0].layout().str(), "HW");
  EXPECT_EQ(f[0].data_as<float>(0)[3], 4.5f);
  // int64 values stay exact.
  auto big = OpRunner("constant", {{"idata", std::vector<int64_t>{(int64_t(1) << 60) + 1}},
                                   {"dtype", std::string("int64")}})
                 .run({}, 1);
  EXPECT_EQ(big[0].data_as<int64_t>(0)[0], (int64_t(1) << 60) + 1);
  expect_error(
      [&] {
        OpRunner("constant",
                 {{"idata", std::vector<int64_t>{1, 2, 3}}, {"shape", std::vector<int64_t>{2}}});
      },
      "constant: 3 values for shape (2,)");
  expect_error([&] { OpRunner("constant", {}); }, "give `fdata` or `idata`");
}

}  // namespace
}  // namespace stoker::ops
