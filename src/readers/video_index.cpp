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
                 entry.start, " -> frame ", first, ") is after the end (", entry.end,
                 " -> frame ", end, ")");
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
  throw ValueError("pad_mode must be none, constant, edge (repeat), reflect_1001 (symmetric) or "
                   "reflect_101 (reflect), got '" + name + "'");
}

namespace {
// Frame `i` (>= count) under the padding; -1 for constant.
int64_t padded(int64_t i, int64_t count, FramePadding pad) {
  switch (pad) {
    case FramePadding::kEdge:
      return count - 1;
    case FramePadding::kReflect1001: {
      const int64_t m = i % (2 * count);
      return m < count ? m : 2 * count - 1 - m;
    }
    case FramePadding::kReflect101: {
      if (count == 1) return 0;
      const int64_t m = i % (2 * count - 2);
      return m < count ? m : 2 * count - 2 - m;
    }
    default:
      return -1;
  }
}
}  // namespace

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
  const int64_t n = s.length >= 0 ? s.length
                                  : std::max<int64_t>(0, ((s.end >= 0 ? s.end : count) - s.start +
                                                          s.stride - 1) / s.stride);
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
