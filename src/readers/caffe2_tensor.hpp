// Caffe2's TensorProtos (caffe2.proto: TensorProtos.protos = 1; TensorProto.dims = 1,
// data_type = 2, float_data = 3, int32_data = 4, byte_data = 5, string_data = 6,
// double_data = 9, int64_data = 10), parsed with the wire reader.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace stoker::readers {

struct TensorProtoView {
  enum DataType : int {
    kUndefined = 0,
    kFloat = 1,
    kInt32 = 2,
    kByte = 3,
    kString = 4,
    kBool = 5,
    kUint8 = 6,
    kInt8 = 7,
    kUint16 = 8,
    kInt16 = 9,
    kInt64 = 10,
    kFloat16 = 12,
    kDouble = 13
  };
  std::vector<int64_t> dims;
  int data_type = kFloat;  // proto default
  std::vector<float> floats;
  std::vector<int64_t> ints;                      // int32_data and int64_data
  std::span<const uint8_t> bytes;                 // byte_data
  std::vector<std::span<const uint8_t>> strings;  // string_data
  std::vector<double> doubles;
};

// The tensors of a serialized TensorProtos. Throws ValueError on malformed input.
std::vector<TensorProtoView> parse_tensor_protos(std::span<const uint8_t> value);

}  // namespace stoker::readers
