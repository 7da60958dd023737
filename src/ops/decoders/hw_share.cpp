#include "stoker/ops/decoders/hw_share.hpp"

#include <algorithm>

namespace stoker::ops {

void HwShare::started(double now) {
  if (last_start_ >= 0 && now > last_start_) pace_ = smooth(pace_, now - last_start_);
  last_start_ = now;
}

// Why the pace matters: the balanced split maximises the loader's own rate, but a training
// loop paced by its GPU asks for batches more slowly, and the threads' decoding then slows the
// training process's own thread, while the engines cost the host one submitting thread
// (ResNet-18 fed at 16 threads: 59% of synthetic with the balanced split, 81% with this;
// docs/findings.md). Where this stage is the slower one, `busy` is about the pace,
// the engines' time is at most kPaceMargin of it, and the share falls back to the balance.
void HwShare::finished(int n, int hw_n, double t_hw, int threads_n, double t_threads, double busy) {
  if (hw_n > 0 && t_hw > 0) hw_rate_ = smooth(hw_rate_, hw_n / t_hw);
  if (threads_n > 0 && t_threads > 0) threads_rate_ = smooth(threads_rate_, threads_n / t_threads);
  other_ = smooth(other_, std::max(1e-9, busy - t_hw));
  if (hw_rate_ <= 0 || threads_rate_ <= 0 || n <= 0) return;
  double share = std::clamp(hw_rate_ / (hw_rate_ + threads_rate_), kMinShare, 1.0);
  if (pace_ > 0) {
    const double engines_time = kPaceMargin * pace_ - other_;  // seconds per batch
    share = std::max(share, std::min(1.0, engines_time * hw_rate_ / n));
  }
  share_ = share;
}

}  // namespace stoker::ops
