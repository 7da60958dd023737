// A Chrome / Perfetto trace of a pipeline (PipelineOptions::trace, STOKER_TRACE): one track per
// thread (the CPU stage, each device stage, the consumer) and per device stage's CUDA stream, a
// span per operator run (on the stream: its GPU time) and per stage iteration, and the
// consumer's waits. Written as JSON when the pipeline closes; open it
// in ui.perfetto.dev or chrome://tracing.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::pipeline {

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TraceRecorder(std::string path);

  // Names the calling thread's track ("cpu stage", "gpu stage", ...).
  void name_thread(std::string name);
  // A track of its own (e.g. a CUDA stream's); returns its number for span_on().
  int add_track(std::string name);
  // A span on the calling thread's track; `iteration` < 0: none.
  void span(std::string_view name, std::string_view category, Clock::time_point start,
            Clock::time_point end, int64_t iteration = -1);
  // A span on `track` (from add_track).
  void span_on(int track, std::string_view name, std::string_view category, Clock::time_point start,
               Clock::time_point end, int64_t iteration = -1);
  // Writes {"traceEvents": [...]} to the path. Throws IOError when it cannot.
  void write() const;
  const std::string& path() const { return path_; }

 private:
  struct Event {
    std::string name, category;
    int thread;
    double start_us, duration_us;
    int64_t iteration;
  };
  std::string path_;
  Clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
  std::vector<std::pair<int, std::string>> thread_names_;
};

}  // namespace stoker::pipeline
