#include "stoker/codecs/versions.hpp"

#include <png.h>

#include <cstdio>
// jpeglib.h needs FILE and size_t first.
#include <jpeglib.h>

namespace stoker::codecs {

std::string libjpeg_turbo_version() {
#ifdef LIBJPEG_TURBO_VERSION_NUMBER
  const int v = LIBJPEG_TURBO_VERSION_NUMBER;  // e.g. 2001005
  return std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) + "." +
         std::to_string(v % 1000) + " (libjpeg API " + std::to_string(JPEG_LIB_VERSION) + ")";
#else
  return "libjpeg API " + std::to_string(JPEG_LIB_VERSION);
#endif
}

std::string libpng_version() { return png_get_libpng_ver(nullptr); }

}  // namespace stoker::codecs
