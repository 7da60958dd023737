#include "stoker/codecs/jpeg/jpeg_decoder.hpp"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "stoker/core/error.hpp"

namespace stoker::codecs {
namespace {

// libjpeg reports errors through error_exit (which must not return) and warnings through
// emit_message(-1). Errors are turned into a longjmp back to the decode function, which turns
// them into C++ exceptions outside the setjmp frame (so no destructor is ever skipped).
// Warnings about the data (corrupt entropy-coded data, a segment that ends early, junk between
// segments) are counted and the decode goes on with what libjpeg-turbo outputs (PIL and
// torchvision return that image too); in strict mode they are errors. A stream without its
// end (no EOI: the file was cut short) is an error in both modes.
struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 64];
  bool strict = false;
  int warnings = 0;                     // data warnings of the current decode
  char warning[JMSG_LENGTH_MAX] = {0};  // the first of them
  bool raised_warning = false;          // the longjmp came from a warning
};

// Warnings about metadata, not pixels: never counted.
bool benign_warning(int code) {
  return code == JWRN_ADOBE_XFORM || code == JWRN_JFIF_MAJOR || code == JWRN_BOGUS_ICC;
}

void on_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  err->raised_warning = false;
  std::longjmp(err->jump, 1);
}

void on_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  cinfo->err->num_warnings++;
  if (benign_warning(cinfo->err->msg_code)) return;
  // A stream that ends before its EOI (a file cut short) is refused, as DALI, PIL and
  // torchvision refuse it; libjpeg-turbo would fill the missing rows with grey.
  if (err->strict || cinfo->err->msg_code == JWRN_JPEG_EOF) {
    (*cinfo->err->format_message)(cinfo, err->message);
    err->raised_warning = cinfo->err->msg_code != JWRN_JPEG_EOF;  // strict mode's doing
    std::longjmp(err->jump, 1);
  }
  if (err->warnings++ == 0) (*cinfo->err->format_message)(cinfo, err->warning);
}

struct ScanGuard {
  jpeg_progress_mgr pub;
  int max_scans;
};

void on_progress(j_common_ptr cinfo) {
  auto* guard = reinterpret_cast<ScanGuard*>(cinfo->progress);
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->inputctl && d->input_scan_number > guard->max_scans) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof err->message,
                  "progressive JPEG has more than %d scans (a scan bomb?)", guard->max_scans);
    std::longjmp(err->jump, 1);
  }
}

// What an error raised only because of strict mode adds to libjpeg's message.
std::string strict_note(ErrorManager& err) {
  const bool strict_only = err.raised_warning;
  err.raised_warning = false;
  return strict_only ? " (strict=True; without it the image decodes as libjpeg-turbo outputs it)"
                     : "";
}

}  // namespace

struct JpegDecoder::State {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  ScanGuard guard;
  std::vector<uint8_t> row;  // CMYK scanline scratch
  std::vector<JSAMPROW> rows;
};

JpegDecoder::JpegDecoder() : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.cinfo.err = jpeg_std_error(&s.err.pub);
  s.err.pub.error_exit = on_error_exit;
  s.err.pub.emit_message = on_emit_message;
  jpeg_create_decompress(&s.cinfo);
  s.guard.pub.progress_monitor = on_progress;
  s.cinfo.progress = &s.guard.pub;
}

JpegDecoder::~JpegDecoder() { jpeg_destroy_decompress(&state_->cinfo); }

