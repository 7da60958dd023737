// The mixed backend of decoders.image and its window variants (image_decoder_mixed.cpp).
#pragma once

#include <memory>

#include "stoker/ops/operator.hpp"

namespace stoker::ops::decoders_detail {

enum class Window;
// CUDA builds only.
std::unique_ptr<Operator> make_mixed_image_decoder(const OpSpec& spec, Window window);

}  // namespace stoker::ops::decoders_detail
