// hw_decoder_load="auto": the share of each batch offered to the GPU's JPEG engines, from what
// the mixed decoder measures batch by batch. Kept apart from nvJPEG so that how it converges
// is tested without a GPU (hw_share_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace stoker::ops {

// Not thread-safe: the mixed decoder calls it under its own lock (offers come from the CPU
// stage, measurements from the mixed stage).
class HwShare {
 public:
  // Engines' share while the stage idles: as much as keeps it busy for this fraction of the
  // pace (the margin lets the share fall back to the balance where the stage is the slower).
  static constexpr double kPaceMargin = 0.75;
  static constexpr double kMinShare = 0.05;
  // Probes (see below): batches per phase, of which the intervals [kFirstKept, kLastKept) are
  // compared (the others overlap the neighbouring phases' batches in the stages ahead); how
  // much faster a probe must be to be kept; the longest wait between probes, in phases.
  static constexpr int kPhase = 8, kFirstKept = 2, kLastKept = 6;
  static constexpr double kGain = 0.02;
  static constexpr int kMaxWait = 32;
  // The threads' scales tried: the model's share for the threads, half of it, none of it.
  static constexpr double kScales[3] = {1.0, 0.5, 0.0};

  struct Offer {
    double share;  // of the batch, to the engines
    int64_t tag;   // give it back to finished() (which phase the batch belongs to)
  };
  // The share for a batch about to be split (called once per batch, maybe ahead of the
  // batches still in flight).
  Offer next();

  // A batch starts at `now` (seconds on a steady clock): the time since the previous start
  // is the stage's pace (its consumer's, when that is slower).
  void started(double now);
  // A batch of n samples finished: hw_n of them took t_hw seconds on the engines, threads_n
  // took t_threads on the CPU threads (0 when a side had none), and the stage was busy `busy`
  // seconds with it in all; `tag` is its offer's.
  void finished(int n, int hw_n, double t_hw, int threads_n, double t_threads, double busy,
                int64_t tag = -1);

  // The share outside probes, in [kMinShare, 1]: the model's (the split that makes the engines
  // and the threads finish together — or, when the stage idles between batches, what the
  // engines decode within kPaceMargin of the pace besides the stage's other work, up to all)
  // with the threads' part of it scaled by threads_scale(). 0.8 until both sides have been
  // measured (both get work, so both get measured).
  double share() const;
  double pace() const { return pace_; }
  // What the probes found: the fraction of the model's threads' share that the threads get.
  double threads_scale() const { return scale_; }
  int64_t probes() const { return probes_; }

 private:
  static double smooth(double old, double x) { return old > 0 ? 0.7 * old + 0.3 * x : x; }
  static double scaled(double model, double scale) { return 1 - scale * (1 - model); }
  void compare();

  double model_ = 0.8;
  bool measured_ = false;
  double hw_rate_ = 0, threads_rate_ = 0;  // images per second
  double pace_ = 0, other_ = 0;            // seconds per batch
  double last_start_ = -1;
  int64_t last_tag_ = -1;

  // Probing. The model assumes that the two sides do not slow each other; on the GPU machine
  // the threads' decoding slows the thread that feeds the engines, so that past a few threads
  // the balance was slower than the engines alone. Now and then a probe phase runs at another
  // of kScales, between two phases at the current one (A B A: a trend in the pace favours
  // neither), and the scale moves there if the measured pace is shorter. Not a step at a
  // time: the pace need not improve on the way from one scale to a better one.
  double scale_ = 1.0;
  int turn_ = 0;             // which of the two other scales the next probe tries
  int wait_ = 1;             // phases at the current scale before the next probe
  int64_t offers_ = 0;       // batches offered so far
  int64_t cycle_start_ = 0;  // the offer that starts the current cycle (wait_ phases, A B A)
  int64_t cycles_ = 0;       // cycles measured so far
  double probe_scale_ = 1.0;
  int64_t kept_cycle_ = -1;      // the cycle whose intervals kept_ holds
  std::vector<double> kept_[3];  // its kept intervals of phases A, B, A
  int64_t probes_ = 0;
};

}  // namespace stoker::ops
