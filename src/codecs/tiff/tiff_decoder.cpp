#include "stoker/codecs/tiff/tiff_decoder.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_TIFF
#include <tiffio.h>
#endif

namespace stoker::codecs {

int tiff_output_channels(ColorFormat fmt, const TiffInfo& info) {
  return fmt == ColorFormat::kAnyData ? info.channels : color_channels(fmt);
}

#ifdef STOKER_HAVE_TIFF

bool tiff_available() { return true; }

namespace {

// The file in memory, read through libtiff's client procedures (mapped: strips are read in
// place).
struct Memory {
  const uint8_t* data;
  size_t size;
  uint64_t pos = 0;
};
tmsize_t read_proc(thandle_t h, void* buf, tmsize_t n) {
  auto* m = static_cast<Memory*>(h);
  const uint64_t left = m->pos < m->size ? m->size - m->pos : 0;
  const auto k = std::min<uint64_t>(uint64_t(std::max<tmsize_t>(n, 0)), left);
  if (k > 0) std::memcpy(buf, m->data + m->pos, size_t(k));
  m->pos += k;
  return tmsize_t(k);
}
tmsize_t write_proc(thandle_t, void*, tmsize_t) { return 0; }
toff_t seek_proc(thandle_t h, toff_t off, int whence) {
  auto* m = static_cast<Memory*>(h);
  const uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
  if (off > UINT64_MAX - base) return toff_t(-1);
  m->pos = base + off;
  return m->pos;
}
int close_proc(thandle_t) { return 0; }
toff_t size_proc(thandle_t h) { return static_cast<Memory*>(h)->size; }
int map_proc(thandle_t h, void** base, toff_t* size) {
  auto* m = static_cast<Memory*>(h);
  *base = const_cast<uint8_t*>(m->data);
  *size = m->size;
  return 1;
}
void unmap_proc(thandle_t, void*, toff_t) {}

// libtiff's first error message of this file (its handlers are per open, not global).
int on_error(TIFF*, void* user, const char*, const char* fmt, va_list ap) {
  auto* first = static_cast<std::string*>(user);
  if (first->empty()) {
    char buf[256];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    *first = buf;
  }
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

class Tiff {
 public:
  Tiff(const uint8_t* data, size_t size, int64_t max_pixels)
      : memory_{data, size}, opts_(TIFFOpenOptionsAlloc(), TIFFOpenOptionsFree) {
    STOKER_ENFORCE(opts_ != nullptr, RuntimeError, "libtiff: out of memory");
    TIFFOpenOptionsSetErrorHandlerExtR(opts_.get(), on_error, &error_);
    TIFFOpenOptionsSetWarningHandlerExtR(opts_.get(), on_warning, nullptr);
    // No single allocation inside libtiff beyond what an image of max_pixels needs (4 samples
    // of 16 bits), whatever sizes a corrupt file claims.
    TIFFOpenOptionsSetMaxSingleMemAlloc(
        opts_.get(),
        tmsize_t(std::max<int64_t>(max_pixels > INT64_MAX / 8 ? INT64_MAX : max_pixels * 8,
                                   int64_t(64) << 20)));
    tif_.reset(TIFFClientOpenExt("TIFF", "r", &memory_, read_proc, write_proc, seek_proc,
                                 close_proc, size_proc, map_proc, unmap_proc, opts_.get()));
    if (tif_ == nullptr) fail("header");  // the members free what was opened
  }
  TIFF* get() const { return tif_.get(); }
  [[noreturn]] void fail(const char* what) const {
    throw ValueError(
        detail::concat("invalid TIFF ", what, ": ", error_.empty() ? "libtiff failed" : error_));
  }

 private:
  Memory memory_;
  std::string error_;
  std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> opts_;
  std::unique_ptr<TIFF, void (*)(TIFF*)> tif_{nullptr, TIFFClose};
};

// How the first directory's samples are stored.
struct Layout {
  TiffInfo info;
  int samples = 1;  // per pixel in the file
  int bits = 8;     // per sample in the file (1, 2, 4 or 8 for palettes)
  bool palette = false, planar = false, tiled = false;
  // Neither 8/16-bit gray or RGB nor a palette (bilevel, min-is-white, CMYK, YCbCr without
  // JPEG, Lab...): libtiff's own conversion to 8-bit RGBA, as OpenCV (DALI's fallback) reads them.
  bool rgba = false;
  uint32_t tile_w = 0, tile_h = 0;
};

const char* photometric_name(uint16_t p) {
  switch (p) {
    case PHOTOMETRIC_MINISWHITE:
      return "min-is-white";
    case PHOTOMETRIC_SEPARATED:
      return "separated (CMYK)";
    case PHOTOMETRIC_MASK:
      return "transparency mask";
    case PHOTOMETRIC_YCBCR:
      return "YCbCr (without JPEG compression)";
    case PHOTOMETRIC_CIELAB:
    case PHOTOMETRIC_ICCLAB:
    case PHOTOMETRIC_ITULAB:
      return "Lab";
    case PHOTOMETRIC_MINISBLACK:
      return "min-is-black";
    case PHOTOMETRIC_RGB:
      return "RGB";
    case PHOTOMETRIC_PALETTE:
      return "palette";
    default:
      return "other";
  }
}

Layout layout(Tiff& t, int64_t max_pixels) {
  TIFF* tif = t.get();
  uint32_t w = 0, h = 0;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h))
    t.fail("header");
  uint16_t spp = 1, bps = 1, photometric = 0, planar = PLANARCONFIG_CONTIG,
           format = SAMPLEFORMAT_UINT, compression = COMPRESSION_NONE;
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  STOKER_ENFORCE(TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric), ValueError,
                 "invalid TIFF header: no photometric interpretation");
  Layout l;
  l.info.width = w, l.info.height = h;
  STOKER_ENFORCE(w > 0 && h > 0, ValueError, "TIFF of ", w, "x", h, " pixels");
  // 32-bit sides: their product fits 64 bits unsigned.
  STOKER_ENFORCE(uint64_t(w) * h <= uint64_t(max_pixels), ValueError, "TIFF of ", w, "x", h,
                 " pixels exceeds max_pixels (", max_pixels, ")");
  STOKER_ENFORCE(format == SAMPLEFORMAT_UINT, ValueError, "TIFF with ",
                 format == SAMPLEFORMAT_IEEEFP ? "floating-point"
                 : format == SAMPLEFORMAT_INT  ? "signed"
                                               : "untyped or complex",
                 " samples is not supported");
  if (photometric == PHOTOMETRIC_YCBCR && compression == COMPRESSION_JPEG) {
    // libjpeg converts to RGB as it decodes.
    TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    photometric = PHOTOMETRIC_RGB;
  }
  l.samples = spp, l.bits = bps;
  l.planar = planar == PLANARCONFIG_SEPARATE && spp > 1;
  const bool rgb = photometric == PHOTOMETRIC_RGB;
  if (photometric == PHOTOMETRIC_PALETTE && spp == 1 &&
      (bps == 1 || bps == 2 || bps == 4 || bps == 8)) {
    l.palette = true;
    l.info.channels = 3, l.info.bits = 16;  // the colour map's precision
  } else if ((photometric == PHOTOMETRIC_MINISBLACK || rgb) && (bps == 8 || bps == 16) &&
             (rgb ? spp == 3 || spp == 4 : spp == 1 || spp == 2)) {
    l.info.channels = spp, l.info.bits = bps;
  } else {
    char why[1024] = "";
    STOKER_ENFORCE(TIFFRGBAImageOK(tif, why), ValueError, "TIFF with photometric interpretation ",
                   photometric_name(photometric), ", ", spp, " samples of ", bps,
                   " bits is not supported: ", why);
    uint16_t extra = 0, *kinds = nullptr;
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extra, &kinds);
    l.rgba = true, l.planar = false;
    // RGBA where the file has a fourth sample (alpha, or CMYK's K: DALI's OpenCV fallback
    // gives RGBA, opaque, for ANY_DATA), else RGB.
    l.info.channels = extra > 0 || spp >= 4 ? 4 : 3, l.info.bits = 8;
  }
  l.tiled = TIFFIsTiled(tif) != 0;
  if (l.tiled) {
    if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &l.tile_w) ||
        !TIFFGetField(tif, TIFFTAG_TILELENGTH, &l.tile_h))
      t.fail("tile size");
    STOKER_ENFORCE(
        l.tile_w > 0 && l.tile_h > 0 && uint64_t(l.tile_w) * l.tile_h <= uint64_t(max_pixels),
        ValueError, "TIFF tiles of ", l.tile_w, "x", l.tile_h, " pixels: not within max_pixels (",
        max_pixels, ")");
  }
  return l;
}

