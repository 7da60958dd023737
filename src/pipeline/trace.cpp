#include "stoker/pipeline/trace.hpp"

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {
namespace {

// A small number per thread, for the trace's "tid" (std::thread::id has no portable integer).
int thread_number() {
  static std::atomic<int> next{1};
  thread_local const int number = next++;
  return number;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\', out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

TraceRecorder::TraceRecorder(std::string path) : path_(std::move(path)), origin_(Clock::now()) {}

void TraceRecorder::name_thread(std::string name) {
  const int t = thread_number();
  std::lock_guard lock(mutex_);
  thread_names_.emplace_back(t, std::move(name));
}

void TraceRecorder::span(std::string_view name, std::string_view category, Clock::time_point start,
                         Clock::time_point end, int64_t iteration) {
  using us = std::chrono::duration<double, std::micro>;
  Event e{std::string(name),           std::string(category),   thread_number(),
          us(start - origin_).count(), us(end - start).count(), iteration};
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(e));
}

void TraceRecorder::write() const {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3);  // microseconds, to the nanosecond
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  std::lock_guard lock(mutex_);
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (const auto& [t, name] : thread_names_) {
    sep();
    out << "{\"ph\": \"M\", \"pid\": 1, \"tid\": " << t
        << ", \"name\": \"thread_name\", \"args\": {\"name\": " << json_string(name) << "}}";
  }
  for (const auto& e : events_) {
    sep();
    out << "{\"ph\": \"X\", \"pid\": 1, \"tid\": " << e.thread
        << ", \"name\": " << json_string(e.name) << ", \"cat\": " << json_string(e.category)
        << ", \"ts\": " << e.start_us << ", \"dur\": " << e.duration_us;
    if (e.iteration >= 0) out << ", \"args\": {\"iteration\": " << e.iteration << "}";
    out << "}";
  }
  out << "\n]}\n";
  std::ofstream f(path_, std::ios::binary | std::ios::trunc);
  f << out.str();
  f.close();
  STOKER_ENFORCE(bool(f), IOError, "cannot write the pipeline trace to '", path_, "'");
}

}  // namespace stoker::pipeline
