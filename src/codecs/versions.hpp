// The versions of the codec libraries stoker was built against (`stoker info`).
#pragma once

#include <string>

namespace stoker::codecs {

std::string libjpeg_turbo_version();  // "2.1.5" (libjpeg API 62)
std::string libpng_version();         // the library loaded at run time, e.g. "1.6.39"

}  // namespace stoker::codecs
