// Streams a JSON text's events (keys, containers, scalars) to a consumer without building a
// document: how large annotation files are read (readers.coco: COCO's train2017 file is
// 448 MB; a document tree of it takes several GB).
//
// The parser is Boost.JSON's basic_parser: 400 MB/s on one core here against 60-70 MB/s for
// nlohmann-json's SAX interface (whose number conversion, strtod, dominates), and Boost is on
// both the development machines (Debian's libboost-json1.81-dev) and the GPU machine. Boost
// 1.81's doubles are not always correctly rounded: numbers are re-read with std::from_chars,
// which is, as the masks' rounding needs (readers/coco_masks.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::readers {

struct JsonScalar {
  enum Kind { kNull, kBool, kInt, kFloat, kString } kind = kNull;
  int64_t i = 0;        // kInt and kBool
  double d = 0;         // every number (an integer too)
  std::string_view s;   // kString, valid during the call
  bool is_number() const { return kind == kInt || kind == kFloat; }
};

class JsonEvents {
 public:
  virtual ~JsonEvents() = default;
  virtual void key(std::string_view key) = 0;
  virtual void start_object() = 0;
  virtual void start_array() = 0;
  virtual void end_container() = 0;
  virtual void scalar(const JsonScalar& value) = 0;
};

// Parses `text`, calling `events` in document order. Throws ValueError "<what>: not valid
// JSON (at byte N): <reason>" for a syntax error; exceptions from `events` pass through.
void parse_json_events(std::string_view text, JsonEvents& events, const std::string& what);

}  // namespace stoker::readers
