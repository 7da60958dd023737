#include "stoker/codecs/decoder.hpp"

#include <cstring>
#include <vector>

#include "stoker/codecs/bmp/bmp_decoder.hpp"
#include "stoker/codecs/exif.hpp"
#include "stoker/codecs/jpeg/jpeg_decoder.hpp"
#include "stoker/codecs/jpeg2000/jpeg2000_decoder.hpp"
#include "stoker/codecs/png/png_decoder.hpp"
#include "stoker/codecs/pnm/pnm_decoder.hpp"
#include "stoker/codecs/tiff/tiff_decoder.hpp"
#include "stoker/codecs/webp/webp_decoder.hpp"
#include "stoker/core/error.hpp"

namespace stoker::codecs {

struct Decoder::State {
  JpegDecoder jpeg;
  std::string warning;         // of the last decode
  std::vector<uint8_t> whole;  // a full decode, for windows of formats that cannot decode one
};

Decoder::Decoder() : state_(std::make_unique<State>()) {}
Decoder::~Decoder() = default;

const std::string& Decoder::warning() const { return state_->warning; }

namespace {
JpegLimits jpeg_limits(const DecodeLimits& l) {
  JpegLimits j;
  j.max_pixels = l.max_pixels;
  j.strict = l.strict;
  return j;
}
}  // namespace

ImageInfo Decoder::info(const uint8_t* data, size_t size, ColorFormat fmt,
                        const DecodeLimits& limits) {
  STOKER_ENFORCE(data != nullptr && size > 0, ValueError, "empty input (0 bytes), not an image");
  ImageInfo out;
  out.format = detect_format(data, size);
  switch (out.format) {
    case ImageFormat::kJpeg: {
      auto h = state_->jpeg.read_header(data, size, jpeg_limits(limits));
      out.height = h.height, out.width = h.width, out.channels = jpeg_output_channels(fmt, h);
      out.orientation = jpeg_exif_orientation(data, size);
      out.jpeg_baseline_huffman = !h.progressive && !h.arithmetic;
      out.jpeg_arithmetic = h.arithmetic;
      out.jpeg_components = h.components;
      out.jpeg_subsampling = std::move(h.subsampling);
      return out;
    }
    case ImageFormat::kPng: {
      auto h = read_png_header(data, size, {limits.max_pixels});
      out.height = h.height, out.width = h.width, out.channels = png_output_channels(fmt, h);
      out.bit_depth = h.bit_depth == 16 ? 16 : 8;
      out.orientation = png_exif_orientation(data, size);
      return out;
    }
    case ImageFormat::kBmp: {
      auto h = read_bmp_header(data, size, limits.max_pixels);
      out.height = h.height, out.width = h.width, out.channels = bmp_output_channels(fmt, h);
      return out;
    }
    case ImageFormat::kPnm: {
      auto h = read_pnm_header(data, size, limits.max_pixels);
      out.height = h.height, out.width = h.width, out.channels = pnm_output_channels(fmt, h);
      return out;
    }
    case ImageFormat::kWebp: {
      auto h = read_webp_header(data, size, limits.max_pixels);
      out.height = h.height, out.width = h.width, out.channels = webp_output_channels(fmt, h);
      out.orientation = webp_exif_orientation(data, size);
      return out;
    }
    case ImageFormat::kTiff: {
      auto h = read_tiff_header(data, size, limits.max_pixels);
      out.height = h.height, out.width = h.width, out.channels = tiff_output_channels(fmt, h);
      out.stored_channels = h.channels;
      out.bit_depth = h.bits;
      out.orientation = tiff_file_orientation(data, size);
      return out;
    }
    case ImageFormat::kJpeg2000: {
      auto h = read_jpeg2000_header(data, size, limits.max_pixels);
      out.height = h.height, out.width = h.width, out.channels = jpeg2000_output_channels(fmt, h);
      out.stored_channels = h.channels;
      out.bit_depth = h.bits;
      return out;
    }
    case ImageFormat::kUnknown:
      throw ValueError(detail::concat(
          "not a recognised image format (first bytes: ", leading_bytes_hex(data, size), ")"));
    default:
      throw ValueError(detail::concat(
          format_name(out.format), " images are not supported (supported: JPEG, PNG, BMP, PNM",
          webp_available() ? ", WebP" : "", tiff_available() ? ", TIFF" : "",
          jpeg2000_available() ? ", JPEG 2000)" : ")"));
  }
}

void Decoder::decode(const uint8_t* data, size_t size, ColorFormat fmt, const ImageInfo& info,
                     uint8_t* out, int64_t row_stride, const DecodeLimits& limits) {
  state_->warning.clear();
  switch (info.format) {
    case ImageFormat::kJpeg:
      state_->jpeg.decode(data, size, fmt, out, row_stride, jpeg_limits(limits));
      if (state_->jpeg.warnings() > 0) state_->warning = state_->jpeg.first_warning();
      return;
    case ImageFormat::kPng:
      decode_png(data, size, fmt, out, row_stride, {limits.max_pixels});
      return;
    case ImageFormat::kBmp:
      decode_bmp(data, size, read_bmp_header(data, size, limits.max_pixels), fmt, out, row_stride);
      return;
    case ImageFormat::kPnm:
      decode_pnm(data, size, read_pnm_header(data, size, limits.max_pixels), fmt, out, row_stride);
      return;
    case ImageFormat::kWebp:
      decode_webp(data, size, read_webp_header(data, size, limits.max_pixels), fmt, out,
                  row_stride);
      return;
    case ImageFormat::kTiff:
      decode_tiff(data, size, read_tiff_header(data, size, limits.max_pixels), fmt, out, row_stride,
                  limits.max_pixels);
      return;
    case ImageFormat::kJpeg2000:
      decode_jpeg2000(data, size, read_jpeg2000_header(data, size, limits.max_pixels), fmt, out,
                      row_stride, limits.max_pixels);
      return;
    default:
      STOKER_ASSERT(false, "decode() called for ", format_name(info.format));
  }
}

void Decoder::decode16(const uint8_t* data, size_t size, ColorFormat fmt, const ImageInfo& info,
                       uint16_t* out, int64_t row_stride, const DecodeLimits& limits) {
  STOKER_ASSERT((info.format == ImageFormat::kPng || info.format == ImageFormat::kTiff ||
                 info.format == ImageFormat::kJpeg2000) &&
                    info.bit_depth == 16,
                "decode16() called for an 8-bit ", format_name(info.format));
  state_->warning.clear();
  if (info.format == ImageFormat::kJpeg2000) {
    decode_jpeg2000(data, size, read_jpeg2000_header(data, size, limits.max_pixels), fmt, out,
                    row_stride, limits.max_pixels, /*keep_16=*/true);
    return;
  }
  if (info.format == ImageFormat::kTiff) {
    decode_tiff(data, size, read_tiff_header(data, size, limits.max_pixels), fmt, out, row_stride,
                limits.max_pixels, /*keep_16=*/true);
    return;
  }
  decode_png(data, size, fmt, reinterpret_cast<uint8_t*>(out), row_stride * 2, {limits.max_pixels},
             /*keep_16=*/true);
}

void Decoder::decode_region(const uint8_t* data, size_t size, ColorFormat fmt,
                            const ImageInfo& info, int64_t y, int64_t x, int64_t h, int64_t w,
                            uint8_t* out, int64_t row_stride, const DecodeLimits& limits,
                            int scale) {
  const int64_t sh = scaled_extent(info.height, scale), sw = scaled_extent(info.width, scale);
  STOKER_ENFORCE(y >= 0 && x >= 0 && h > 0 && w > 0 && y + h <= sh && x + w <= sw, ValueError,
                 "window (y ", y, ", x ", x, ", ", h, "x", w, ") lies outside the ", sh, "x", sw,
                 " image");
  if (info.format == ImageFormat::kJpeg) {
    JpegRegion r{y, x, h, w, scale};
    state_->warning.clear();
    state_->jpeg.decode_region(data, size, fmt, r, out, row_stride, jpeg_limits(limits));
    if (state_->jpeg.warnings() > 0) state_->warning = state_->jpeg.first_warning();
    return;
  }
  STOKER_ENFORCE(scale == 1, ValueError, "DCT-domain downscaling is for JPEG only, not ",
                 format_name(info.format));
  const PixelWindow window{y, x, h, w};
  switch (info.format) {          // the formats whose decoders decode a window on their own
    case ImageFormat::kJpeg2000:  // the code-blocks under it
      return decode_jpeg2000(data, size, read_jpeg2000_header(data, size, limits.max_pixels), fmt,
                             out, row_stride, limits.max_pixels, /*keep_16=*/false, &window);
    case ImageFormat::kTiff:  // the strips or tiles under it
      return decode_tiff(data, size, read_tiff_header(data, size, limits.max_pixels), fmt, out,
                         row_stride, limits.max_pixels, /*keep_16=*/false, &window);
    case ImageFormat::kWebp:  // down to its last macroblock row
      return decode_webp(data, size, read_webp_header(data, size, limits.max_pixels), fmt, out,
                         row_stride, &window);
    default:
      break;
  }
  const int64_t row = info.width * info.channels;
  auto& whole = state_->whole;
  whole.resize(size_t(row * info.height));
  decode(data, size, fmt, info, whole.data(), row, limits);
  for (int64_t r = 0; r < h; ++r)
    std::memcpy(out + r * row_stride, whole.data() + (y + r) * row + x * info.channels,
                size_t(w * info.channels));
}

}  // namespace stoker::codecs