// Sample k of a row of `bits`-bit samples (libtiff has swapped 16-bit ones to host order).
inline uint16_t sample(const uint8_t* row, int64_t k, int bits) {
  switch (bits) {
    case 8:
      return row[k];
    case 16: {
      uint16_t v;
      std::memcpy(&v, row + 2 * k, 2);
      return v;
    }
    default: {  // 1, 2 or 4 bits, most significant first
      const int64_t bit = k * bits;
      return uint16_t((row[bit / 8] >> (8 - bits - bit % 8)) & ((1 << bits) - 1));
    }
  }
}

// Every sample of the first page into `img` (height x width x samples, as stored), from strips
// or tiles, chunky or planar.
void read_samples(Tiff& t, const Layout& l, std::vector<uint16_t>& img) {
  TIFF* tif = t.get();
  const int64_t w = l.info.width, h = l.info.height, spp = l.samples;
  img.assign(size_t(w * h * spp), 0);
  const int planes = l.planar ? int(spp) : 1;
  const int64_t per_pixel = l.planar ? 1 : spp;  // samples per pixel in one plane's rows
  // Row r of plane s, `n` pixels of it from `from`, to image column x0.
  auto place = [&](const uint8_t* row, int64_t r, int s, int64_t x0, int64_t n) {
    uint16_t* dst = img.data() + (r * w + x0) * spp + s;
    for (int64_t x = 0; x < n; ++x)
      for (int64_t c = 0; c < per_pixel; ++c)
        dst[x * spp + c] = sample(row, x * per_pixel + c, l.bits);
  };
  if (!l.tiled) {
    std::vector<uint8_t> row(size_t(TIFFScanlineSize64(tif)));
    STOKER_ENFORCE(!row.empty(), ValueError, "invalid TIFF header: empty scanlines");
    STOKER_ENFORCE(int64_t(row.size()) * 8 >= w * per_pixel * l.bits, ValueError,
                   "invalid TIFF header: scanlines shorter than the image's width");
    for (int s = 0; s < planes; ++s)
      for (int64_t r = 0; r < h; ++r) {
        if (TIFFReadScanline(tif, row.data(), uint32_t(r), uint16_t(s)) < 0) t.fail("data");
        place(row.data(), r, s, 0, w);
      }
    return;
  }
  std::vector<uint8_t> tile(size_t(TIFFTileSize64(tif)));
  const int64_t row_bytes = TIFFTileRowSize64(tif);
  STOKER_ENFORCE(row_bytes > 0 && row_bytes * 8 >= int64_t(l.tile_w) * per_pixel * l.bits &&
                     int64_t(tile.size()) >= row_bytes * l.tile_h,
                 ValueError, "invalid TIFF header: tiles smaller than their size says");
  for (int s = 0; s < planes; ++s)
    for (int64_t y = 0; y < h; y += l.tile_h)
      for (int64_t x = 0; x < w; x += l.tile_w) {
        if (TIFFReadTile(tif, tile.data(), uint32_t(x), uint32_t(y), 0, uint16_t(s)) < 0)
          t.fail("data");
        const int64_t rows = std::min<int64_t>(l.tile_h, h - y);
        const int64_t cols = std::min<int64_t>(l.tile_w, w - x);
        for (int64_t r = 0; r < rows; ++r) place(tile.data() + r * row_bytes, y + r, s, x, cols);
      }
}

