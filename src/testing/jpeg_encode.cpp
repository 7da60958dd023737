#include "stoker/testing/jpeg_encode.hpp"

#include <jpeglib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace stoker::testing {

std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int64_t h, int64_t w, int64_t c,
                                 const JpegEncodeOptions& o) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);  // test helper: libjpeg's exit() on error is acceptable
  jpeg_create_compress(&cinfo);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buf, &size);
  cinfo.image_width = JDIMENSION(w);
  cinfo.image_height = JDIMENSION(h);
  cinfo.input_components = int(c);
  cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, o.quality, TRUE);
  if (c == 3 && !o.subsample_420) {
    cinfo.comp_info[0].h_samp_factor = cinfo.comp_info[0].v_samp_factor = 1;
  }
  if (o.progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels + int64_t(cinfo.next_scanline) * w * c);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<uint8_t> out(buf, buf + size);
  jpeg_destroy_compress(&cinfo);
  std::free(buf);
  return out;
}

void patch_jpeg_size(std::vector<uint8_t>& j, uint16_t height, uint16_t width) {
  for (size_t i = 2; i + 9 < j.size();) {
    if (j[i] != 0xff) throw std::runtime_error("patch_jpeg_size: marker expected");
    uint8_t m = j[i + 1];
    size_t len = size_t(j[i + 2]) << 8 | j[i + 3];
    if (m >= 0xc0 && m <= 0xc2) {
      j[i + 5] = uint8_t(height >> 8), j[i + 6] = uint8_t(height);
      j[i + 7] = uint8_t(width >> 8), j[i + 8] = uint8_t(width);
      return;
    }
    i += 2 + len;
  }
  throw std::runtime_error("patch_jpeg_size: no SOF marker");
}

std::optional<std::string> shared_data_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("STOKER_SHARED_DATA")) {
    if (fs::is_directory(env)) return std::string(env);
    return std::nullopt;
  }
  if (fs::is_directory(STOKER_DEFAULT_SHARED_DATA)) return std::string(STOKER_DEFAULT_SHARED_DATA);
  return std::nullopt;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace stoker::testing
