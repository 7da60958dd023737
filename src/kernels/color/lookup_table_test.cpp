#include "stoker/kernels/color/lookup_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

// The slow definition: a map from key to its last value, the default for everything else.
template <typename Out>
Out reference(int64_t key, const std::vector<int64_t>& keys, const std::vector<float>& values,
              float def) {
  std::map<int64_t, float> m;
  for (size_t k = 0; k < keys.size(); ++k) m[keys[k]] = values[k];
  auto it = m.find(key);
  return convert_sat<Out>(it == m.end() ? def : it->second);
}

template <typename In, typename Out>
void check(const std::vector<In>& in, const std::vector<int64_t>& keys,
           const std::vector<float>& values, float def) {
  const LutTable t = make_lut(keys, values, def, dtype_of<Out>);
  ASSERT_EQ(t.entry_bytes, int(sizeof(Out)));
  using E = std::conditional_t<
      sizeof(Out) == 1, uint8_t,
      std::conditional_t<sizeof(Out) == 2, uint16_t,
                         std::conditional_t<sizeof(Out) == 4, uint32_t, uint64_t>>>;
  std::vector<E> out(in.size());
  lookup_table_cpu(in.data(), out.data(), int64_t(in.size()),
                   reinterpret_cast<const E*>(t.bytes.data()), t.size);
  for (size_t k = 0; k < in.size(); k += 1 + k / 64) {  // the map is slow: a spread of elements
    const Out want = reference<Out>(int64_t(in[k]), keys, values, def);
    EXPECT_EQ(std::memcmp(&out[k], &want, sizeof(Out)), 0) << "element " << k;
  }
}

TEST(LookupTableCpu, DalisExampleAndRepeatedKeys) {
  // DALI's documented example: the last of a repeated key wins; 1 and 100 are no keys.
  const std::vector<int64_t> keys{0, 2, 3, 4, 5, 3};
  const std::vector<float> values{0.2f, 0.4f, 0.5f, 0.6f, 0.7f, 0.10f};
  const LutTable t = make_lut(keys, values, 0.99f, DType::kF32);
  const std::vector<uint8_t> in{1, 4, 1, 0, 100, 2, 3, 4};
  std::vector<float> out(in.size());
  lookup_table_cpu(in.data(), reinterpret_cast<uint32_t*>(out.data()), int64_t(in.size()),
                   reinterpret_cast<const uint32_t*>(t.bytes.data()), t.size);
  EXPECT_EQ(out, (std::vector<float>{0.99f, 0.6f, 0.99f, 0.2f, 0.99f, 0.4f, 0.10f, 0.6f}));
}

TEST(LookupTableCpu, EveryInputTypeAgainstTheDefinition) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> any(-70000, 70000), key(0, 65535);
  std::vector<int64_t> keys;
  std::vector<float> values;
  for (int k = 0; k < 300; ++k) keys.push_back(k < 200 ? k % 260 : key(rng));
  keys.push_back(65535), keys.push_back(0);
  for (size_t k = 0; k < keys.size(); ++k) values.push_back(float(int(k) - 150) * 1.75f);
  std::vector<int64_t> raw;
  for (int k = 0; k < 2000; ++k) raw.push_back(k % 3 ? any(rng) : k % 270);
  raw.push_back(65535), raw.push_back(65536), raw.push_back(-1);
  auto as = [&](auto zero) {
    std::vector<decltype(zero)> v;
    for (int64_t x : raw) v.push_back(decltype(zero)(x));  // wraps, as data of that type
    return v;
  };
  check<uint8_t, float>(as(uint8_t{}), keys, values, -3.f);
  check<uint16_t, int16_t>(as(uint16_t{}), keys, values, 7.5f);
  check<uint32_t, uint8_t>(as(uint32_t{}), keys, values, 300.f);
  check<uint64_t, double>(as(uint64_t{}), keys, values, 0.25f);
  check<int8_t, int32_t>(as(int8_t{}), keys, values, -2.5f);
  check<int16_t, int64_t>(as(int16_t{}), keys, values, 1e12f);
  check<int32_t, float16>(as(int32_t{}), keys, values, 0.1f);
  check<int64_t, bool>(as(int64_t{}), keys, values, 0.f);
  check<int64_t, uint64_t>(as(int64_t{}), keys, values, -1.f);
}

TEST(LookupTableCpu, NoKeysGivesTheDefaultEverywhere) {
  const LutTable t = make_lut({}, {}, 2.6f, DType::kU8);
  EXPECT_EQ(t.size, 0);
  const std::vector<int32_t> in{0, 5, -3};
  std::vector<uint8_t> out(3);
  lookup_table_cpu(in.data(), out.data(), 3, t.bytes.data(), t.size);
  EXPECT_EQ(out, (std::vector<uint8_t>{3, 3, 3}));  // 2.6 rounded
}

}  // namespace
}  // namespace stoker::kernels
