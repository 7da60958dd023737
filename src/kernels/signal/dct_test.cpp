// The DCT kernel against the textbook sums (Wikipedia's definitions, as DALI documents), in
// double, the orthonormal scaling against the matrix's orthogonality, and the lifter weights.
#include "stoker/kernels/signal/dct.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace stoker::kernels {
namespace {

double textbook(const std::vector<double>& x, int64_t k, int type) {
  const auto n = int64_t(x.size());
  double acc = 0;
  switch (type) {
    case 1:
      acc = 0.5 * (x[0] + (k % 2 ? -1 : 1) * x[size_t(n - 1)]);
      for (int64_t j = 1; j < n - 1; ++j) acc += x[size_t(j)] * std::cos(M_PI * j * k / (n - 1));
      return acc;
    case 2:
      for (int64_t j = 0; j < n; ++j) acc += x[size_t(j)] * std::cos(M_PI / n * (j + 0.5) * k);
      return acc;
    case 3:
      acc = 0.5 * x[0];
      for (int64_t j = 1; j < n; ++j) acc += x[size_t(j)] * std::cos(M_PI / n * j * (k + 0.5));
      return acc;
    default:
      for (int64_t j = 0; j < n; ++j) {
        acc += x[size_t(j)] * std::cos(M_PI / n * (j + 0.5) * (k + 0.5));
      }
      return acc;
  }
}

TEST(Dct, EqualsTheTextbookSums) {
  const int64_t outer = 2, n = 13, inner = 3, ndct = 9;
  std::mt19937 rng(5);
  std::normal_distribution<float> d;
  std::vector<float> in(size_t(outer * n * inner));
  for (auto& v : in) v = d(rng);
  for (int type : {1, 2, 3, 4}) {
    std::vector<float> table(size_t(ndct * n)), out(size_t(outer * ndct * inner));
    dct_table(table.data(), n, ndct, type, false);
    dct_cpu(in.data(), outer, n, inner, table.data(), ndct, nullptr, out.data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        std::vector<double> line;
        for (int64_t t = 0; t < n; ++t) line.push_back(in[size_t((o * n + t) * inner + j)]);
        for (int64_t k = 0; k < ndct; ++k) {
          EXPECT_NEAR(out[size_t((o * ndct + k) * inner + j)], textbook(line, k, type), 2e-5)
              << "type " << type << " k " << k;
        }
      }
    }
  }
}

TEST(Dct, NormalisedTablesAreOrthonormal) {
  const int64_t n = 16;
  for (int type : {2, 3, 4}) {
    std::vector<float> table(size_t(n * n));
    dct_table(table.data(), n, n, type, true);
    for (int64_t a = 0; a < n; ++a) {
      for (int64_t b = 0; b < n; ++b) {
        double dot = 0;
        for (int64_t j = 0; j < n; ++j)
          dot += double(table[size_t(a * n + j)]) * table[size_t(b * n + j)];
        EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-6) << "type " << type;
      }
    }
  }
}

TEST(Dct, LiftersAsLibrosa) {
  std::vector<float> c(4);
  lifter_coefficients(c.data(), 4, 22.f);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(c[size_t(i)], 1 + 11 * std::sin(M_PI * (i + 1) / 22), 1e-5);
  const float in[2] = {2.f, -3.f};
  const float table[4] = {1.f, 0.f, 0.f, 1.f};
  float out[2];
  dct_cpu(in, 1, 2, 1, table, 2, c.data(), out);
  EXPECT_FLOAT_EQ(out[0], 2.f * c[0]);
  EXPECT_FLOAT_EQ(out[1], -3.f * c[1]);
}

}  // namespace
}  // namespace stoker::kernels