namespace {

// Everything between setjmp and the last libjpeg call lives here, with only trivially
// destructible locals. Returns false (message in err) on a libjpeg error or warning.
bool read_header_c(jpeg_decompress_struct* cinfo, ErrorManager* err, const uint8_t* data,
                   size_t size) {
  if (setjmp(err->jump)) {
    jpeg_abort_decompress(cinfo);
    return false;
  }
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  return true;
}

void cmyk_to_output(const uint8_t* cmyk, uint8_t* out, JDIMENSION width, ColorFormat fmt) {
  for (JDIMENSION x = 0; x < width; ++x) {
    // Adobe CMYK JPEGs store inverted values, so C*K/255 gives red directly.
    int c = cmyk[4 * x], m = cmyk[4 * x + 1], y = cmyk[4 * x + 2], k = cmyk[4 * x + 3];
    int r = (c * k + 127) / 255, g = (m * k + 127) / 255, b = (y * k + 127) / 255;
    if (fmt == ColorFormat::kGray) {
      out[x] = uint8_t((19595 * r + 38470 * g + 7471 * b + 32768) >> 16);  // BT.601 luma
    } else if (fmt == ColorFormat::kBGR) {
      out[3 * x] = uint8_t(b), out[3 * x + 1] = uint8_t(g), out[3 * x + 2] = uint8_t(r);
    } else {
      out[3 * x] = uint8_t(r), out[3 * x + 1] = uint8_t(g), out[3 * x + 2] = uint8_t(b);
    }
  }
}

// Decodes rows [r.y, r.y + r.height) and columns [r.x, r.x + r.width) (the whole image when
// the region is empty): libjpeg-turbo skips the rows above (jpeg_skip_scanlines), decodes only
// the iMCU columns that cover the window (jpeg_crop_scanline) and stops after the last row.
bool decode_c(jpeg_decompress_struct* cinfo, ErrorManager* err, const uint8_t* data, size_t size,
              ColorFormat fmt, uint8_t* out, int64_t row_stride, int64_t max_pixels,
              uint8_t* scratch, JDIMENSION expect_w, JDIMENSION expect_h, JpegRegion r) {
  if (setjmp(err->jump)) {
    jpeg_abort_decompress(cinfo);
    return false;
  }
  jpeg_mem_src(cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(cinfo, TRUE);
  if (int64_t(cinfo->image_width) * int64_t(cinfo->image_height) > max_pixels ||
      cinfo->image_width != expect_w || cinfo->image_height != expect_h) {
    std::snprintf(err->message, sizeof err->message,
                  "image is %ux%u, expected %ux%u (limit %lld pixels)", cinfo->image_width,
                  cinfo->image_height, expect_w, expect_h, static_cast<long long>(max_pixels));
    jpeg_abort_decompress(cinfo);
    return false;
  }
  const bool cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
  if (cmyk) {
    cinfo->out_color_space = JCS_CMYK;
  } else {
    cinfo->out_color_space = fmt == ColorFormat::kGray  ? JCS_GRAYSCALE
                             : fmt == ColorFormat::kBGR ? JCS_EXT_BGR
                                                        : JCS_RGB;
  }
  cinfo->dct_method = JDCT_ISLOW;
  cinfo->scale_num = 1;  // DCT-domain downscaling by 1/scale (1, 2, 4 or 8)
  cinfo->scale_denom = unsigned(r.scale);
  jpeg_start_decompress(cinfo);
  const bool whole = r.width == 0;
  const JDIMENSION rows = whole ? cinfo->output_height : JDIMENSION(r.height);
  // Fancy upsampling reads the chroma sample on each side of a pixel: the decoded columns keep
  // one pixel beyond the window on both sides, so the window's pixels are those of a full
  // decode. jpeg_crop_scanline moves the start left to an iMCU boundary.
  JDIMENSION x0 = 0, cw = cinfo->output_width;
  if (!whole) {
    const int64_t lo = std::max<int64_t>(0, r.x - 1);
    const int64_t hi = std::min<int64_t>(cinfo->output_width, r.x + r.width + 1);
    x0 = JDIMENSION(lo);
    cw = JDIMENSION(hi - lo);
    if (cw < cinfo->output_width) jpeg_crop_scanline(cinfo, &x0, &cw);
    if (r.y > 0) jpeg_skip_scanlines(cinfo, JDIMENSION(r.y));
  }
  const int comps = cinfo->output_components;
  const JDIMENSION skip = whole ? 0 : JDIMENSION(r.x) - x0;  // columns before the window
  const JDIMENSION width = whole ? cinfo->output_width : JDIMENSION(r.width);
  const int out_comps = fmt == ColorFormat::kGray ? 1 : 3;
  for (JDIMENSION k = 0; k < rows; ++k) {
    uint8_t* dst = out + int64_t(k) * row_stride;
    const bool direct = !cmyk && whole;
    JSAMPROW row = direct ? dst : scratch;
    jpeg_read_scanlines(cinfo, &row, 1);
    if (direct) continue;
    const uint8_t* src = scratch + size_t(skip) * size_t(comps);
    if (cmyk)
      cmyk_to_output(src, dst, width, fmt);
    else
      std::memcpy(dst, src, size_t(width) * size_t(out_comps));
  }
  if (whole)
    jpeg_finish_decompress(cinfo);
  else
    jpeg_abort_decompress(cinfo);  // the rows below the window are never decoded
  return true;
}

}  // namespace

int JpegDecoder::warnings() const { return state_->err.warnings; }
std::string JpegDecoder::first_warning() const { return state_->err.warning; }

JpegInfo JpegDecoder::read_header(const uint8_t* data, size_t size, const JpegLimits& limits) {
  auto& s = *state_;
  s.guard.max_scans = limits.max_scans;
  s.err.strict = limits.strict;
  s.err.warnings = 0;
  s.err.warning[0] = 0;
  STOKER_ENFORCE(data != nullptr && size > 0, ValueError, "empty JPEG stream (0 bytes)");
  if (!read_header_c(&s.cinfo, &s.err, data, size)) {
    // Name the unsupported variants plainly: libjpeg's messages speak of precision and SOF types.
    const int code = s.err.pub.msg_code;
    if (code == JERR_BAD_PRECISION)
      throw ValueError(detail::concat("unsupported JPEG: ", s.cinfo.data_precision,
                                      "-bit samples (this decoder reads 8-bit JPEGs; ",
                                      s.err.message, ")"));
    if (code == JERR_SOF_UNSUPPORTED && std::strstr(s.err.message, "0xc3"))
      throw ValueError(std::string("unsupported JPEG: lossless (SOF3) coding (") + s.err.message +
                       ")");
    throw ValueError(std::string("invalid JPEG: ") + s.err.message + strict_note(s.err));
  }
  JpegInfo info{s.cinfo.image_height,           s.cinfo.image_width,      s.cinfo.num_components,
                bool(s.cinfo.progressive_mode), bool(s.cinfo.arith_code), {}};
  if (info.components == 3) {
    const auto* c = s.cinfo.comp_info;
    const bool chroma_1x1 = c[1].h_samp_factor == 1 && c[1].v_samp_factor == 1 &&
                            c[2].h_samp_factor == 1 && c[2].v_samp_factor == 1;
    const int h = c[0].h_samp_factor, v = c[0].v_samp_factor;
    info.subsampling = !chroma_1x1        ? "other"
                       : h == 1 && v == 1 ? "444"
                       : h == 2 && v == 1 ? "422"
                       : h == 2 && v == 2 ? "420"
                       : h == 1 && v == 2 ? "440"
                       : h == 4 && v == 1 ? "411"
                       : h == 4 && v == 2 ? "410"
                                          : "other";
  }
  jpeg_abort_decompress(&s.cinfo);
  STOKER_ENFORCE(info.height * info.width <= limits.max_pixels, ValueError, "JPEG of ", info.width,
                 "x", info.height, " = ", info.height * info.width, " pixels exceeds the limit of ",
                 limits.max_pixels, " pixels (raise max_pixels to allow it)");
  return info;
}

void JpegDecoder::decode(const uint8_t* data, size_t size, ColorFormat fmt, uint8_t* out,
                         int64_t row_stride, const JpegLimits& limits) {
  decode_region(data, size, fmt, {}, out, row_stride, limits);
}

void JpegDecoder::decode_region(const uint8_t* data, size_t size, ColorFormat fmt,
                                const JpegRegion& region, uint8_t* out, int64_t row_stride,
                                const JpegLimits& limits) {
  auto info = read_header(data, size, limits);
  if (fmt == ColorFormat::kAnyData)
    fmt = info.components == 1 ? ColorFormat::kGray : ColorFormat::kRGB;
  const bool whole = region.width == 0;
  STOKER_ENFORCE(region.scale == 1 || region.scale == 2 || region.scale == 4 || region.scale == 8,
                 ValueError, "JPEG DCT scaling must be 1, 2, 4 or 8, got ", region.scale);
  const int64_t sw = scaled_extent(info.width, region.scale);
  const int64_t sh = scaled_extent(info.height, region.scale);
  STOKER_ENFORCE(whole || (region.x >= 0 && region.y >= 0 && region.height > 0 &&
                           region.x + region.width <= sw && region.y + region.height <= sh),
                 ValueError, "JPEG region [", region.y, ", ", region.x, ", ", region.height, ", ",
                 region.width, "] lies outside the ", sw, "x", sh, " image");
  auto& s = *state_;
  s.row.resize(size_t(info.width) * 4);  // a scanline of any output (CMYK is 4 per pixel)
  s.err.warnings = 0;  // the decode reads the header again: count its warnings once
  s.err.warning[0] = 0;
  if (!decode_c(&s.cinfo, &s.err, data, size, fmt, out, row_stride, limits.max_pixels, s.row.data(),
                JDIMENSION(info.width), JDIMENSION(info.height), region)) {
    throw ValueError(std::string("corrupt JPEG data: ") + s.err.message + strict_note(s.err));
  }
}

}  // namespace stoker::codecs
