#include "stoker/ops/registry.hpp"

#include "stoker/ops/decoders/image_decoder.hpp"
#include "stoker/ops/geometry/geometry_ops.hpp"
#include "stoker/ops/io/external_source.hpp"
#include "stoker/ops/normalize/crop_mirror_normalize.hpp"
#include "stoker/ops/random/random_sources.hpp"
#include "stoker/ops/readers/file_reader.hpp"
#include "stoker/ops/readers/mxnet_reader.hpp"
#include "stoker/ops/readers/numpy_reader.hpp"
#include "stoker/ops/readers/tfrecord_reader.hpp"

namespace stoker::ops {

const std::vector<OpSchema>& op_schemas() {
  // Sorted by operator name. Adding an operator adds one line here.
  static const std::vector<OpSchema> kAll{
      crop_schema(),          crop_mirror_normalize_schema(),
      image_decoder_schema(), external_source_schema(),
      flip_schema(),          coin_flip_schema(),
      uniform_schema(),       random_resized_crop_schema(),
      file_reader_schema(),
      mxnet_reader_schema(),
      numpy_reader_schema(),   tfrecord_reader_schema(),
      resize_schema(),
  };
  return kAll;
}

const OpSchema* find_op_schema(std::string_view name) {
  for (auto& s : op_schemas()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace stoker::ops
