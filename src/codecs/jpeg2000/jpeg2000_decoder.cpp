#include "stoker/codecs/jpeg2000/jpeg2000_decoder.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "stoker/codecs/pixel_convert.hpp"
#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_JPEG2000
#include <openjpeg.h>
#endif

namespace stoker::codecs {

int jpeg2000_output_channels(ColorFormat fmt, const Jpeg2000Info& info) {
  if (fmt == ColorFormat::kAnyData) return info.channels;
  return color_channels(fmt);
}

#ifdef STOKER_HAVE_JPEG2000

bool jpeg2000_available() { return true; }

namespace {

// OpenJPEG reads through callbacks: these serve it the encoded bytes from memory.
struct Source {
  const uint8_t* data;
  size_t size, at = 0;
};
OPJ_SIZE_T read_bytes(void* buf, OPJ_SIZE_T n, void* user) {
  auto& s = *static_cast<Source*>(user);
  if (s.at >= s.size) return OPJ_SIZE_T(-1);  // the end, as OpenJPEG expects it
  n = std::min<OPJ_SIZE_T>(n, s.size - s.at);
  std::memcpy(buf, s.data + s.at, n);
  s.at += n;
  return n;
}
OPJ_OFF_T skip_bytes(OPJ_OFF_T n, void* user) {
  auto& s = *static_cast<Source*>(user);
  if (n < 0)
    n = -std::min<OPJ_OFF_T>(-n, OPJ_OFF_T(s.at));
  else
    n = std::min<OPJ_OFF_T>(n, OPJ_OFF_T(s.size - s.at));
  s.at = size_t(OPJ_OFF_T(s.at) + n);
  return n;
}
OPJ_BOOL seek_bytes(OPJ_OFF_T to, void* user) {
  auto& s = *static_cast<Source*>(user);
  if (to < 0 || uint64_t(to) > s.size) return OPJ_FALSE;
  s.at = size_t(to);
  return OPJ_TRUE;
}

void keep_error(const char* msg, void* client) {
  auto& first = *static_cast<std::string*>(client);
  if (!first.empty()) return;
  first = msg;
  while (!first.empty() && (first.back() == '\n' || first.back() == ' ')) first.pop_back();
}
void ignore(const char*, void*) {}

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

// Where the codestream starts: at 0 for a raw J2K one, in the top-level 'jp2c' box of a JP2
// file; `size` where there is none (OpenJPEG then says what is wrong).
size_t codestream_at(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == 0xff && data[1] == 0x4f) return 0;
  size_t at = 0;
  while (at + 8 <= size) {
    uint64_t length = be32(data + at);
    size_t header = 8;
    if (length == 1) {  // a 64-bit length follows the type
      if (at + 16 > size) break;
      length = uint64_t(be32(data + at + 8)) << 32 | be32(data + at + 12), header = 16;
    }
    if (std::memcmp(data + at + 4, "jp2c", 4) == 0) return at + header;
    if (length == 0 || length < header || length > size - at) break;  // 0: up to the end
    at += size_t(length);
  }
  return size;
}

// The checks OpenJPEG's header reading comes too late for: it allocates per tile and per
// component as the SIZ segment declares them, before any bound of ours could apply (a
// 100-byte stream can declare 65,536 tiles: hundreds of MB of coding parameters). So the image
// area, the components and the tile count are read here first; a tile may be as small as 16 x
// 16 pixels on average (the count may reach area / 256, or 64 for small images).
void check_size_segment(const uint8_t* data, size_t size, int64_t max_pixels) {
  const size_t at = codestream_at(data, size);
  // SOC, SIZ marker and length, Rsiz, then the eight 32-bit fields and Csiz.
  // The SIZ segment must follow SOC (OpenJPEG would skip unknown markers to find it, after
  // which nothing here would have bounded its allocations): anything else is refused.
  STOKER_ENFORCE(at < size, ValueError, "invalid JPEG 2000 file: no codestream (jp2c) box");
  STOKER_ENFORCE(size - at >= 4 + 4 + 32 + 2, ValueError,
                 "invalid JPEG 2000 header: truncated before the end of its SIZ segment");
  const uint8_t* siz = data + at;
  STOKER_ENFORCE(siz[0] == 0xff && siz[1] == 0x4f && siz[2] == 0xff && siz[3] == 0x51, ValueError,
                 "invalid JPEG 2000 header: the codestream does not start with SOC and SIZ");
  const uint8_t* f = siz + 8;
  const int64_t xsiz = be32(f), ysiz = be32(f + 4), xo = be32(f + 8), yo = be32(f + 12);
  const int64_t tw = be32(f + 16), th = be32(f + 20), txo = be32(f + 24), tyo = be32(f + 28);
  const int comps = int(siz[40]) << 8 | siz[41];
  const int64_t w = xsiz - xo, h = ysiz - yo;
  if (w <= 0 || h <= 0 || tw <= 0 || th <= 0 || txo > xo || tyo > yo) return;  // OpenJPEG says
  // Each extent is below 2^32: their product is compared by division, without overflow.
  STOKER_ENFORCE(w <= max_pixels / h, ValueError, "JPEG 2000 of ", w, "x", h,
                 " pixels exceeds max_pixels (", max_pixels, ")");
  STOKER_ENFORCE(comps >= 1 && comps <= 4, ValueError, "JPEG 2000 with ", comps,
                 " components is not supported (1 to 4)");
  const int64_t across = (xsiz - txo + tw - 1) / tw, down = (ysiz - tyo + th - 1) / th;
  const int64_t most = std::max<int64_t>(64, w * h / 256);
  STOKER_ENFORCE(across <= most / down, ValueError, "JPEG 2000 of ", w, "x", h, " pixels in ",
                 across, "x", down, " tiles of ", tw, "x", th,
                 " is not supported (tiles of 256 pixels on average at the least)");
}

// One image being read: the stream, the codec and the image header, freed together.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, int64_t max_pixels) : source_{data, size} {
    check_size_segment(data, size, max_pixels);
    const bool jp2 = size >= 12 && std::memcmp(data, "\x00\x00\x00\x0cjP  ", 8) == 0;
    codec_.reset(opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
    STOKER_ENFORCE(codec_ != nullptr, RuntimeError, "OpenJPEG: no decompressor");
    opj_set_error_handler(codec_.get(), keep_error, &error_);
    opj_set_warning_handler(codec_.get(), ignore, nullptr);
    opj_set_info_handler(codec_.get(), ignore, nullptr);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    STOKER_ENFORCE(opj_setup_decoder(codec_.get(), &params), RuntimeError,
                   "OpenJPEG: setting up the decoder failed");
    stream_.reset(opj_stream_create(64 << 10, OPJ_TRUE));
    STOKER_ENFORCE(stream_ != nullptr, RuntimeError, "OpenJPEG: no stream");
    opj_stream_set_read_function(stream_.get(), read_bytes);
    opj_stream_set_skip_function(stream_.get(), skip_bytes);
    opj_stream_set_seek_function(stream_.get(), seek_bytes);
    opj_stream_set_user_data(stream_.get(), &source_, nullptr);
    opj_stream_set_user_data_length(stream_.get(), size);
    opj_image_t* image = nullptr;
    const bool ok = opj_read_header(stream_.get(), codec_.get(), &image);
    image_.reset(image);
    if (!ok || !image_) fail("header");
    info_ = check(*image_, max_pixels);
    x0_ = image_->x0, y0_ = image_->y0;
  }

