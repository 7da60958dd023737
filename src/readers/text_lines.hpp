// Line iteration for the small text formats readers parse (index files, file lists).
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace stoker::readers {

// Calls fn(line, line_number) for every non-blank line, with trailing '\r' and spaces removed.
template <typename F>
void for_each_line(std::string_view text, F&& fn) {
  size_t pos = 0;
  for (int lineno = 1; pos < text.size(); ++lineno) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (!line.empty()) fn(line, lineno);
  }
}

// Parses "<integer><spaces or tabs><integer>" (the whole line) into a and b; false otherwise.
inline bool parse_two_integers(std::string_view line, int64_t& a, int64_t& b) {
  const auto sep = line.find_first_of(" \t");
  if (sep == std::string_view::npos) return false;
  const auto second = line.find_first_not_of(" \t", sep);
  if (second == std::string_view::npos) return false;  // "12\t": no second number
  auto x = std::from_chars(line.data(), line.data() + sep, a);
  auto y = std::from_chars(line.data() + second, line.data() + line.size(), b);
  return x.ec == std::errc() && x.ptr == line.data() + sep && y.ec == std::errc() &&
         y.ptr == line.data() + line.size();
}

// Samples numbered across several files: file k holds [end(k-1), end(k)).
class MultiFileIndex {
 public:
  void add_file(int64_t count) { ends_.push_back(total() + count); }
  int64_t total() const { return ends_.empty() ? 0 : ends_.back(); }
  // The first sample of each file (empty files included: they hold a place in file orders).
  std::vector<int64_t> starts() const {
    std::vector<int64_t> s{0};
    if (!ends_.empty()) s.insert(s.end(), ends_.begin(), ends_.end() - 1);
    return s;
  }
  // (file, index within the file) of global sample `index` (0 <= index < total()).
  std::pair<size_t, int64_t> locate(int64_t index) const {
    size_t k = 0, hi = ends_.size();
    while (k < hi) {  // first file whose end is past index
      size_t mid = (k + hi) / 2;
      if (ends_[mid] <= index)
        k = mid + 1;
      else
        hi = mid;
    }
    return {k, index - (k == 0 ? 0 : ends_[k - 1])};
  }

 private:
  std::vector<int64_t> ends_;
};

}  // namespace stoker::readers
