// hw_decoder_load="auto": the share of each batch offered to the GPU's JPEG engines, from what
// the mixed decoder measures batch by batch. Kept apart from nvJPEG so that how it converges
// is tested without a GPU (hw_share_test.cpp).
#pragma once

namespace stoker::ops {

class HwShare {
 public:
  // Engines' share while the stage idles: as much as keeps it busy for this fraction of the
  // pace (the margin lets the share fall back to the balance where the stage is the slower).
  static constexpr double kPaceMargin = 0.75;
  static constexpr double kMinShare = 0.05;

  // A batch starts at `now` (seconds on a steady clock): the time since the previous start
  // is the stage's pace (its consumer's, when that is slower).
  void started(double now);
  // A batch of n samples finished: hw_n of them took t_hw seconds on the engines, threads_n
  // took t_threads on the CPU threads (0 when a side had none), and the stage was busy `busy`
  // seconds with it in all.
  void finished(int n, int hw_n, double t_hw, int threads_n, double t_threads, double busy);
  // The share for the next batches, in [kMinShare, 1]: the split that makes the engines and
  // the threads finish together — or, when the stage idles between batches, what the engines
  // decode within kPaceMargin of the pace besides the stage's other work, up to all. 0.8
  // until both sides have been measured (both get work, so both get measured).
  double share() const { return share_; }
  double pace() const { return pace_; }

 private:
  static double smooth(double old, double x) { return old > 0 ? 0.7 * old + 0.3 * x : x; }
  double share_ = 0.8;
  double hw_rate_ = 0, threads_rate_ = 0;  // images per second
  double pace_ = 0, other_ = 0;            // seconds per batch
  double last_start_ = -1;
};

}  // namespace stoker::ops
