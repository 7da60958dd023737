#include "stoker/readers/video_index.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "stoker/core/error.hpp"
#include "stoker/core/file_io.hpp"
#include "stoker/readers/text_lines.hpp"

namespace stoker::readers {
namespace {

// Whitespace-separated fields of a line.
std::vector<std::string> fields(std::string_view line) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = line.find_first_not_of(" \t\r", at)) != std::string::npos) {
    const size_t end = line.find_first_of(" \t\r", at);
    out.emplace_back(line.substr(at, end - at));
    at = end;
  }
  return out;
}

template <typename T>
bool parse_number(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::vector<VideoEntry> parse_video_file_list(const std::string& list_path) {
  std::string text;
  try {
    text = read_file_text(list_path);
  } catch (const IOError& e) {
    throw IOError(std::string("cannot open file_list: ") + e.what());
  }
  std::vector<VideoEntry> out;
  for_each_line(text, [&](std::string_view line, int line_number) {
    const auto f = fields(line);
    if (f.empty()) return;
    auto where = [&] {
      return detail::concat("file_list '", list_path, "' line ", line_number, ": ");
    };
    STOKER_ENFORCE(f.size() >= 2 && f.size() <= 4, ValueError, where(),
                   "expected '<path> <label> [<start> [<end>]]', got ", f.size(), " fields");
    VideoEntry e;
    e.path = f[0];
    int64_t label = -1;
    STOKER_ENFORCE(parse_number(f[1], label) && label >= 0 && label <= INT32_MAX, ValueError,
                   where(), "the label must be an integer >= 0, got '", f[1], "'");
    e.label = int32_t(label);
    STOKER_ENFORCE(f.size() < 3 || parse_number(f[2], e.start), ValueError, where(),
                   "the start must be a number, got '", f[2], "'");
    STOKER_ENFORCE(f.size() < 4 || parse_number(f[3], e.end), ValueError, where(),
                   "the end must be a number, got '", f[3], "'");
    STOKER_ENFORCE(std::isfinite(e.start) && std::isfinite(e.end) && std::fabs(e.start) < 1e9f &&
                       std::fabs(e.end) < 1e9f,
                   ValueError, where(), "start and end must be finite and below 1e9");
    if (f.size() == 4 && e.start == e.end) return;  // DALI: an empty range, skipped
    out.push_back(std::move(e));
  });
  STOKER_ENFORCE(!out.empty(), ValueError, "file_list '", list_path, "' lists no files");
  return out;
}

std::pair<int64_t, int64_t> video_frame_range(const VideoEntry& entry, int64_t frames, double fps,
                                              const FrameRangeOptions& options) {
  if (entry.start == 0 && entry.end == 0) return {0, frames};
  int64_t first = 0, end = frames;
  const char* what = options.frame_numbers ? "frame number" : "time";
  if (options.frame_numbers) {
    // DALI: start_frame = start, or frame_count + start (in float), converted to int.
    first = int64_t(entry.start >= 0 ? entry.start : float(frames) + entry.start);
    end = int64_t(entry.end > 0 ? entry.end : float(frames) + entry.end);
  } else {
    const bool out = options.include_preceding;  // round outwards instead of inwards
    const double s = double(entry.start) * fps, e = double(entry.end) * fps;
    first = int64_t(out ? std::floor(s) : std::ceil(s));
    end = int64_t(out ? std::ceil(e) : std::floor(e));
    if (entry.start < 0) first += frames;
    if (entry.end <= 0) end += frames;
  }
  STOKER_ENFORCE(first <= end, ValueError, "video '", entry.path, "': the start ", what, " (",
                 entry.start, " -> frame ", first, ") is after the end (", entry.end, " -> frame ",
                 end, ")");
  STOKER_ENFORCE(first >= 0 && end <= frames, ValueError, "video '", entry.path, "': frames [",
                 first, ", ", end, ") of the file list's range (", entry.start, ", ", entry.end,
                 ") are not all among its ", frames, " frames");
  return {first, end};
}

void cut_sequences(int32_t file, int64_t first, int64_t end, const SequenceOptions& o,
                   std::vector<VideoSequence>& out) {
  STOKER_ENFORCE(o.length >= 1 && o.stride >= 1 && o.step != 0, ValueError,
                 "sequence_length and stride must be >= 1 and step != 0, got ", o.length, ", ",
                 o.stride, " and ", o.step);
  const int64_t step = o.step < 0 ? o.length * o.stride : o.step;
  const int64_t span = 1 + (o.length - 1) * o.stride;
  int64_t s = first;
  for (; s < end && s + span <= end; s += step) out.push_back({file, s, int32_t(o.length)});
  if (!o.pad) return;
  for (; s < end; s += step) out.push_back({file, s, int32_t(1 + (end - 1 - s) / o.stride)});
}

FramePadding parse_frame_padding(const std::string& name) {
  if (name == "none") return FramePadding::kNone;
  if (name == "constant") return FramePadding::kConstant;
  if (name == "edge" || name == "repeat") return FramePadding::kEdge;
  if (name == "reflect_1001" || name == "symmetric") return FramePadding::kReflect1001;
  if (name == "reflect_101" || name == "reflect") return FramePadding::kReflect101;
  throw ValueError(
      "pad_mode must be none, constant, edge (repeat), reflect_1001 (symmetric) or "
      "reflect_101 (reflect), got '" +
      name + "'");
}

namespace {
int64_t floor_mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}
// DALI's boundary::idx_reflect_1001 and idx_reflect_101 over [lo, hi), in closed form (DALI
// loops, one reflection a turn).
int64_t reflect_1001(int64_t i, int64_t lo, int64_t hi) {
  const int64_t n = hi - lo;
  if (n < 1) return hi - 1;
  const int64_t m = floor_mod(i - lo, 2 * n);
  return lo + (m < n ? m : 2 * n - 1 - m);
}
int64_t reflect_101(int64_t i, int64_t lo, int64_t hi) {
  const int64_t n = hi - lo;
  if (n < 2) return hi - 1;
  const int64_t m = floor_mod(i - lo, 2 * n - 2);
  return lo + (m < n ? m : 2 * n - 2 - m);
}
// Frame `i` (>= count) under the padding; -1 for constant.
int64_t padded(int64_t i, int64_t count, FramePadding pad) {
  switch (pad) {
    case FramePadding::kEdge:
      return count - 1;
    case FramePadding::kReflect1001:
      return reflect_1001(i, 0, count);
    case FramePadding::kReflect101:
      return reflect_101(i, 0, count);
    default:
      return -1;
  }
}
}  // namespace

