#include "stoker/readers/nemo_manifest.hpp"

#include <cmath>

#include "stoker/core/error.hpp"
#include "stoker/readers/json_events.hpp"

namespace stoker::readers {
namespace {

enum class Field { kOther, kPath, kDuration, kOffset, kText };

// One line's entry from the parser's events: the keys of the top-level object, every nested
// value skipped.
class LineEvents final : public JsonEvents {
 public:
  explicit LineEvents(NemoEntry& entry) : entry_(entry) {}
  bool object = false, has_path = false, has_duration = false;
  std::string error;  // the first key of the wrong type

  void key(std::string_view k) override {
    if (depth_ != 1) return;
    field_ = k == "audio_filepath" ? Field::kPath
             : k == "duration"     ? Field::kDuration
             : k == "offset"       ? Field::kOffset
             : k == "text"         ? Field::kText
                                   : Field::kOther;
    name_ = k;
  }
  void start_object() override { open(true); }
  void start_array() override { open(false); }
  void end_container() override {
    --depth_;
    field_ = Field::kOther;
  }
  void scalar(const JsonScalar& v) override {
    if (depth_ != 1) {
      if (depth_ == 0) object = false;  // a line that is a bare value
      return;
    }
    switch (field_) {
      case Field::kPath:
        if (v.kind == JsonScalar::kString) {
          entry_.audio_filepath = std::string(v.s);
          has_path = true;
        } else {
          wrong_type("a string");
        }
        break;
      case Field::kText:
        if (v.kind == JsonScalar::kString)
          entry_.text = std::string(v.s);
        else
          wrong_type("a string");
        break;
      case Field::kDuration:
      case Field::kOffset:
        if (v.is_number()) {
          (field_ == Field::kDuration ? entry_.duration : entry_.offset) = v.d;
          has_duration |= field_ == Field::kDuration;
        } else
          wrong_type("a number");
        break;
      case Field::kOther:
        break;
    }
    field_ = Field::kOther;
  }

 private:
  void open(bool is_object) {
    if (depth_ == 0) object = is_object;
    if (depth_ == 1 && field_ != Field::kOther)
      wrong_type(field_ == Field::kDuration || field_ == Field::kOffset ? "a number" : "a string");
    ++depth_;
    field_ = Field::kOther;
  }
  void wrong_type(const char* want) {
    if (error.empty()) error = detail::concat("\"", name_, "\" is not ", want);
  }

  NemoEntry& entry_;
  int depth_ = 0;
  Field field_ = Field::kOther;
  std::string name_;
};

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

int64_t parse_nemo_manifest(std::string_view text, const std::string& path,
                            const NemoManifestOptions& options, std::vector<NemoEntry>& out) {
  const size_t before = out.size();
  int64_t left_out = 0, line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (blank(line)) continue;
    const std::string where = detail::concat(path, ", line ", line_number);
    NemoEntry entry;
    LineEvents events(entry);
    parse_json_events(line, events, where);
    STOKER_ENFORCE(events.object, ValueError, where, ": expected a JSON object per line");
    STOKER_ENFORCE(events.error.empty(), ValueError, where, ": ", events.error);
    STOKER_ENFORCE(events.has_path && !entry.audio_filepath.empty(), ValueError, where,
                   ": the entry has no \"audio_filepath\"");
    STOKER_ENFORCE(std::isfinite(entry.duration) && (entry.duration >= 0 || !events.has_duration),
                   ValueError, where,
                   ": \"duration\" must be a non-negative number of seconds, got ", entry.duration);
    STOKER_ENFORCE(std::isfinite(entry.offset) && entry.offset >= 0, ValueError, where,
                   ": \"offset\" must be a non-negative number of seconds, got ", entry.offset);
    if ((options.min_duration > 0 && entry.duration < options.min_duration) ||
        (options.max_duration > 0 && entry.duration > options.max_duration)) {
      ++left_out;
      continue;
    }
    entry.index = int64_t(out.size() - before);
    out.push_back(std::move(entry));
  }
  return left_out;
}

}  // namespace stoker::readers