  const Jpeg2000Info& info() const { return info_; }
  // The image's origin on the canvas as the header gives it (a window's decode moves the
  // image's own x0, y0 to the window's).
  int64_t x0() const { return x0_; }
  int64_t y0() const { return y0_; }
  const opj_image_t& image() const { return *image_; }

  // Decodes the window (in image coordinates) or the whole image.
  void decode(const PixelWindow* w) {
    if (w) {
      const auto x0 = OPJ_INT32(x0_ + w->x), y0 = OPJ_INT32(y0_ + w->y);
      if (!opj_set_decode_area(codec_.get(), image_.get(), x0, y0, x0 + OPJ_INT32(w->w),
                               y0 + OPJ_INT32(w->h)))
        fail("window");
    }
    if (!opj_decode(codec_.get(), stream_.get(), image_.get()) ||
        !opj_end_decompress(codec_.get(), stream_.get()))
      fail("data");
    // OpenJPEG applies a JP2 palette (pclr) inside opj_decode, replacing the components the
    // header described: what the header checks said must still hold before anything is read.
    STOKER_ENFORCE(int(image_->numcomps) == info_.channels, ValueError,
                   "JPEG 2000 with a palette (its components change in decoding) is not "
                   "supported");
    for (OPJ_UINT32 c = 0; c < image_->numcomps; ++c) {
      const auto& k = image_->comps[c];
      if (!k.data || k.w == 0 || k.h == 0 || k.dx < 1 || k.dy < 1 || k.sgnd || k.prec < 1 ||
          k.prec > 16 || (info_.bits == 8 && k.prec > 8))
        fail("data");
    }
  }

  [[noreturn]] void fail(const char* what) const {
    throw ValueError(
        detail::concat("invalid JPEG 2000 ", what, error_.empty() ? std::string() : ": " + error_));
  }

