#include "stoker/ops/decoders/thread_decoder_choice.hpp"

namespace stoker::ops {

ThreadDecoderChoice::Batch ThreadDecoderChoice::next() {
  const int64_t b = batches_++;
  const bool known = cuda_cost_ > 0 && cpu_cost_ > 0;
  Batch out;
  out.probe = b == 1 || b == 2 || (b > 2 && ((!known && b < kKnownBy) || b % kEvery == 0));
  out.warmup = b == 1;
  return out;
}

void ThreadDecoderChoice::learn(double cpu_seconds, int cpu_images, double cuda_seconds,
                                int cuda_images) {
  auto smooth = [](double& cost, double seconds, int count) {
    if (count <= 0) return;
    const double c = seconds / count;
    cost = cost <= 0 ? c : 0.7 * cost + 0.3 * c;
  };
  smooth(cpu_cost_, cpu_seconds, cpu_images);
  smooth(cuda_cost_, cuda_seconds, cuda_images);
}

}  // namespace stoker::ops
