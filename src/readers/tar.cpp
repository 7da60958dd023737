#include "stoker/readers/tar.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>

#include "stoker/core/error.hpp"
#include "stoker/readers/text_lines.hpp"

namespace stoker::readers {
namespace {

constexpr size_t kBlock = 512;

// Octal (space/NUL terminated) or GNU base-256 (high bit set) numeric field.
int64_t tar_number(const uint8_t* f, size_t n, const std::string& where) {
  if (f[0] & 0x80) {
    int64_t v = f[0] & 0x3f;
    for (size_t i = 1; i < n; ++i) {
      STOKER_ENFORCE(v < (int64_t(1) << 55), ValueError, where, ": size field overflows");
      v = v << 8 | f[i];
    }
    return v;
  }
  int64_t v = 0;
  size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == 0)) ++i;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; ++i) {
    STOKER_ENFORCE(v < (int64_t(1) << 58), ValueError, where, ": numeric field overflows");
    v = v * 8 + (f[i] - '0');
  }
  for (; i < n; ++i)
    STOKER_ENFORCE(f[i] == ' ' || f[i] == 0, ValueError, where, ": malformed numeric field");
  return v;
}

std::string field(const uint8_t* f, size_t n) {
  size_t len = 0;
  while (len < n && f[len]) ++len;
  return std::string(reinterpret_cast<const char*>(f), len);
}

// pax records "LEN key=value\n"; returns the "path" value if present.
std::string pax_path(std::span<const uint8_t> data, const std::string& where) {
  std::string result;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t len = 0;
    auto r = std::from_chars(reinterpret_cast<const char*>(data.data() + pos),
                             reinterpret_cast<const char*>(data.data() + data.size()), len);
    STOKER_ENFORCE(r.ec == std::errc() && len > 0 && len <= data.size() - pos, ValueError, where,
                   ": malformed pax record");
    std::string_view rec(reinterpret_cast<const char*>(data.data() + pos), len);
    auto sp = rec.find(' '), eq = rec.find('=');
    STOKER_ENFORCE(sp != std::string_view::npos && eq != std::string_view::npos && eq > sp &&
                       rec.back() == '\n',
                   ValueError, where, ": malformed pax record");
    if (rec.substr(sp + 1, eq - sp - 1) == "path")
      result = std::string(rec.substr(eq + 1, rec.size() - eq - 2));
    pos += len;
  }
  return result;
}

// Splits "dir/key.ext" into ("dir/key", "ext"); npos dot: no extension.
std::pair<std::string, std::string> split_key(const std::string& name) {
  size_t slash = name.rfind('/');
  size_t dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
  if (dot == std::string::npos) return {name, std::string()};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find_first_of(" \t", pos);
    if (end == std::string_view::npos) end = line.size();
    if (end > pos) out.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

int64_t parse_count(std::string_view w, const std::string& where) {
  int64_t v = -1;
  auto r = std::from_chars(w.data(), w.data() + w.size(), v);
  STOKER_ENFORCE(r.ec == std::errc() && r.ptr == w.data() + w.size() && v >= 0, ValueError, where,
                 ": expected a non-negative number, got '", w, "'");
  return v;
}

}  // namespace

std::vector<TarMember> parse_wds_index(std::string_view text, const std::string& path,
                                       int64_t file_size) {
  std::vector<TarMember> out;
  int version = 0;  // 11 or 12
  int64_t declared = -1, samples = 0;
  for_each_line(text, [&](std::string_view line, int lineno) {
    const auto where = detail::concat(path, ":", lineno);
    auto w = split_words(line);
    if (version == 0) {
      STOKER_ENFORCE(w.size() == 2 && (w[0] == "v1.1" || w[0] == "v1.2"), ValueError, where,
                     ": expected a DALI webdataset index header 'v1.1 <samples>' or 'v1.2 "
                     "<samples>', got '",
                     line, "'");
      version = w[0] == "v1.1" ? 11 : 12;
      declared = parse_count(w[1], where);
      return;
    }
    const size_t per = version == 11 ? 3 : 4;
    STOKER_ENFORCE(!w.empty() && w.size() % per == 0, ValueError, where, ": expected groups of ",
                   per == 3 ? "'<ext> <offset> <size>'" : "'<ext> <offset> <size> <path>'",
                   ", got '", line, "'");
    for (size_t k = 0; k < w.size(); k += per) {
      TarMember m;
      m.data_offset = parse_count(w[k + 1], where);
      m.size = parse_count(w[k + 2], where);
      m.name = version == 11 ? detail::concat(samples, ".", w[k]) : std::string(w[k + 3]);
      STOKER_ENFORCE(
          file_size < 0 || (m.data_offset <= file_size && m.size <= file_size - m.data_offset),
          ValueError, where, ": member '", m.name, "' (", m.size, " bytes at offset ",
          m.data_offset, ") runs past the end of the archive (", file_size, " bytes)");
      if (version == 12)
        STOKER_ENFORCE(split_key(m.name).second == w[k], ValueError, where, ": member '", m.name,
                       "' is listed under extension '", w[k], "'");
      out.push_back(std::move(m));
    }
    ++samples;
  });
  STOKER_ENFORCE(version != 0, ValueError, path, ": empty webdataset index");
  STOKER_ENFORCE(samples == declared, ValueError, path, ": the header announces ", declared,
                 " samples but the index lists ", samples);
  return out;
}

