// cuda_decoder="auto": which of the CPU threads' two JPEG decoders (libjpeg-turbo, nvJPEG's
// CUDA decoder) takes the JPEGs a batch leaves to the threads, from the thread time each costs
// per image. Kept apart from nvJPEG so that the choice is tested without a GPU
// (thread_decoder_choice_test.cpp).
#pragma once

#include <cstdint>

namespace stoker::ops {

// Not thread-safe: the mixed decoder calls it under its own lock (batches are split in the CPU
// stage, costs learned when the mixed stage finishes them).
class ThreadDecoderChoice {
 public:
  // Probe batches give every kStride-th candidate to the CUDA decoder and the rest to the CPU:
  // the 2nd batch (nvJPEG allocates its buffers then: not learned from), the 3rd, those after
  // until both costs are known (up to batch kKnownBy: a probe may time no CUDA image, those
  // that enlarged nvJPEG's buffers being left out), and every kEvery-th after, so a losing
  // decoder costs little and a change in the data is noticed.
  static constexpr int kStride = 4, kKnownBy = 32, kEvery = 64;

  struct Batch {
    bool probe = false;   // both decoders take part (see to_cuda)
    bool warmup = false;  // the CUDA decoder's first batch: learn() nothing from it
  };
  // The next batch to split (called once per batch, in order).
  Batch next();
  // Whether the k-th of a batch's candidates (counted from 0) goes to the CUDA decoder.
  bool to_cuda(const Batch& b, int k) const {
    return b.probe ? k % kStride == 0 : cuda_cost_ > 0 && cuda_cost_ < cpu_cost_;
  }
  // A finished batch's thread time per decoder and the images it was measured on (0: none).
  void learn(double cpu_seconds, int cpu_images, double cuda_seconds, int cuda_images);

  double cpu_cost() const { return cpu_cost_; }  // seconds per image, 0: not measured
  double cuda_cost() const { return cuda_cost_; }

 private:
  int64_t batches_ = 0;
  double cpu_cost_ = 0, cuda_cost_ = 0;
};

}  // namespace stoker::ops
