// Caffe's Datum message (caffe.proto: channels=1, height=2, width=3, data=4, label=5,
// float_data=6, encoded=7), parsed with the wire reader.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace stoker::readers {

struct Datum {
  int64_t channels = 0, height = 0, width = 0;
  std::span<const uint8_t> data;  // encoded file bytes, or CHW uint8 pixels
  int64_t label = 0;
  std::vector<float> float_data;
  bool encoded = false;
};

// Throws ValueError on malformed input or, for raw data, when data's size is not
// channels*height*width.
Datum parse_datum(std::span<const uint8_t> value);

}  // namespace stoker::readers