// The kinds read through libtiff's RGBA interface (Layout::rgba), 8-bit.
void decode_rgba(Tiff& t, const Layout& l, ColorFormat fmt, uint8_t* out, int64_t row_stride) {
  const int64_t w = l.info.width, h = l.info.height, c = l.info.channels;
  std::vector<uint32_t> raster(size_t(w * h));
  // The rows as stored (libtiff asked for the file's own orientation, so it turns nothing):
  // the Orientation tag is applied once, by the decoder operators (adjust_orientation).
  TIFFRGBAImage img;
  char message[1024] = {};
  if (!TIFFRGBAImageBegin(&img, t.get(), 0, message)) t.fail("data");
  img.req_orientation = img.orientation;
  const int ok = TIFFRGBAImageGet(&img, raster.data(), uint32_t(w), uint32_t(h));
  TIFFRGBAImageEnd(&img);
  if (!ok) t.fail("data");
  std::vector<uint8_t> row(size_t(w * c));
  for (int64_t r = 0; r < h; ++r) {
    const uint32_t* p = raster.data() + r * w;
    for (int64_t x = 0; x < w; ++x) {
      uint8_t* px = row.data() + x * c;
      px[0] = uint8_t(TIFFGetR(p[x])), px[1] = uint8_t(TIFFGetG(p[x])),
      px[2] = uint8_t(TIFFGetB(p[x]));
      if (c == 4) px[3] = uint8_t(TIFFGetA(p[x]));
    }
    convert_row(row.data(), c, fmt, out + r * row_stride, w);
  }
}

