#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "stoker/kernels/geometry/coord_flip.hpp"

namespace stoker::kernels {
namespace {

// Every dimension count and flip combination against the definition, computed in double from
// the float32 origin (2 * centre is exact in float32, so each result is one rounding).
TEST(CoordFlip, EveryCombinationMatchesTheDefinition) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.5f, 1.5f);
  for (int ndim = 1; ndim <= 3; ++ndim)
    for (int mask = 0; mask < (1 << ndim); ++mask) {
      CoordFlip p;
      p.ndim = ndim;
      for (int d = 0; d < ndim; ++d) {
        p.flip[d] = mask >> d & 1;
        p.origin[d] = 2.f * u(rng);
      }
      std::vector<float> in(size_t(7 * ndim)), out(in.size());
      for (auto& v : in) v = u(rng);
      coord_flip_cpu(out.data(), in.data(), int64_t(in.size()), p);
      for (size_t i = 0; i < in.size(); ++i) {
        const size_t d = i % size_t(ndim);
        const double expected = p.flip[d] ? double(p.origin[d]) - double(in[i]) : in[i];
        ASSERT_EQ(out[i], float(expected)) << "ndim " << ndim << " mask " << mask << " i " << i;
      }
    }
}

}  // namespace
}  // namespace stoker::kernels