std::string format_wds_index(const std::vector<TarMember>& members) {
  std::vector<std::string> lines;
  std::map<std::string, size_t> by_key;
  for (const auto& m : members) {
    auto [key, ext] = split_key(m.name);
    if (ext.empty()) continue;  // not part of any sample
    auto [it, fresh] = by_key.emplace(key, lines.size());
    if (fresh) lines.emplace_back();
    auto& line = lines[it->second];
    line +=
        detail::concat(line.empty() ? "" : " ", ext, " ", m.data_offset, " ", m.size, " ", m.name);
  }
  std::string out = detail::concat("v1.2 ", lines.size(), "\n");
  for (auto& l : lines) out += l + "\n";
  return out;
}

std::vector<TarMember> index_tar(std::span<const uint8_t> a, const std::string& path) {
  std::vector<TarMember> out;
  std::string long_name, pax_name;
  uint64_t pos = 0;
  while (pos + kBlock <= a.size()) {
    const uint8_t* h = a.data() + pos;
    if (std::all_of(h, h + kBlock, [](uint8_t b) { return b == 0; })) break;  // end marker
    const std::string where = detail::concat(path, ": tar header at offset ", pos);
    int64_t stored = tar_number(h + 148, 8, where);
    int64_t sum = 0;
    for (size_t i = 0; i < kBlock; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
    STOKER_ENFORCE(stored == sum, ValueError, where,
                   ": checksum mismatch (not a tar archive, or corrupt)");
    int64_t size = tar_number(h + 124, 12, where);
    const char type = char(h[156]);
    const uint64_t data = pos + kBlock;
    STOKER_ENFORCE(size >= 0 && uint64_t(size) <= a.size() - data, ValueError, where,
                   ": member of ", size, " bytes runs past the end of the archive (", a.size(),
                   " bytes)");
    std::span<const uint8_t> content(a.data() + data, size_t(size));
    std::string name = field(h, 100);
    if (std::memcmp(h + 257, "ustar", 5) == 0 && h[345]) name = field(h + 345, 155) + "/" + name;
    if (type == 'L') {  // GNU long name for the next member
      long_name = field(content.data(), content.size());
    } else if (type == 'x') {  // pax header for the next member
      pax_name = pax_path(content, where);
    } else if (type == '0' || type == '\0' || type == '7') {
      if (!pax_name.empty())
        name = pax_name;
      else if (!long_name.empty())
        name = long_name;
      out.push_back({name, int64_t(data), size});
      long_name.clear();
      pax_name.clear();
    } else {  // directories, links, global pax headers ('g'), devices: no sample data
      long_name.clear();
      pax_name.clear();
    }
    pos = data + (uint64_t(size) + kBlock - 1) / kBlock * kBlock;
  }
  return out;
}

std::vector<WdsSample> group_webdataset(const std::vector<TarMember>& members,
                                        const std::vector<std::string>& ext_groups,
                                        const std::string& missing, const std::string& path) {
  STOKER_ENFORCE(missing == "empty" || missing == "skip" || missing == "error", ValueError,
                 "missing_component_behavior must be 'empty', 'skip' or 'error', got '", missing,
                 "'");
  std::vector<std::vector<std::string>> groups;
  for (auto& g : ext_groups) {
    std::vector<std::string> exts;
    size_t pos = 0;
    while (pos <= g.size()) {
      size_t end = g.find(';', pos);
      if (end == std::string::npos) end = g.size();
      if (end > pos) exts.push_back(g.substr(pos, end - pos));
      pos = end + 1;
    }
    STOKER_ENFORCE(!exts.empty(), ValueError, "ext entry '", g, "' names no extension");
    groups.push_back(std::move(exts));
  }
  std::vector<WdsSample> samples;
  std::map<std::string, size_t> by_key;
  for (size_t m = 0; m < members.size(); ++m) {
    auto [key, ext] = split_key(members[m].name);
    if (ext.empty()) continue;  // no extension: not part of any sample
    auto [it, fresh] = by_key.emplace(key, samples.size());
    if (fresh) samples.push_back({key, std::vector<int>(groups.size(), -1)});
    auto& s = samples[it->second];
    for (size_t g = 0; g < groups.size(); ++g)
      if (s.members[g] < 0 && std::find(groups[g].begin(), groups[g].end(), ext) != groups[g].end())
        s.members[g] = int(m);
  }
  std::vector<WdsSample> out;
  for (auto& s : samples) {
    auto miss = std::find(s.members.begin(), s.members.end(), -1);
    if (miss != s.members.end()) {
      STOKER_ENFORCE(missing != "error", ValueError, path, ": sample '", s.key,
                     "' has no component for extension '",
                     ext_groups[size_t(miss - s.members.begin())], "'");
      if (missing == "skip") continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace stoker::readers