int64_t bound_frame(int64_t frame, int64_t lo, int64_t end, FramePadding pad) {
  if (frame >= lo && frame < end) return frame;
  switch (pad) {
    case FramePadding::kEdge:
      return std::clamp(frame, lo, end - 1);
    case FramePadding::kConstant:
      return -1;
    case FramePadding::kReflect1001:  // about [0, end), whatever lo is (DALI's)
      return reflect_1001(frame, 0, end);
    case FramePadding::kReflect101:
      return reflect_101(frame, 0, end);
    default:
      throw ValueError(detail::concat("frame ", frame, " is outside the sample's frames [", lo,
                                      ", ", end, ") and pad_mode is 'none'"));
  }
}

ListRangeOptions parse_list_range_options(const std::string& format, const std::string& rounding,
                                          bool include_end) {
  ListRangeOptions o;
  o.include_end = include_end;
  STOKER_ENFORCE(format == "frames" || format == "timestamps", ValueError,
                 "file_list_format must be 'frames' or 'timestamps', got '", format, "'");
  o.frame_numbers = format == "frames";
  if (rounding == "start_down_end_up") {
    o.start_down = true, o.end_down = false;
  } else if (rounding == "start_up_end_down") {
    o.start_down = false, o.end_down = true;
  } else if (rounding == "all_up") {
    o.start_down = false, o.end_down = false;
  } else if (rounding == "all_down") {
    o.start_down = true, o.end_down = true;
  } else {
    throw ValueError(
        "file_list_rounding must be 'start_down_end_up', 'start_up_end_down', "
        "'all_up' or 'all_down', got '" +
        rounding + "'");
  }
  return o;
}

namespace {
// DALI 2.4's FrameIndex::GetFrameIdxByTimestamp: the frame at `t`, else the first after it (or
// the one before that, rounding down); 0 when every frame is before `t`.
int64_t frame_at_time(const std::vector<int64_t>& pts, int64_t t, bool down) {
  for (size_t i = 0; i < pts.size(); ++i) {
    if (pts[i] == t) return int64_t(i);
    if (pts[i] > t) return down && i > 0 ? int64_t(i) - 1 : int64_t(i);
  }
  return 0;
}
}  // namespace

std::pair<int64_t, int64_t> video_list_range(const VideoEntry& entry,
                                             const std::vector<int64_t>& pts, int64_t tb_num,
                                             int64_t tb_den, const ListRangeOptions& o) {
  const auto frames = int64_t(pts.size());
  if (entry.start == 0 && entry.end == 0) return {0, frames};
  int64_t first = 0, end = 0;
  if (o.frame_numbers) {
    // In single precision, as DALI adds the count to the float it read.
    const float s = entry.start < 0 ? float(frames) + entry.start : entry.start;
    const float e = entry.end < 0 ? float(frames) + entry.end : entry.end;
    first = int64_t(o.start_down ? std::floor(double(s)) : std::ceil(double(s)));
    end = int64_t(o.end_down ? std::floor(double(e)) : std::ceil(double(e)));
  } else {
    // DALI's SecondsToTimestamp: truncated towards zero.
    const auto to_pts = [&](float seconds) {
      return int64_t(double(seconds) * double(tb_den) / double(tb_num));
    };
    first = frame_at_time(pts, to_pts(entry.start), o.start_down);
    end = frame_at_time(pts, to_pts(entry.end), o.end_down);
  }
  if (o.include_end) end = std::min(end, frames);
  return {first, end};
}

std::vector<int64_t> select_frames(const FrameSelection& s, int64_t count) {
  std::vector<int64_t> out;
  if (s.listed) {
    for (int64_t i : s.frames) {
      STOKER_ENFORCE(i >= 0, ValueError, "frame ", i, " is negative");
      STOKER_ENFORCE(i < count || s.pad != FramePadding::kNone, ValueError, "frame ", i,
                     " is past the video's ", count, " frames (pad_mode is 'none')");
      out.push_back(i < count ? i : padded(i, count, s.pad));
    }
    return out;
  }
  STOKER_ENFORCE(s.stride >= 1, ValueError, "stride must be >= 1, got ", s.stride);
  STOKER_ENFORCE(s.start >= 0 && s.start < count, ValueError, "start_frame ", s.start,
                 " is not among the video's ", count, " frames");
  const int64_t n =
      s.length >= 0 ? s.length
                    : std::max<int64_t>(
                          0, ((s.end >= 0 ? s.end : count) - s.start + s.stride - 1) / s.stride);
  STOKER_ENFORCE(n <= (int64_t(1) << 24), ValueError, "asks for ", n, " frames");
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = s.start + k * s.stride;
    if (i < count) {
      out.push_back(i);
    } else if (s.pad == FramePadding::kNone) {
      break;
    } else {
      out.push_back(padded(i, count, s.pad));
    }
  }
  return out;
}

}  // namespace stoker::readers