 private:
  static Jpeg2000Info check(const opj_image_t& im, int64_t max_pixels) {
    Jpeg2000Info info;
    info.width = int64_t(im.x1) - int64_t(im.x0), info.height = int64_t(im.y1) - int64_t(im.y0);
    STOKER_ENFORCE(info.width > 0 && info.height > 0, ValueError,
                   "invalid JPEG 2000 header: ", info.width, "x", info.height, " pixels");
    STOKER_ENFORCE(info.width <= max_pixels / info.height, ValueError, "JPEG 2000 of ", info.width,
                   "x", info.height, " pixels exceeds max_pixels (", max_pixels, ")");
    STOKER_ENFORCE(im.numcomps >= 1 && im.numcomps <= 4, ValueError, "JPEG 2000 with ", im.numcomps,
                   " components is not supported (1 to 4)");
    STOKER_ENFORCE(im.color_space != OPJ_CLRSPC_CMYK && im.color_space != OPJ_CLRSPC_EYCC,
                   ValueError, "JPEG 2000 in the ",
                   im.color_space == OPJ_CLRSPC_CMYK ? "CMYK" : "e-YCC",
                   " colour space is not supported");
    int prec = 0;
    for (OPJ_UINT32 c = 0; c < im.numcomps; ++c) {
      const auto& k = im.comps[c];
      STOKER_ENFORCE(!k.sgnd, ValueError, "JPEG 2000 with signed samples is not supported");
      STOKER_ENFORCE(k.prec >= 1 && k.prec <= 16, ValueError, "JPEG 2000 with ", k.prec,
                     "-bit samples is not supported (1 to 16)");
      STOKER_ENFORCE(k.dx >= 1 && k.dy >= 1, ValueError, "invalid JPEG 2000 header: subsampling");
      prec = std::max(prec, int(k.prec));
    }
    info.channels = int(im.numcomps);
    info.bits = prec > 8 ? 16 : 8;
    return info;
  }

  struct CodecFree {
    void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
  };
  struct StreamFree {
    void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
  };
  struct ImageFree {
    void operator()(opj_image_t* i) const { opj_image_destroy(i); }
  };
  Source source_;
  std::string error_;  // OpenJPEG's first error message
  std::unique_ptr<opj_codec_t, CodecFree> codec_;
  std::unique_ptr<opj_stream_t, StreamFree> stream_;
  std::unique_ptr<opj_image_t, ImageFree> image_;
  Jpeg2000Info info_;
  int64_t x0_ = 0, y0_ = 0;
};

// Three components holding luma and chroma: sYCC by the file's word, or (as OpenJPEG's own
// opj_decompress reads them) unspecified with subsampled chroma.
bool is_sycc(const opj_image_t& im) {
  if (im.numcomps != 3) return false;
  if (im.color_space == OPJ_CLRSPC_SYCC) return true;
  const bool unspecified =
      im.color_space == OPJ_CLRSPC_UNSPECIFIED || im.color_space == OPJ_CLRSPC_UNKNOWN;
  return unspecified && im.comps[0].dx == 1 && im.comps[0].dy == 1 &&
         (im.comps[1].dx > 1 || im.comps[1].dy > 1);
}

// sYCC to RGB at precision `prec` (opj_decompress's coefficients).
void sycc_to_rgb(uint16_t* px, int prec) {
  const int offset = 1 << (prec - 1), top = (1 << prec) - 1;
  const int y = px[0], cb = int(px[1]) - offset, cr = int(px[2]) - offset;
  const int r = y + int(1.402f * float(cr));
  const int g = y - int(0.344f * float(cb) + 0.714f * float(cr));
  const int b = y + int(1.772f * float(cb));
  px[0] = uint16_t(std::clamp(r, 0, top)), px[1] = uint16_t(std::clamp(g, 0, top));
  px[2] = uint16_t(std::clamp(b, 0, top));
}

}  // namespace

Jpeg2000Info read_jpeg2000_header(const uint8_t* data, size_t size, int64_t max_pixels) {
  return Reader(data, size, max_pixels).info();
}

