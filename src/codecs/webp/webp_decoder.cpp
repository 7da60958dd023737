#include "stoker/codecs/webp/webp_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_WEBP
#include <webp/decode.h>
#include <webp/demux.h>
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_WEBP

bool webp_available() { return true; }

namespace {
const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "corrupt bitstream";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "truncated data";
    default:
      return "error";
  }
}
}  // namespace

WebpInfo read_webp_header(const uint8_t* data, size_t size, int64_t max_pixels) {
  WebPBitstreamFeatures f;
  const VP8StatusCode s = WebPGetFeatures(data, size, &f);
  STOKER_ENFORCE(s == VP8_STATUS_OK, ValueError, "invalid WebP header: ", status_text(s));
  WebpInfo info;
  info.animated = f.has_animation != 0;
  info.height = f.height, info.width = f.width;
  info.alpha = f.has_alpha != 0;
  info.lossless = f.format == 2;
  STOKER_ENFORCE(info.width > 0 && info.height > 0, ValueError, "WebP of ", info.width, "x",
                 info.height, " pixels");
  STOKER_ENFORCE(info.width * info.height <= max_pixels, ValueError, "WebP of ", info.width, "x",
                 info.height, " pixels exceeds max_pixels (", max_pixels, ")");
  return info;
}

namespace {
// An animation's first frame, as libwebpdemux composes it on the canvas (RGBA), converted.
void decode_first_frame(const uint8_t* data, size_t size, const WebpInfo& info, ColorFormat fmt,
                        uint8_t* out, int64_t row_stride) {
  WebPAnimDecoderOptions options;
  STOKER_ENFORCE(WebPAnimDecoderOptionsInit(&options), RuntimeError, "libwebp: version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData whole{data, size};
  std::unique_ptr<WebPAnimDecoder, void (*)(WebPAnimDecoder*)> dec(
      WebPAnimDecoderNew(&whole, &options), WebPAnimDecoderDelete);
  STOKER_ENFORCE(dec != nullptr, ValueError, "invalid WebP animation");
  WebPAnimInfo anim;
  STOKER_ENFORCE(WebPAnimDecoderGetInfo(dec.get(), &anim) &&
                     int64_t(anim.canvas_width) == info.width &&
                     int64_t(anim.canvas_height) == info.height,
                 ValueError, "invalid WebP animation: its canvas is not the header's size");
  uint8_t* canvas = nullptr;
  int timestamp = 0;
  STOKER_ENFORCE(WebPAnimDecoderGetNext(dec.get(), &canvas, &timestamp), ValueError,
                 "invalid WebP data: the animation's first frame does not decode");
  // ANY_DATA without alpha: RGB (the canvas always has a fourth channel).
  const ColorFormat row_fmt = fmt == ColorFormat::kAnyData && !info.alpha ? ColorFormat::kRGB : fmt;
  for (int64_t y = 0; y < info.height; ++y)
    convert_row(canvas + y * info.width * 4, 4, row_fmt, out + y * row_stride, info.width);
}
}  // namespace

void decode_webp(const uint8_t* data, size_t size, const WebpInfo& info, ColorFormat fmt,
                 uint8_t* out, int64_t row_stride, const PixelWindow* window) {
  const int64_t H = info.height, W = info.width;
  const int channels = webp_output_channels(fmt, info);
  if (info.animated) {
    if (window == nullptr) return decode_first_frame(data, size, info, fmt, out, row_stride);
    std::vector<uint8_t> all(size_t(H * W * channels));  // the frame, then the window's rows
    decode_first_frame(data, size, info, fmt, all.data(), W * channels);
    for (int64_t r = 0; r < window->h; ++r)
      std::memcpy(out + r * row_stride, all.data() + ((window->y + r) * W + window->x) * channels,
                  size_t(window->w * channels));
    return;
  }
  const PixelWindow win = window ? *window : PixelWindow{0, 0, H, W};
  // The part libwebp decodes: it starts a crop at even coordinates, and upsamples a lossy
  // image's chroma at the crop's edges as at the image's, so two more pixels on each side keep
  // the window's pixels those of the whole image. Rows below it are not decoded at all.
  PixelWindow crop = win;
  if (window) {
    const int64_t m = info.lossless ? 0 : 2;
    crop.y = std::max<int64_t>(win.y - m, 0) & ~int64_t(1);
    crop.x = std::max<int64_t>(win.x - m, 0) & ~int64_t(1);
    crop.h = std::min(win.y + win.h + m, H) - crop.y;
    crop.w = std::min(win.x + win.w + m, W) - crop.x;
  }
  const bool in_place = fmt != ColorFormat::kGray && crop.y == win.y && crop.x == win.x &&
                        crop.h == win.h && crop.w == win.w;
  WebPDecoderConfig config;
  STOKER_ENFORCE(WebPInitDecoderConfig(&config), RuntimeError, "libwebp: version mismatch");
  if (window) {
    config.options.use_cropping = 1;
    config.options.crop_left = int(crop.x), config.options.crop_top = int(crop.y);
    config.options.crop_width = int(crop.w), config.options.crop_height = int(crop.h);
  }
  // GRAY: RGB rows into scratch first, then their luma; a widened crop: its rows, then the
  // window's part of them.
  const int scratch_channels = fmt == ColorFormat::kGray ? 3 : channels;
  std::vector<uint8_t> scratch;
  auto& buf = config.output;
  buf.is_external_memory = 1;
  buf.colorspace = fmt == ColorFormat::kBGR ? MODE_BGR : channels == 4 ? MODE_RGBA : MODE_RGB;
  if (in_place) {
    buf.u.RGBA = {out, int(row_stride), size_t(row_stride * (win.h - 1) + win.w * channels)};
  } else {
    scratch.resize(size_t(crop.h * crop.w * scratch_channels));
    buf.u.RGBA = {scratch.data(), int(crop.w * scratch_channels), scratch.size()};
  }
  const VP8StatusCode s = WebPDecode(data, size, &config);
  WebPFreeDecBuffer(&buf);  // frees nothing of external memory; kept for libwebp's contract
  STOKER_ENFORCE(s == VP8_STATUS_OK, ValueError, "invalid WebP data: ", status_text(s));
  STOKER_ENFORCE(buf.width == crop.w && buf.height == crop.h, ValueError,
                 "invalid WebP data: decoded ", buf.width, "x", buf.height, " pixels, expected ",
                 crop.w, "x", crop.h);
  if (in_place) return;
  const ColorFormat row_fmt = fmt == ColorFormat::kGray ? fmt : ColorFormat::kAnyData;
  for (int64_t r = 0; r < win.h; ++r)
    convert_row(
        scratch.data() + ((win.y - crop.y + r) * crop.w + (win.x - crop.x)) * scratch_channels,
        scratch_channels, row_fmt, out + r * row_stride, win.w);
}

#else  // built without libwebp

bool webp_available() { return false; }
WebpInfo read_webp_header(const uint8_t*, size_t, int64_t) {
  throw ValueError("WebP images are not supported: stoker was built without libwebp");
}
void decode_webp(const uint8_t*, size_t, const WebpInfo&, ColorFormat, uint8_t*, int64_t,
                 const PixelWindow*) {
  throw ValueError("WebP images are not supported: stoker was built without libwebp");
}

#endif

int webp_output_channels(ColorFormat fmt, const WebpInfo& info) {
  if (fmt == ColorFormat::kAnyData) return info.alpha ? 4 : 3;
  return color_channels(fmt);
}

}  // namespace stoker::codecs
