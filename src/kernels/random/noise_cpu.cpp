#include <cstdint>

#include "stoker/kernels/random/noise.hpp"

namespace stoker::kernels {

void noise_cpu(NoiseKind kind, const NoiseSample& s, DType dtype) {
  visit_dtype<DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kU32, DType::kI32,
              DType::kU64, DType::kI64, DType::kF32>(dtype, "noise input", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t items = noise_work_items(kind, s.units);
    // One loop per kind, so that each inlines its item's work.
    if (kind == NoiseKind::kGaussian) {
      for (int64_t i = 0; i < items; ++i) noise_gaussian_item<T>(s, i);
    } else if (kind == NoiseKind::kSaltAndPepper) {
      for (int64_t i = 0; i < items; ++i) noise_salt_and_pepper_item<T>(s, i);
    } else {
      for (int64_t i = 0; i < items; ++i) noise_shot_item<T>(s, i);
    }
  });
}

}  // namespace stoker::kernels
