#include <gtest/gtest.h>

#include "stoker/core/batch.hpp"

namespace stoker {
namespace {

TEST(Batch, RaggedContiguousAllocation) {
  MemoryPool pool(make_host_allocator());
  auto b = Batch::allocate(pool, DType::kU8, {{2, 3, 3}, {4, 1, 3}, {1, 1, 3}}, "HWC");
  EXPECT_EQ(b.size(), 3);
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_FALSE(b.is_uniform());
  EXPECT_EQ(b.total_bytes(), 18u + 12u + 3u);
  EXPECT_EQ(static_cast<uint8_t*>(b.data(1)), static_cast<uint8_t*>(b.data(0)) + 18);
  EXPECT_EQ(b.sample(2).shape, (TensorShape{1, 1, 3}));
  EXPECT_EQ(b.layout().str(), "HWC");
}

TEST(Batch, ViewListsEverySample) {
  MemoryPool pool(make_host_allocator());
  auto b = Batch::allocate(pool, DType::kI16, {{2, 3}, {5}}, "XY");
  auto v = b.view();
  ASSERT_EQ(v.size(), 2);
  EXPECT_EQ(v.dtype, DType::kI16);
  EXPECT_EQ(v.layout.str(), "XY");
  EXPECT_EQ(v[1].shape, TensorShape{5});
  EXPECT_EQ(v[1].data, b.data(1));
  EXPECT_EQ(v[0].num_bytes(), 12u);
}

TEST(Batch, SelectAndAppendShareMemory) {
  MemoryPool pool(make_host_allocator());
  auto a = Batch::allocate(pool, DType::kU8, {{1}, {2}, {3}});
  auto b = Batch::allocate(pool, DType::kU8, {{4}});
  a.set_source_info(2, "c");
  auto s = a.select({2, 0});
  ASSERT_EQ(s.size(), 2);
  EXPECT_EQ(s.data(0), a.data(2));
  EXPECT_EQ(s.source_info(0), "c");
  s.append(b);
  EXPECT_EQ(s.size(), 3);
  EXPECT_EQ(s.shape(2), TensorShape{4});
  EXPECT_FALSE(s.is_contiguous());
  auto f = Batch::allocate(pool, DType::kF32, {{1}});
  EXPECT_THROW(s.append(f), TypeError);
}

TEST(Batch, AdoptedSamplesAreNotContiguous) {
  MemoryPool pool(make_host_allocator());
  auto b = Batch::with_samples(2, DType::kF32);
  auto t0 = Tensor::allocate(pool, DType::kF32, {4});
  auto t1 = Tensor::allocate(pool, DType::kF32, {4});
  b.set_sample(0, t0.owner(), t0.view().data, {4});
  b.set_sample(1, t1.owner(), t1.view().data, {4});
  EXPECT_TRUE(b.is_uniform());
  EXPECT_FALSE(b.is_contiguous());
}

TEST(Batch, TypedAccessChecksDType) {
  MemoryPool pool(make_host_allocator());
  auto b = Batch::allocate(pool, DType::kF32, {{2}});
  EXPECT_NE(b.data_as<float>(0), nullptr);
  try {
    b.data_as<uint8_t>(0);
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "tensor of dtype float32 accessed as uint8");
  }
}

TEST(TensorShape, Formatting) {
  EXPECT_EQ((TensorShape{375, 500, 3}).to_string(), "(375, 500, 3)");
  EXPECT_EQ((TensorShape{7}).to_string(), "(7,)");
  EXPECT_EQ(TensorShape{}.volume(), 1);
}

TEST(TensorShape, VolumePastInt64IsRefusedNotWrapped) {
  // 4 * 5 * 5581 * (49477 * 8681) * 384773 = 2^64 + 4: wrapped, it would pass for 4 elements.
  const TensorShape wraps{111620, 429509837, 384773};
  try {
    (void)wraps.volume();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "a sample of shape (111620, 429509837, 384773) would have more elements than "
                 "2^63 - 1");
  }
  EXPECT_EQ((TensorShape{int64_t(1) << 40, int64_t(1) << 40, 0}).volume(), 0);  // empty after all
  EXPECT_EQ((TensorShape{int64_t(1) << 31, int64_t(1) << 31}).volume(), int64_t(1) << 62);
  // 27905 * 429509837 * 384773 = 2^62 + 1 elements fit an int64; their bytes at 8 do not
  // (wrapped: 8 bytes).
  const TensorShape big{27905, 429509837, 384773};
  EXPECT_EQ(big.bytes(1), (int64_t(1) << 62) + 1);
  try {
    (void)big.bytes(8);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "a sample of shape (27905, 429509837, 384773) of 8-byte elements would have "
                 "more bytes than 2^63 - 1");
  }
}

}  // namespace
}  // namespace stoker
