// The ranges of operator arguments with a size meaning (docs/design/pipeline.md, "Ranges"). An
// argument that sets the size of an output sample (shape, resize sizes, crop windows with
// padding, pad shapes, canvas sizes, num_classes) may ask for at most kMaxArgElements elements
// per sample (pixels, for the image operators' [height, width]): 2^31 - 1, as DALI's shape
// arguments are 32-bit; or as many as the input sample holds, where it is larger (data are not
// limited). Beyond, the operator refuses the value naming the argument before anything is
// allocated; the count is taken in double, because a product of extents that overflows int64
// passes as a small one (a sample of shape (2^40, 2^40) with no bytes behind it). A search an
// argument repeats (num_attempts) runs at most kMaxAttempts times a sample, so that impossible
// constraints end instead of spinning.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "stoker/core/error.hpp"

namespace stoker::ops {

inline constexpr int64_t kMaxArgElements = (int64_t(1) << 31) - 1;
inline constexpr int64_t kMaxAttempts = 100000;

// Throws ValueError when an output sample of extents `dims` (any container of numbers), sized
// by argument(s) `args` of operator `op`, would hold more than kMaxArgElements elements and
// more than `input_elements` (the input sample's, where the output's size derives from it).
// `sample` < 0: the same for every sample.
template <typename Dims>
void check_arg_elements(std::string_view op, std::string_view args, const Dims& dims,
                        int sample = -1, double input_elements = 0) {
  double elements = 1;
  std::string text;
  for (const auto d : dims) {
    elements *= double(d);
    if (!text.empty()) text += 'x';
    detail::append_text(text, d);
  }
  if (elements <= double(kMaxArgElements) || elements <= input_elements) return;
  throw ValueError(
      detail::concat(op, ": ", args, " would make an output of ", text, " (", elements, " elements",
                     sample >= 0 ? detail::concat(" in sample ", sample) : std::string(),
                     "); arguments may ask for at most ", kMaxArgElements, " elements per sample",
                     input_elements > 0 ? " (or as many as the input sample holds)" : ""));
}

}  // namespace stoker::ops
