// tf.train.Example parsing (features map of bytes/float/int64 lists) on the wire reader.
// Packed and unpacked repeated numbers are both accepted, as protobuf requires.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace stoker::readers {

struct FeatureValue {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kNone;                      // kNone: a feature present with no list set
  std::vector<std::span<const uint8_t>> bytes;  // views into the record
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// Parses a serialized Example. Spans in the result point into `record`. A SequenceExample
// parses too (its context has the same wire shape). Throws ValueError on malformed input.
std::map<std::string, FeatureValue> parse_example(std::span<const uint8_t> record);

}  // namespace stoker::readers
