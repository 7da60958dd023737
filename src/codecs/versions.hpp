// The versions of the codec libraries stoker was built against (`stoker info`).
#pragma once

#include <string>

namespace stoker::codecs {

std::string libjpeg_turbo_version();  // "2.1.5" (libjpeg API 62)
std::string libpng_version();         // the library loaded at run time, e.g. "1.6.39"
// FFmpeg's libavformat and libavcodec loaded at run time ("libavformat 59.27.100, libavcodec
// 59.37.100"), or "" where stoker was built without FFmpeg (no video).
std::string ffmpeg_version();
// libwebp's decoder loaded at run time ("1.2.4"), or "" where stoker was built without it.
std::string libwebp_version();
// libtiff loaded at run time ("4.5.0"), or "" where stoker was built without it.
std::string libtiff_version();
// OpenJPEG loaded at run time ("2.5.0"), or "" where stoker was built without it.
std::string openjpeg_version();
// libsndfile loaded at run time ("1.2.0"), or "" where stoker was built without it (no audio).
std::string libsndfile_version();

}  // namespace stoker::codecs