void decode_jpeg2000(const uint8_t* data, size_t size, const Jpeg2000Info& info, ColorFormat fmt,
                     void* out, int64_t row_stride, int64_t max_pixels, bool keep_16,
                     const PixelWindow* window) {
  Reader reader(data, size, max_pixels);
  const Jpeg2000Info& got = reader.info();
  STOKER_ENFORCE(got.width == info.width && got.height == info.height && got.bits == info.bits &&
                     got.channels == info.channels,
                 ValueError, "JPEG 2000 changed between its header and its decoding");
  STOKER_ASSERT(!keep_16 || info.bits == 16, "decode16 of an 8-bit JPEG 2000");
  PixelWindow whole{0, 0, info.height, info.width};
  const PixelWindow& w = window ? *window : whole;
  STOKER_ASSERT(w.y >= 0 && w.x >= 0 && w.h > 0 && w.w > 0 && w.y + w.h <= info.height &&
                    w.x + w.w <= info.width,
                "JPEG 2000 window out of the image");
  reader.decode(window ? &w : nullptr);
  const opj_image_t& im = reader.image();
  const int c = info.channels, oc = jpeg2000_output_channels(fmt, info);
  const bool sycc = is_sycc(im);
  // Each component's samples of row y from column `base` on, when no component is subsampled
  // (the common case): one clamp per sample into 8 bits, converted straight into `out`.
  const bool direct = info.bits == 8 && !keep_16 && !sycc && [&] {
    for (int k = 0; k < c; ++k) {
      const auto& comp = im.comps[k];
      const int64_t x0 = reader.x0() + w.x - int64_t(comp.x0), y0 = reader.y0() + w.y;
      if (comp.dx != 1 || comp.dy != 1 || x0 < 0 || x0 + w.w > int64_t(comp.w) ||
          y0 < int64_t(comp.y0) || y0 + w.h > int64_t(comp.y0) + int64_t(comp.h))
        return false;
    }
    return true;
  }();
  if (direct) {
    std::vector<uint8_t> in(size_t(w.w * c));
    for (int64_t y = 0; y < w.h; ++y) {
      for (int k = 0; k < c; ++k) {
        const auto& comp = im.comps[k];
        const int64_t row = reader.y0() + w.y + y - int64_t(comp.y0);
        const OPJ_INT32* src =
            comp.data + row * int64_t(comp.w) + (reader.x0() + w.x - int64_t(comp.x0));
        const int top = (1 << comp.prec) - 1;
        uint8_t* dst = in.data() + k;
        for (int64_t x = 0; x < w.w; ++x) dst[x * c] = uint8_t(std::clamp(src[x], 0, top));
      }
      convert_row(in.data(), c, fmt, static_cast<uint8_t*>(out) + y * row_stride, w.w);
    }
    return;
  }
  // Each output pixel's sample in each component (components may be subsampled: the
  // sample covering the pixel, clamped to what was decoded).
  std::vector<std::vector<int64_t>> columns(static_cast<size_t>(c));
  for (int k = 0; k < c; ++k) {
    const auto& comp = im.comps[k];
    auto& col = columns[size_t(k)];
    col.resize(size_t(w.w));
    for (int64_t x = 0; x < w.w; ++x) {
      const int64_t at = (reader.x0() + w.x + x) / comp.dx - int64_t(comp.x0);
      col[size_t(x)] = std::clamp<int64_t>(at, 0, int64_t(comp.w) - 1);
    }
  }
  std::vector<uint16_t> in(size_t(w.w * c));
  RowScratch scratch;
  for (int64_t y = 0; y < w.h; ++y) {
    for (int k = 0; k < c; ++k) {
      const auto& comp = im.comps[k];
      const int64_t row = std::clamp<int64_t>((reader.y0() + w.y + y) / comp.dy - int64_t(comp.y0),
                                              0, int64_t(comp.h) - 1);
      const OPJ_INT32* src = comp.data + row * int64_t(comp.w);
      const int top = (1 << comp.prec) - 1;
      for (int64_t x = 0; x < w.w; ++x)
        in[size_t(x * c + k)] = uint16_t(std::clamp(src[columns[size_t(k)][size_t(x)]], 0, top));
    }
    if (sycc)
      for (int64_t x = 0; x < w.w; ++x) sycc_to_rgb(in.data() + x * c, int(im.comps[0].prec));
    void* row = keep_16 ? static_cast<void*>(static_cast<uint16_t*>(out) + y * row_stride)
                        : static_cast<uint8_t*>(out) + y * row_stride;
    store_row(in.data(), c, info.bits, fmt, w.w, oc, keep_16, row, scratch);
  }
}

#else  // built without OpenJPEG

bool jpeg2000_available() { return false; }
Jpeg2000Info read_jpeg2000_header(const uint8_t*, size_t, int64_t) {
  throw ValueError("JPEG 2000 images are not supported: stoker was built without OpenJPEG");
}
void decode_jpeg2000(const uint8_t*, size_t, const Jpeg2000Info&, ColorFormat, void*, int64_t,
                     int64_t, bool, const PixelWindow*) {
  throw ValueError("JPEG 2000 images are not supported: stoker was built without OpenJPEG");
}

#endif

}  // namespace stoker::codecs
