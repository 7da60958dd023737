// What must hold of a JPEG 2000 file before nvJPEG2000 may decode it for the CPU decoder's
// pixels (OpenJPEG's): host code, read from the boxes and markers alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stoker::codecs {

// True when the codestream (the file itself, or a JP2's jp2c box) is whole — it ends with the
// EOC marker: a truncated file decodes to zeros past its end on the GPU, where OpenJPEG raises
// — and a JP2 header holds no palette (pclr), component mapping (cmap) or channel definition
// (cdef) other than the identity one (colour channels in order, then opacity), which OpenJPEG
// applies and nvJPEG2000 does not.
bool jpeg2000_plain_and_whole(const uint8_t* data, size_t size);

}  // namespace stoker::codecs
