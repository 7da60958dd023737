#include "stoker/codecs/jpeg/jpeg_encoder.hpp"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdlib>
#include <string>

#include "stoker/core/error.hpp"

namespace stoker::codecs {

namespace {
// libjpeg reports errors through error_exit, which must not return: a longjmp back to encode(),
// which throws outside the setjmp frame (no destructor is skipped).
struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};
void on_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}
void ignore_message(j_common_ptr, int) {}
}  // namespace

struct JpegEncoder::State {
  jpeg_compress_struct cinfo{};
  ErrorManager err;
  // jpeg_mem_dest's output, allocated by libjpeg per image: a buffer handed back to it is not
  // freed when it grows, so none is reused.
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  void release() {
    std::free(buffer);
    buffer = nullptr, size = 0;
  }
  State() {
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = on_error_exit;
    err.pub.emit_message = ignore_message;
    jpeg_create_compress(&cinfo);
  }
  ~State() {
    jpeg_destroy_compress(&cinfo);
    release();
  }
};

JpegEncoder::JpegEncoder() : state_(std::make_unique<State>()) {}
JpegEncoder::~JpegEncoder() = default;

namespace {
// Every libjpeg call between setjmp and the end lives here; false: the error manager has the
// message (the compressor is aborted, ready for the next image).
bool compress(jpeg_compress_struct& cinfo, ErrorManager& err, const uint8_t* pixels, int64_t height,
              int64_t width, int channels, int64_t row_stride, int quality, unsigned char** buffer,
              unsigned long* size) {
  if (setjmp(err.jump)) {
    jpeg_abort_compress(&cinfo);
    return false;
  }
  jpeg_mem_dest(&cinfo, buffer, size);
  cinfo.image_width = JDIMENSION(width);
  cinfo.image_height = JDIMENSION(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels + int64_t(cinfo.next_scanline) * row_stride);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  return true;
}
}  // namespace

void JpegEncoder::encode(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                         int64_t row_stride, int quality, std::vector<uint8_t>& out) {
  STOKER_ENFORCE(channels == 1 || channels == 3, ValueError,
                 "JPEG encoding takes 1 or 3 channels, got ", channels);
  STOKER_ENFORCE(
      height > 0 && width > 0 && height <= JPEG_MAX_DIMENSION && width <= JPEG_MAX_DIMENSION,
      ValueError, "JPEG cannot hold an image of ", height, "x", width, " pixels (1 to ",
      JPEG_MAX_DIMENSION, " on each side)");
  STOKER_ENFORCE(quality >= 1 && quality <= 100, ValueError, "JPEG quality must be 1 to 100, got ",
                 quality);
  auto& s = *state_;
  s.release();
  const bool ok = compress(s.cinfo, s.err, pixels, height, width, channels, row_stride, quality,
                           &s.buffer, &s.size);
  if (ok) {
    out.assign(s.buffer, s.buffer + s.size);
    s.release();
  } else {
    // After an error libjpeg may have replaced (and freed) the buffer it was given without
    // writing the new one back: leaking it is safe, freeing s.buffer might not be.
    s.buffer = nullptr, s.size = 0;
  }
  if (!ok) throw ValueError(std::string("JPEG encoding failed: ") + s.err.message);
}

}  // namespace stoker::codecs