// 8-bit chunky gray or RGB(A) (the common case): each row or tile row converted from libtiff's
// buffer straight into `out`, without the image of 16-bit samples the general path keeps; of a
// window, only the strips and tiles it touches are decoded.
void decode_chunky8(Tiff& t, const Layout& l, ColorFormat fmt, const PixelWindow& win, uint8_t* out,
                    int64_t row_stride) {
  TIFF* tif = t.get();
  const int64_t c = l.samples, oc = tiff_output_channels(fmt, l.info);
  const int64_t y_end = win.y + win.h, x_end = win.x + win.w;
  if (!l.tiled) {
    std::vector<uint8_t> row(size_t(TIFFScanlineSize64(tif)));
    STOKER_ENFORCE(int64_t(row.size()) >= l.info.width * c, ValueError,
                   "invalid TIFF header: scanlines shorter than the image's width");
    // From the first row of the window's first strip: libtiff reads a compressed strip's rows
    // in order only.
    uint32_t rows_per_strip = 0;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    const int64_t rps = std::clamp<int64_t>(rows_per_strip, 1, l.info.height);
    for (int64_t r = win.y / rps * rps; r < y_end; ++r) {
      if (TIFFReadScanline(tif, row.data(), uint32_t(r), 0) < 0) t.fail("data");
      if (r >= win.y)
        convert_row(row.data() + win.x * c, c, fmt, out + (r - win.y) * row_stride, win.w);
    }
    return;
  }
  std::vector<uint8_t> tile(size_t(TIFFTileSize64(tif)));
  const int64_t row_bytes = TIFFTileRowSize64(tif), th = l.tile_h, tw = l.tile_w;
  STOKER_ENFORCE(row_bytes >= tw * c && int64_t(tile.size()) >= row_bytes * th, ValueError,
                 "invalid TIFF header: tiles smaller than their size says");
  for (int64_t ty = win.y / th * th; ty < y_end; ty += th)
    for (int64_t tx = win.x / tw * tw; tx < x_end; tx += tw) {
      if (TIFFReadTile(tif, tile.data(), uint32_t(tx), uint32_t(ty), 0, 0) < 0) t.fail("data");
      const int64_t y0 = std::max(ty, win.y), y1 = std::min(ty + th, y_end);
      const int64_t x0 = std::max(tx, win.x), x1 = std::min(tx + tw, x_end);
      for (int64_t y = y0; y < y1; ++y)
        convert_row(tile.data() + (y - ty) * row_bytes + (x0 - tx) * c, c, fmt,
                    out + (y - win.y) * row_stride + (x0 - win.x) * oc, x1 - x0);
    }
}

