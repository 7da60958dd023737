#include "stoker/pipeline/checkpoint.hpp"

#include <charconv>

#include "stoker/core/error.hpp"

namespace stoker::pipeline {

std::string Checkpoint::to_text() const {
  std::string s =
      detail::concat("stoker-checkpoint v1\nseed ", seed, "\niteration ", iteration, "\n");
  for (const auto& [name, state] : ops) s += "op " + name + " " + state + "\n";
  return s;
}

Checkpoint Checkpoint::parse(const std::string& text) {
  Checkpoint c;
  size_t pos = 0;
  int lineno = 0;
  bool header = false, seed = false, iteration = false;
  auto fail = [&](const std::string& why) -> void {
    throw ValueError(detail::concat("invalid checkpoint (line ", lineno, "): ", why));
  };
  auto number = [&](std::string_view v, auto& out) {
    auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) fail("expected a number");
  };
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (line.empty()) continue;
    if (!header) {
      if (line != "stoker-checkpoint v1") fail("expected 'stoker-checkpoint v1'");
      header = true;
    } else if (line.rfind("seed ", 0) == 0) {
      number(line.substr(5), c.seed);
      seed = true;
    } else if (line.rfind("iteration ", 0) == 0) {
      number(line.substr(10), c.iteration);
      iteration = true;
    } else if (line.rfind("op ", 0) == 0) {
      auto rest = line.substr(3);
      auto sp = rest.find(' ');
      if (sp == std::string_view::npos || sp == 0) fail("expected 'op <name> <state>'");
      c.ops.emplace_back(std::string(rest.substr(0, sp)), std::string(rest.substr(sp + 1)));
    } else {
      fail("unexpected '" + std::string(line) + "'");
    }
  }
  if (!header || !seed || !iteration) {
    ++lineno;
    fail("missing the header, seed or iteration line");
  }
  return c;
}

}  // namespace stoker::pipeline
