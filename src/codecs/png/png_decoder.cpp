#include "stoker/codecs/png/png_decoder.hpp"

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"

namespace stoker::codecs {
namespace {

// libpng reports errors with longjmp. Everything between setjmp and the libpng calls lives in
// the plain functions below (no C++ objects with destructors in those frames); they return
// false with the message in `error`, and the C++ callers throw.
struct PngStream {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  char error[200] = {0};
};

void on_error(png_structp png, png_const_charp msg) {
  auto* s = static_cast<PngStream*>(png_get_error_ptr(png));
  std::snprintf(s->error, sizeof s->error, "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // ancillary-chunk trouble: decode anyway

void on_read(png_structp png, png_bytep out, size_t n) {
  auto* s = static_cast<PngStream*>(png_get_io_ptr(png));
  if (n > s->size - s->pos) png_error(png, "truncated PNG data");
  std::memcpy(out, s->data + s->pos, n);
  s->pos += n;
}

struct Handles {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~Handles() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

bool create(Handles& h, PngStream& s) {
  h.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, on_error, on_warning);
  if (!h.png) return false;
  h.info = png_create_info_struct(h.png);
  if (!h.info) return false;
  png_set_read_fn(h.png, &s, on_read);
  // Chunks and decompressed ancillary data are bounded (libpng's crashers set has chunks that
  // claim gigabytes); the image size is checked against max_pixels by the callers.
  // libpng reports oversized chunks as "benign" errors, which by default only warn and then
  // allocate (and zero) the whole claimed length: make them errors.
  png_set_user_limits(h.png, 0x7fffffff, 0x7fffffff);
  png_set_chunk_malloc_max(h.png, 8u << 20);
  png_set_benign_errors(h.png, 0);
  return true;
}

// Reads up to the image data. Plain function: see above.
bool read_info(Handles& h, PngInfo& out) {
  if (setjmp(png_jmpbuf(h.png))) return false;
  png_read_info(h.png, h.info);
  png_uint_32 w = 0, hgt = 0;
  int depth = 0, color = 0, interlace = 0;
  png_get_IHDR(h.png, h.info, &w, &hgt, &depth, &color, &interlace, nullptr, nullptr);
  const bool trns = png_get_valid(h.png, h.info, PNG_INFO_tRNS) != 0;
  out.width = int64_t(w);
  out.height = int64_t(hgt);
  out.bit_depth = depth;
  out.interlaced = interlace != PNG_INTERLACE_NONE;
  switch (color) {
    case PNG_COLOR_TYPE_GRAY:
      out.channels = trns ? 2 : 1;
      break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      out.channels = 2;
      break;
    case PNG_COLOR_TYPE_PALETTE:
    case PNG_COLOR_TYPE_RGB:
      out.channels = trns ? 4 : 3;
      break;
    default:
      out.channels = 4;
      break;  // RGBA
  }
  return true;
}

// Sets the transforms for `fmt` (GRAY from colour decodes to RGB; the caller converts) and
// decodes into `rows`. Plain function: see above.
bool read_image(Handles& h, ColorFormat fmt, bool keep_16, png_bytep* rows, size_t row_bytes) {
  if (setjmp(png_jmpbuf(h.png))) return false;
  png_structp png = h.png;
  const int color = png_get_color_type(png, h.info);
  const bool trns = png_get_valid(png, h.info, PNG_INFO_tRNS) != 0;
  const bool want_alpha = fmt == ColorFormat::kAnyData;
  if (keep_16)
    png_set_swap(png);  // 16-bit samples in the host's (little-endian) order
  else
    png_set_strip_16(png);  // the high byte, as PIL and stb_image
  png_set_packing(png);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY) png_set_expand_gray_1_2_4_to_8(png);
  if (trns && want_alpha) png_set_tRNS_to_alpha(png);
  const bool gray_in = (color & PNG_COLOR_MASK_COLOR) == 0;
  // Expanding a palette also turns tRNS into alpha: strip it again when none is wanted.
  if (!want_alpha && ((color & PNG_COLOR_MASK_ALPHA) || trns)) png_set_strip_alpha(png);
  if (gray_in && (fmt == ColorFormat::kRGB || fmt == ColorFormat::kBGR)) png_set_gray_to_rgb(png);
  if (fmt == ColorFormat::kBGR) png_set_bgr(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, h.info);
  // The rows were sized from the header: never let libpng write more than that.
  if (png_get_rowbytes(png, h.info) != row_bytes) png_error(png, "unexpected decoded row size");
  png_read_image(png, rows);
  png_read_end(png, nullptr);
  return true;
}

[[noreturn]] void fail(const PngStream& s, const char* what) {
  std::string_view msg = s.error[0] ? s.error : "libpng failed";
  if (msg.find("CgBI") != std::string_view::npos)
    throw ValueError(
        "Apple CgBI PNG (an iPhone-optimised variant, not standard PNG) is not "
        "supported");
  throw ValueError(detail::concat("invalid PNG ", what, ": ", msg));
}

// Deflate expands data at most 1032 times (RFC 1951: a 258-byte match costs at least 2 bits).
constexpr int64_t kDeflateMaxRatio = 1032;

void check_limits(const PngInfo& info, const PngLimits& limits, size_t size) {
  STOKER_ENFORCE(info.width > 0 && info.height > 0, ValueError, "PNG of ", info.width, "x",
                 info.height, " pixels");
  STOKER_ENFORCE(info.width * info.height <= limits.max_pixels, ValueError, "PNG of ", info.width,
                 "x", info.height, " pixels exceeds max_pixels (", limits.max_pixels, ")");
  // The scanlines need at least a filter byte and bit_depth bits per pixel each: a file too
  // small to hold them compressed is cut short (or lies), and is refused before its image is
  // allocated.
  const int64_t least = info.height * (1 + (info.width * info.bit_depth + 7) / 8);
  STOKER_ENFORCE(least <= kDeflateMaxRatio * int64_t(size) + 1024, ValueError,
                 "truncated PNG: ", size, " bytes cannot hold the ", info.width, "x", info.height,
                 " image the header declares (its scanlines need at least ", least,
                 " bytes; deflate expands at most ", kDeflateMaxRatio, " times)");
}

}  // namespace

int png_output_channels(ColorFormat fmt, const PngInfo& info) {
  return fmt == ColorFormat::kAnyData ? info.channels : color_channels(fmt);
}

namespace {

// Creates the read structs on `h` and reads up to the image data, within the limits.
PngInfo open_png(Handles& h, PngStream& s, const PngLimits& limits) {
  STOKER_ENFORCE(create(h, s), RuntimeError, "libpng: cannot create a read struct");
  PngInfo info;
  if (!read_info(h, info)) fail(s, "header");
  check_limits(info, limits, s.size);
  return info;
}

}  // namespace

PngInfo read_png_header(const uint8_t* data, size_t size, const PngLimits& limits) {
  PngStream s{data, size};
  Handles h;
  return open_png(h, s, limits);
}

void decode_png(const uint8_t* data, size_t size, ColorFormat fmt, uint8_t* out, int64_t row_stride,
                const PngLimits& limits, bool keep_16) {
  PngStream s{data, size};
  Handles h;
  const PngInfo info = open_png(h, s, limits);
  keep_16 = keep_16 && info.bit_depth == 16;
  const int64_t bytes = keep_16 ? 2 : 1;
  const bool to_gray = fmt == ColorFormat::kGray && info.channels >= 3;
  // GRAY from colour: decode RGB rows into scratch, then weigh them as PIL does.
  const int64_t decoded_channels = to_gray ? 3 : png_output_channels(fmt, info);
  std::vector<uint8_t> scratch;
  std::vector<png_bytep> rows(size_t(info.height));
  const int64_t row_bytes = info.width * decoded_channels * bytes;
  if (to_gray) scratch.resize(size_t(info.height * row_bytes));
  for (int64_t y = 0; y < info.height; ++y)
    rows[size_t(y)] = to_gray ? scratch.data() + y * row_bytes : out + y * row_stride;
  if (!read_image(h, to_gray ? ColorFormat::kRGB : fmt, keep_16, rows.data(), size_t(row_bytes)))
    fail(s, "data");
  if (!to_gray) return;
  for (int64_t y = 0; y < info.height; ++y) {
    if (keep_16)
      convert_row(reinterpret_cast<const uint16_t*>(rows[size_t(y)]), 3, ColorFormat::kGray,
                  reinterpret_cast<uint16_t*>(out + y * row_stride), info.width);
    else
      convert_row(rows[size_t(y)], 3, ColorFormat::kGray, out + y * row_stride, info.width);
  }
}

}  // namespace stoker::codecs
