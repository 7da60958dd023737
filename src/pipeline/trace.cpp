#include "stoker/pipeline/trace.hpp"

#include <atomic>
#include <charconv>
#include <cstdio>
#include <type_traits>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {
namespace {

// A small number per thread, for the trace's "tid" (std::thread::id has no portable integer).
int new_track_number() {
  static std::atomic<int> next{1};
  return next++;
}

int thread_number() {
  thread_local const int number = new_track_number();
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

// Integers as they are; microseconds (double) to the nanosecond.
template <typename T>
void append_number(std::string& out, T value) {
  char buf[64];
  std::to_chars_result r;
  if constexpr (std::is_floating_point_v<T>)
    r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, 3);
  else
    r = std::to_chars(buf, buf + sizeof buf, value);
  if (r.ec == std::errc())
    out.append(buf, r.ptr);
  else
    out += '0';  // beyond 60 digits: not a time a trace can hold
}

}  // namespace

TraceRecorder::TraceRecorder(std::string path) : path_(std::move(path)), origin_(Clock::now()) {}

void TraceRecorder::name_thread(std::string name) {
  const int t = thread_number();
  std::lock_guard lock(mutex_);
  thread_names_.emplace_back(t, std::move(name));
}

int TraceRecorder::add_track(std::string name) {
  const int t = new_track_number();
  std::lock_guard lock(mutex_);
  thread_names_.emplace_back(t, std::move(name));
  return t;
}

void TraceRecorder::span(std::string_view name, std::string_view category, Clock::time_point start,
                         Clock::time_point end, int64_t iteration) {
  span_on(thread_number(), name, category, start, end, iteration);
}

void TraceRecorder::span_on(int track, std::string_view name, std::string_view category,
                            Clock::time_point start, Clock::time_point end, int64_t iteration) {
  using us = std::chrono::duration<double, std::micro>;
  Event e{std::string(name),           std::string(category),   track,
          us(start - origin_).count(), us(end - start).count(), iteration};
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(e));
}

void TraceRecorder::write() const {
  // Numbers by std::to_chars, not iostreams: in the CUDA build of the Python module a
  // std::ostringstream crashed at its first number (inside the locale's num_put facet; seen on
  // the H100, every GPU pipeline with a trace), and to_chars ignores locales (a "," decimal
  // point would break the JSON). The library uses no iostreams otherwise.
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  std::lock_guard lock(mutex_);
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const auto& [t, name] : thread_names_) {
    sep();
    out += "{\"ph\": \"M\", \"pid\": 1, \"tid\": ";
    append_number(out, t);
    out += ", \"name\": \"thread_name\", \"args\": {\"name\": " + json_string(name) + "}}";
  }
  for (const auto& e : events_) {
    sep();
    out += "{\"ph\": \"X\", \"pid\": 1, \"tid\": ";
    append_number(out, e.thread);
    out += ", \"name\": " + json_string(e.name) + ", \"cat\": " + json_string(e.category);
    out += ", \"ts\": ";
    append_number(out, e.start_us);
    out += ", \"dur\": ";
    append_number(out, e.duration_us);
    if (e.iteration >= 0) {
      out += ", \"args\": {\"iteration\": ";
      append_number(out, e.iteration);
      out += "}";
    }
    out += "}";
  }
  out += "\n]}\n";
  std::FILE* f = std::fopen(path_.c_str(), "wb");
  const bool ok = f && std::fwrite(out.data(), 1, out.size(), f) == out.size();
  const bool closed = f && std::fclose(f) == 0;
  STOKER_ENFORCE(ok && closed, IOError, "cannot write the pipeline trace to '", path_, "'");
}

}  // namespace stoker::pipeline