// The other kinds, whole: 16-bit, palettes and planar images through one image of 16-bit
// samples, the rest through libtiff's RGBA conversion.
void decode_whole(Tiff& t, const Layout& l, ColorFormat fmt, void* out, int64_t row_stride,
                  bool keep_16) {
  if (l.rgba) return decode_rgba(t, l, fmt, static_cast<uint8_t*>(out), row_stride);
  std::vector<uint16_t> img;
  read_samples(t, l, img);
  const int64_t w = l.info.width, c = l.info.channels;
  const int oc = tiff_output_channels(fmt, l.info);
  uint16_t *red = nullptr, *green = nullptr, *blue = nullptr;
  if (l.palette && !TIFFGetField(t.get(), TIFFTAG_COLORMAP, &red, &green, &blue))
    t.fail("colour map");
  // One row at the file's precision (palettes expanded to their 16-bit colours), converted.
  std::vector<uint16_t> in(size_t(w * c));
  RowScratch scratch;
  for (int64_t r = 0; r < l.info.height; ++r) {
    const uint16_t* src = img.data() + r * w * l.samples;
    if (l.palette) {
      for (int64_t x = 0; x < w; ++x) {
        const uint16_t k = src[x];
        in[size_t(3 * x)] = red[k], in[size_t(3 * x + 1)] = green[k],
                      in[size_t(3 * x + 2)] = blue[k];
      }
    } else {
      std::copy(src, src + w * c, in.begin());
    }
    void* row = keep_16 ? static_cast<void*>(static_cast<uint16_t*>(out) + r * row_stride)
                        : static_cast<uint8_t*>(out) + r * row_stride;
    store_row(in.data(), c, l.info.bits, fmt, w, oc, keep_16, row, scratch);
  }
}

}  // namespace

TiffInfo read_tiff_header(const uint8_t* data, size_t size, int64_t max_pixels) {
  Tiff t(data, size, max_pixels);
  return layout(t, max_pixels).info;
}

void decode_tiff(const uint8_t* data, size_t size, const TiffInfo& info, ColorFormat fmt, void* out,
                 int64_t row_stride, int64_t max_pixels, bool keep_16, const PixelWindow* window) {
  Tiff t(data, size, max_pixels);
  const Layout l = layout(t, max_pixels);
  const int64_t h = l.info.height, w = l.info.width;
  STOKER_ENFORCE(w == info.width && h == info.height, ValueError,
                 "TIFF changed between its header and its decoding");
  STOKER_ASSERT(!keep_16 || l.info.bits == 16, "decode16 of an 8-bit TIFF");
  const PixelWindow win = window ? *window : PixelWindow{0, 0, h, w};
  STOKER_ASSERT(win.y >= 0 && win.x >= 0 && win.h > 0 && win.w > 0 && win.y + win.h <= h &&
                    win.x + win.w <= w,
                "TIFF window out of the image");
  if (l.bits == 8 && !l.palette && !l.planar && !l.rgba)
    return decode_chunky8(t, l, fmt, win, static_cast<uint8_t*>(out), row_stride);
  if (window == nullptr) return decode_whole(t, l, fmt, out, row_stride, keep_16);
  // A window of the other kinds: the whole image, then its rows.
  const int64_t oc = tiff_output_channels(fmt, l.info), bytes = keep_16 ? 2 : 1;
  std::vector<uint8_t> all(size_t(h * w * oc * bytes));
  decode_whole(t, l, fmt, all.data(), w * oc, keep_16);
  for (int64_t r = 0; r < win.h; ++r)
    std::memcpy(static_cast<uint8_t*>(out) + r * row_stride * bytes,
                all.data() + ((win.y + r) * w + win.x) * oc * bytes, size_t(win.w * oc * bytes));
}

#else  // built without libtiff

bool tiff_available() { return false; }
TiffInfo read_tiff_header(const uint8_t*, size_t, int64_t) {
  throw ValueError("TIFF images are not supported: stoker was built without libtiff");
}
void decode_tiff(const uint8_t*, size_t, const TiffInfo&, ColorFormat, void*, int64_t, int64_t,
                 bool, const PixelWindow*) {
  throw ValueError("TIFF images are not supported: stoker was built without libtiff");
}

#endif

}  // namespace stoker::codecs
