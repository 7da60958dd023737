#include "stoker/codecs/versions.hpp"

#include <png.h>

#include <cstdio>
// jpeglib.h needs FILE and size_t first.
#include <jpeglib.h>

#ifdef STOKER_HAVE_WEBP
#include <webp/decode.h>
#endif
#ifdef STOKER_HAVE_TIFF
#include <tiffio.h>
#endif
#ifdef STOKER_HAVE_JPEG2000
#include <openjpeg.h>
#endif
#ifdef STOKER_HAVE_SNDFILE
#include <sndfile.h>
#endif
#ifdef STOKER_HAVE_FFMPEG
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}
#endif

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

std::string ffmpeg_version() {
#ifdef STOKER_HAVE_FFMPEG
  auto text = [](unsigned v) {
    return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 255) + "." +
           std::to_string(v & 255);
  };
  return "libavformat " + text(avformat_version()) + ", libavcodec " + text(avcodec_version());
#else
  return "";
#endif
}

std::string libwebp_version() {
#ifdef STOKER_HAVE_WEBP
  const int v = WebPGetDecoderVersion();  // 0x010204 for 1.2.4
  return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 255) + "." +
         std::to_string(v & 255);
#else
  return "";
#endif
}

std::string libtiff_version() {
#ifdef STOKER_HAVE_TIFF
  // "LIBTIFF, Version 4.5.0\nCopyright ...": the number.
  const std::string text = TIFFGetVersion();
  const auto at = text.find("Version ");
  if (at == std::string::npos) return text.substr(0, text.find('\n'));
  const auto from = at + 8;
  return text.substr(from, text.find_first_of(" \n", from) - from);
#else
  return "";
#endif
}

std::string openjpeg_version() {
#ifdef STOKER_HAVE_JPEG2000
  return opj_version();
#else
  return "";
#endif
}

std::string libsndfile_version() {
#ifdef STOKER_HAVE_SNDFILE
  // "libsndfile-1.2.0": the number.
  const std::string text = sf_version_string();
  const auto at = text.find('-');
  return at == std::string::npos ? text : text.substr(at + 1);
#else
  return "";
#endif
}

}  // namespace stoker::codecs
