#include "stoker/ops/decoders/hw_share.hpp"

#include <algorithm>

namespace stoker::ops {
namespace {

double median(std::vector<double> v) {
  const auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// A tag names the cycle, the phase in it (0: A, 1: B, 2: A) and the batch in the phase.
constexpr int64_t kCycle = 3 * HwShare::kPhase;
int64_t cycle_of(int64_t tag) { return tag / kCycle; }
int phase_of(int64_t tag) { return int(tag % kCycle) / HwShare::kPhase; }
int position_of(int64_t tag) { return int(tag % HwShare::kPhase); }

}  // namespace

double HwShare::share() const { return measured_ ? scaled(model_, scale_) : model_; }

HwShare::Offer HwShare::next() {
  const int64_t k = offers_++;
  // Nothing to probe before the model has both sides' rates, or while it gives the engines
  // everything (a slower consumer sets the pace).
  if (!measured_ || model_ >= 1.0) {
    // A cycle cut short is not compared: its measured batches keep a number of their own.
    if (k - cycle_start_ >= int64_t(wait_) * kPhase) ++cycles_;
    cycle_start_ = offers_;
    return {share(), -1};
  }
  const int64_t into = k - cycle_start_ - int64_t(wait_) * kPhase;
  if (into < 0) return {share(), -1};
  const int phase = int(into / kPhase);
  if (into == kPhase) {  // the probe phase starts: the turn_-th of the other scales
    int other = 0;
    for (double candidate : kScales)
      if (candidate != scale_ && other++ == turn_ % 2) probe_scale_ = candidate;
    ++probes_;
  }
  const int64_t tag = cycles_ * kCycle + into;
  if (into + 1 == kCycle) cycle_start_ = offers_, ++cycles_;
  return {phase == 1 ? scaled(model_, probe_scale_) : share(), tag};
}

void HwShare::started(double now) {
  if (last_start_ >= 0 && now > last_start_) {
    const double interval = now - last_start_;
    pace_ = smooth(pace_, interval);
    // The interval since the last start was the last batch's (this stage's, or the stages'
    // ahead of it, which were then on the next batches of the same phase).
    if (last_tag_ >= 0) {
      if (cycle_of(last_tag_) != kept_cycle_) {
        for (auto& k : kept_) k.clear();
        kept_cycle_ = cycle_of(last_tag_);
      }
      const int pos = position_of(last_tag_);
      if (pos >= kFirstKept && pos < kLastKept) kept_[phase_of(last_tag_)].push_back(interval);
      if (std::all_of(std::begin(kept_), std::end(kept_),
                      [](const auto& k) { return k.size() == size_t(kLastKept - kFirstKept); }))
        compare();
    }
  }
  last_start_ = now;
  last_tag_ = -1;  // a batch that does not finish (e.g. the engines refused it) is not counted
}

void HwShare::compare() {
  const double a = 0.5 * (median(kept_[0]) + median(kept_[2])), b = median(kept_[1]);
  for (auto& k : kept_) k.clear();
  kept_cycle_ = -1;
  if (b < a * (1 - kGain)) {  // faster: move there, and probe again soon
    scale_ = probe_scale_;
    turn_ = 0;
    wait_ = 1;
  } else if (++turn_ % 2 == 0) {  // neither other scale was faster: probe less often
    wait_ = std::min(2 * wait_, kMaxWait);
  }
}

// Why the pace matters: the balanced split maximises the loader's own rate, but a training
// loop paced by its GPU asks for batches more slowly, and the threads' decoding then slows the
// training process's own thread, while the engines cost the host one submitting thread
// (ResNet-18 fed at 16 threads: 59% of synthetic with the balanced split, 81% with this;
// docs/findings.md). Where this stage is the slower one, `busy` is about the pace,
// the engines' time is at most kPaceMargin of it, and the share falls back to the balance.
void HwShare::finished(int n, int hw_n, double t_hw, int threads_n, double t_threads, double busy,
                       int64_t tag) {
  last_tag_ = tag;
  if (hw_n > 0 && t_hw > 0) hw_rate_ = smooth(hw_rate_, hw_n / t_hw);
  if (threads_n > 0 && t_threads > 0) threads_rate_ = smooth(threads_rate_, threads_n / t_threads);
  other_ = smooth(other_, std::max(1e-9, busy - t_hw));
  if (hw_rate_ <= 0 || threads_rate_ <= 0 || n <= 0) return;
  double share = std::clamp(hw_rate_ / (hw_rate_ + threads_rate_), kMinShare, 1.0);
  if (pace_ > 0) {
    const double engines_time = kPaceMargin * pace_ - other_;  // seconds per batch
    share = std::max(share, std::min(1.0, engines_time * hw_rate_ / n));
  }
  model_ = share;
  measured_ = true;
}

}  // namespace stoker::ops
