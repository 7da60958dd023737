#include "stoker/readers/fits.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <mutex>
#include <optional>
#include <string_view>

#include "stoker/core/error.hpp"
#include "stoker/core/shape.hpp"
#include "stoker/readers/fits_header.hpp"
#include "stoker/readers/fits_tiles.hpp"
#include "stoker/readers/tfrecord.hpp"

#ifdef STOKER_HAVE_CFITSIO
#include <fitsio.h>
#endif

namespace stoker::readers {

size_t FitsImage::bytes() const {
  size_t n = dtype_size(dtype);
  for (auto d : shape) n *= size_t(d);
  return n;
}

#ifdef STOKER_HAVE_CFITSIO

namespace {

constexpr size_t kFitsBlock = 2880;

// cfitsio built without --enable-reentrant keeps global state unguarded: calls into it are
// then serialised (Debian's is reentrant; fits_is_reentrant() tells).
class CfitsioLock {
 public:
  CfitsioLock() : lock_(mutex(), std::defer_lock) {
    if (!fits_is_reentrant()) lock_.lock();
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::unique_lock<std::mutex> lock_;
};

std::string status_text(int status) {
  char text[FLEN_STATUS] = {};
  fits_get_errstatus(status, text);
  return text;
}

std::optional<DType> dtype_of(int equivalent_type) {
  switch (equivalent_type) {
    case BYTE_IMG:
      return DType::kU8;
    case SBYTE_IMG:
      return DType::kI8;
    case SHORT_IMG:
      return DType::kI16;
    case USHORT_IMG:
      return DType::kU16;
    case LONG_IMG:
      return DType::kI32;
    case ULONG_IMG:
      return DType::kU32;
    case LONGLONG_IMG:
      return DType::kI64;
    case ULONGLONG_IMG:
      return DType::kU64;
    case FLOAT_IMG:
      return DType::kF32;
    case DOUBLE_IMG:
      return DType::kF64;
    default:
      return std::nullopt;
  }
}

int datatype_code(DType d) {
  switch (d) {
    case DType::kU8:
      return TBYTE;
    case DType::kI8:
      return TSBYTE;
    case DType::kI16:
      return TSHORT;
    case DType::kU16:
      return TUSHORT;
    case DType::kI32:
      return TINT;
    case DType::kU32:
      return TUINT;
    case DType::kI64:
      return TLONGLONG;
    case DType::kU64:
      return TULONGLONG;
    case DType::kF32:
      return TFLOAT;
    case DType::kF64:
      return TDOUBLE;
    default:
      STOKER_ASSERT(false, "no cfitsio type for ", dtype_name(d));
  }
  return 0;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (auto d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

// The bytes of `count` elements of a variable-length column of type `code` (cfitsio's).
double element_bytes(int code, double count) {
  switch (code) {
    case TBIT:
      return std::ceil(count / 8);
    case TSHORT:
    case TUSHORT:
      return 2 * count;
    case TLONG:
    case TULONG:
    case TFLOAT:
      return 4 * count;
    case TLONGLONG:
    case TDOUBLE:
    case TCOMPLEX:
      return 8 * count;
    case TDBLCOMPLEX:
      return 16 * count;
    default:  // bytes, logicals, characters
      return count;
  }
}

// How a compressed image's tiles are coded, for the checks of their bytes (fits_tiles.hpp).
struct TileCoding {
  enum Kind { kOther, kRice, kPlio } kind = kOther;
  std::string method;  // ZCMPTYPE
  int blocksize = 0, bytepix = 4;
  std::vector<int64_t> naxes, tile;  // ZNAXISn, ZTILEn (NAXIS1 first)
};

// cfitsio's reading of the same keywords (imcomp_get_compressed_image_par), which has already
// succeeded when this runs. HCOMPRESS_1 is refused: cfitsio's decoder reads a tile's bytes
// with no bound at all.
TileCoding tile_coding(fitsfile* f, const std::string& path, int hdu, const FitsImage& img) {
  TileCoding t;
  char text[FLEN_VALUE] = {};
  int status = 0;
  fits_read_key(f, TSTRING, "ZCMPTYPE", text, nullptr, &status);
  t.method = text;
  STOKER_ENFORCE(t.method != "HCOMPRESS_1", ValueError, path, ": HDU ", hdu,
                 " is compressed with HCOMPRESS_1, which stoker does not decode: cfitsio's "
                 "HCOMPRESS decoder reads past a tile's bytes when they are corrupt (RICE_1, "
                 "GZIP_1, GZIP_2 and PLIO_1 are read)");
  STOKER_ENFORCE(t.method == "RICE_1" || t.method == "RICE_ONE" || t.method == "GZIP_1" ||
                     t.method == "GZIP_2" || t.method == "PLIO_1",
                 ValueError, path, ": HDU ", hdu, " is compressed with '", t.method,
                 "', which stoker does not decode (RICE_1, GZIP_1, GZIP_2 and PLIO_1 are read)");
  if (t.method == "RICE_1" || t.method == "RICE_ONE") {
    t.kind = TileCoding::kRice;
    fits_read_key(f, TINT, "ZVAL1", &t.blocksize, nullptr, &status);
    int other = 0;
    const bool noisebit = fits_read_key(f, TSTRING, "ZNAME2", text, nullptr, &other) == 0 &&
                          std::string_view(text) == "NOISEBIT";  // before ZVAL2 meant bytepix
    other = 0;
    if (noisebit || fits_read_key(f, TINT, "ZVAL2", &t.bytepix, nullptr, &other) != 0)
      t.bytepix = 4;
    if (t.blocksize < 16 && t.bytepix > 8) std::swap(t.blocksize, t.bytepix);  // as cfitsio
    // (FitsHeaderWalk checked that it is in [1, 65536].)
  } else if (t.method == "PLIO_1") {
    t.kind = TileCoding::kPlio;
  }
  // ZTILE1 defaults to the image's width, the others to 1 (FitsHeaderWalk checked that they
  // are positive).
  for (size_t i = 1; i <= img.shape.size(); ++i) {
    t.naxes.push_back(img.shape[img.shape.size() - i]);
    LONGLONG extent = i == 1 ? t.naxes[0] : 1;
    int key_status = 0;
    const std::string key = "ZTILE" + std::to_string(i);
    fits_read_key(f, TLONGLONG, key.c_str(), &extent, nullptr, &key_status);
    t.tile.push_back(int64_t(extent));
  }
  STOKER_ENFORCE(status == 0, ValueError, path, ": HDU ", hdu, ": unreadable ", t.method,
                 " parameters (cfitsio: ", status_text(status), ")");
  return t;
}

// Every tile the table points to must lie inside its heap (cfitsio allocates a tile's bytes
// as its descriptor counts them before reading them), and Rice and PLIO tiles must decode
// without reading past their bytes. `heap` is where the heap starts in `file`.
void check_tiles(fitsfile* f, const std::string& path, int hdu, const TileCoding& coding,
                 LONGLONG rows, double table, LONGLONG heap_start, std::span<const uint8_t> file,
                 LONGLONG data_start) {
  int status = 0, columns = 0, tiles_column = 0, other = 0;
  fits_get_num_cols(f, &columns, &status);
  fits_get_colnum(f, CASEINSEN, const_cast<char*>("COMPRESSED_DATA"), &tiles_column, &other);
  // (cfitsio 4.2 dereferences the missing column's description.)
  STOKER_ENFORCE(status == 0 && other == 0 && tiles_column > 0, ValueError, path, ": HDU ", hdu,
                 ": the compressed image's table has no COMPRESSED_DATA column");
  // cfitsio reads the tile columns' cells as descriptors (count, heap offset) whatever their
  // type: a fixed-width column would hand it its bytes as counts.
  for (const char* name : {"COMPRESSED_DATA", "GZIP_COMPRESSED_DATA", "UNCOMPRESSED_DATA"}) {
    int c = 0, absent = 0, code = 0;
    LONGLONG repeat = 0, width = 0;
    if (fits_get_colnum(f, CASEINSEN, const_cast<char*>(name), &c, &absent) != 0) continue;
    fits_get_coltypell(f, c, &code, &repeat, &width, &status);
    STOKER_ENFORCE(status == 0 && code < 0, ValueError, path, ": HDU ", hdu, ": its ", name,
                   " column does not hold variable-length arrays");
  }
  constexpr LONGLONG kChunk = 4096;  // rows read at a time
  std::vector<LONGLONG> counts(kChunk), offsets(kChunk);
  for (int c = 1; c <= columns && status == 0; ++c) {
    int code = 0;
    LONGLONG repeat = 0, width = 0;
    if (fits_get_coltypell(f, c, &code, &repeat, &width, &status) != 0 || code >= 0) continue;
    // The tile checks read the stored bytes, which cfitsio's decoders see only when the
    // column holds bytes (Rice) or shorts (PLIO) unscaled.
    bool streams = c == tiles_column && coding.kind != TileCoding::kOther;
    if (streams) {
      const std::string n = std::to_string(c);
      double scale = 1, zero = 0;
      int key = 0;
      fits_read_key(f, TDOUBLE, ("TSCAL" + n).c_str(), &scale, nullptr, &key);
      key = 0;
      fits_read_key(f, TDOUBLE, ("TZERO" + n).c_str(), &zero, nullptr, &key);
      STOKER_ENFORCE(
          -code == (coding.kind == TileCoding::kRice ? TBYTE : TSHORT) && scale == 1 && zero == 0,
          ValueError, path, ": HDU ", hdu, ": its ", coding.method, " tiles are not stored as ",
          coding.kind == TileCoding::kRice ? "bytes" : "shorts");
    }
    for (LONGLONG first = 1; first <= rows && status == 0; first += kChunk) {
      const LONGLONG n = std::min(kChunk, rows - first + 1);
      if (fits_read_descriptsll(f, c, first, n, counts.data(), offsets.data(), &status) != 0) break;
      for (LONGLONG k = 0; k < n; ++k) {
        const auto count = counts[size_t(k)], offset = offsets[size_t(k)];
        const double bytes = element_bytes(-code, double(count));
        STOKER_ENFORCE(
            count >= 0 && offset >= 0 && double(heap_start) + double(offset) + bytes <= table,
            ValueError, path, ": HDU ", hdu, ": the tile of row ", first + k, " (", count,
            " elements at heap offset ", offset, ") lies outside the compressed image's ", table,
            " bytes");
        if (!streams || count == 0) continue;  // no tile here: cfitsio reads another column
        const auto tile = file.subspan(size_t(data_start + heap_start + offset), size_t(bytes));
        const int64_t pixels = fits_tile_pixels(coding.naxes, coding.tile, first + k - 1);
        const bool inside =
            coding.kind == TileCoding::kRice
                ? rice_tile_in_bounds(tile, pixels, coding.blocksize, coding.bytepix)
                : plio_tile_in_bounds(tile, pixels);
        STOKER_ENFORCE(inside, ValueError, path, ": HDU ", hdu, ": the ", coding.method,
                       " tile of row ", first + k, " is corrupt: decoding it would read past its ",
                       tile.size(), " bytes");
      }
    }
  }
  STOKER_ENFORCE(status == 0, ValueError, path, ": HDU ", hdu,
                 ": cannot read the compressed image's tile table (cfitsio: ", status_text(status),
                 ")");
}

// A compressed image (a binary table of NAXIS2 rows of NAXIS1 bytes and a heap of PCOUNT bytes
// holding the tiles): its table must lie inside the file, the image and each tile (cfitsio
// allocates a whole tile as ZTILEn declare it, which may exceed the image) may decode to at
// most kMaxFitsRatio times the table's bytes, or kMinFitsLimit, and its tiles must be sound
// (check_tiles).
void check_compressed(fitsfile* f, const std::string& path, int hdu, const FitsImage& img,
                      double decoded, LONGLONG start, size_t file_size,
                      std::span<const uint8_t> file) {
  int status = 0;
  LONGLONG row_bytes = 0, rows = 0, heap = 0;
  fits_read_key(f, TLONGLONG, "NAXIS1", &row_bytes, nullptr, &status);
  fits_read_key(f, TLONGLONG, "NAXIS2", &rows, nullptr, &status);
  fits_read_key(f, TLONGLONG, "PCOUNT", &heap, nullptr, &status);
  STOKER_ENFORCE(status == 0, ValueError, path, ": HDU ", hdu,
                 ": cannot read the compressed image's table size (cfitsio: ", status_text(status),
                 ")");
  const double table = double(row_bytes) * double(rows) + double(heap);
  STOKER_ENFORCE(double(start) + table <= double(file_size), ValueError, path, ": HDU ", hdu,
                 " is truncated: its compressed image declares ", table, " bytes from byte ", start,
                 ", the file ends at byte ", file_size);
  const double limit = std::max(kMinFitsLimit, kMaxFitsRatio * table);
  STOKER_ENFORCE(decoded <= limit, ValueError, path, ": HDU ", hdu, " declares a ",
                 shape_text(img.shape), " image of ", dtype_name(img.dtype), " (", decoded,
                 " bytes) compressed into ", table, " bytes: a compressed image may decode to ",
                 "at most ", kMaxFitsRatio, " times its compressed size (at least 64 MiB)");
  const TileCoding coding = tile_coding(f, path, hdu, img);
  double tile = 1;
  for (auto t : coding.tile) tile *= double(t);
  STOKER_ENFORCE(tile * 8 <= limit, ValueError, path, ": HDU ", hdu, " declares tiles of ", tile,
                 " pixels, more than its compressed size (", table,
                 " bytes) can hold: a compressed image may decode to at most ", kMaxFitsRatio,
                 " times its compressed size (at least 64 MiB)");
  LONGLONG heap_start = row_bytes * rows;
  int key_status = 0;
  fits_read_key(f, TLONGLONG, "THEAP", &heap_start, nullptr, &key_status);
  STOKER_ENFORCE(heap_start >= 0 && double(heap_start) <= table, ValueError, path, ": HDU ", hdu,
                 ": THEAP = ", heap_start, " lies outside the compressed image's ", table,
                 " bytes");
  check_tiles(f, path, hdu, coding, rows, table, heap_start, file, start);
}

}  // namespace

struct FitsFile::Handle {
  // A copy of the file when it is gzip-compressed (inflated), or not a whole number of
  // 2880-byte blocks (padded with zeros): cfitsio reads memory files in whole blocks, past
  // the end of a shorter buffer.
  std::vector<uint8_t> copy;
  size_t file_size = 0;  // before padding: the checks of what the file holds use it
  // Checks every header before cfitsio parses it (fits_header.hpp).
  std::optional<FitsHeaderWalk> walk;
  // cfitsio keeps the addresses of these two for the memory file's lifetime.
  void* memory = nullptr;
  size_t size = 0;
  fitsfile* file = nullptr;
};

bool fits_available() { return true; }

std::string cfitsio_version() {
  float v = 0;
  fits_get_version(&v);  // major + minor / 100 + micro / 10000
  const long n = std::lround(double(v) * 10000);
  return std::to_string(n / 10000) + "." + std::to_string(n / 100 % 100) + "." +
         std::to_string(n % 100);
}

FitsFile::FitsFile(std::span<const uint8_t> data, std::string path)
    : h_(std::make_unique<Handle>()), path_(std::move(path)) {
  if (is_gzip(data)) {
    h_->copy = gunzip(data, path_);
    data = h_->copy;
  }
  h_->file_size = data.size();
  if (data.size() % kFitsBlock != 0) {
    if (h_->copy.empty()) h_->copy.assign(data.begin(), data.end());
    h_->copy.resize((data.size() / kFitsBlock + 1) * kFitsBlock, 0);
    data = h_->copy;
  }
  h_->memory = const_cast<uint8_t*>(data.data());  // opened READONLY: never written
  h_->size = data.size();
  h_->walk.emplace(data, path_);
  int status = 0;
  CfitsioLock lock;
  // A fixed name: cfitsio parses names for its extended syntax ("file.fits[2]"), which file
  // names must not trigger.
  fits_open_memfile(&h_->file, "stoker", READONLY, &h_->memory, &h_->size, 0, nullptr, &status);
  if (status != 0) {
    h_->file = nullptr;
    throw ValueError(
        detail::concat(path_, ": not a FITS file (cfitsio: ", status_text(status), ")"));
  }
}

FitsFile::~FitsFile() {
  if (h_->file == nullptr) return;
  int status = 0;
  CfitsioLock lock;
  fits_close_file(h_->file, &status);
}

FitsImage FitsFile::image(int hdu) {
  CfitsioLock lock;
  fitsfile* f = h_->file;
  int status = 0, type = 0;
  // FITS files are whole 2880-byte blocks: one cut short has lost its end.
  const std::string cut =
      h_->file_size % kFitsBlock == 0
          ? std::string()
          : detail::concat("; the file is truncated: ", h_->file_size,
                           " bytes, not a whole number of 2880-byte FITS blocks");
  auto fail = [&](const char* what) {
    throw ValueError(detail::concat(path_, ": HDU ", hdu, ": ", what,
                                    " (cfitsio: ", status_text(status), ")", cut));
  };
  h_->walk->check_to(hdu);
  if (fits_movabs_hdu(f, hdu, &type, &status) != 0) {
    if (status == END_OF_FILE) {
      h_->walk->check_to(INT_MAX);  // counting the HDUs reads every header
      int count = 0, count_status = 0;
      fits_get_num_hdus(f, &count, &count_status);
      throw ValueError(detail::concat(path_, ": the file has ", count, " HDU",
                                      count == 1 ? "" : "s", ", no HDU ", hdu,
                                      " (hdu_indices count from 1, the primary HDU)", cut));
    }
    fail("cannot read its header");
  }
  STOKER_ENFORCE(type == IMAGE_HDU, ValueError, path_, ": HDU ", hdu, " is ",
                 type == ASCII_TBL ? "an ASCII table" : "a binary table",
                 ", not an image (only image HDUs are read)");
  int naxis = 0, equivalent = 0, bitpix = 0;
  if (fits_get_img_dim(f, &naxis, &status) != 0) fail("cannot read NAXIS");
  STOKER_ENFORCE(naxis > 0, ValueError, path_, ": HDU ", hdu,
                 " holds no image (NAXIS = 0; the primary HDU of a file with extensions often "
                 "holds none: hdu_indices counts from 1, its default is [2])");
  STOKER_ENFORCE(naxis <= kMaxNdim, ValueError, path_, ": HDU ", hdu, " has ", naxis,
                 " axes; at most ", kMaxNdim, " are supported");
  std::vector<LONGLONG> naxes(size_t(naxis), 0);
  if (fits_get_img_sizell(f, naxis, naxes.data(), &status) != 0) fail("cannot read NAXISn");
  if (fits_get_img_equivtype(f, &equivalent, &status) != 0 ||
      fits_get_img_type(f, &bitpix, &status) != 0)
    fail("cannot read BITPIX");
  if (equivalent == LONGLONG_IMG && bitpix == LONGLONG_IMG) {
    // cfitsio 4.2 calls BITPIX 64 with BZERO 2^63 (FITS's uint64, as astropy writes it) int64,
    // although it reads it as uint64.
    double scale = 1, zero = 0;
    int key_status = 0;
    fits_read_key(f, TDOUBLE, "BSCALE", &scale, nullptr, &key_status);
    key_status = 0;
    fits_read_key(f, TDOUBLE, "BZERO", &zero, nullptr, &key_status);
    if (scale == 1 && zero == 9223372036854775808.0) equivalent = ULONGLONG_IMG;
  }
  const auto dtype = dtype_of(equivalent);
  STOKER_ENFORCE(dtype.has_value(), ValueError, path_, ": HDU ", hdu, " has an unknown BITPIX (",
                 bitpix, ")");
  FitsImage img;
  img.hdu = hdu;
  img.dtype = *dtype;
  double elements = 1;
  for (auto it = naxes.rbegin(); it != naxes.rend(); ++it) {
    img.shape.push_back(int64_t(*it));
    elements *= double(*it);
  }
  img.compressed = fits_is_compressed_image(f, &status) == 1;
  LONGLONG head = 0, start = 0, end = 0;
  if (fits_get_hduaddrll(f, &head, &start, &end, &status) != 0) fail("cannot locate its data");
  const double file_size = double(h_->file_size);
  if (!img.compressed) {
    const double stored = elements * double(std::abs(bitpix) / 8);
    STOKER_ENFORCE(double(start) + stored <= file_size, ValueError, path_, ": HDU ", hdu,
                   " is truncated: its header declares ", shape_text(img.shape), " values of ",
                   std::abs(bitpix), " bits (", stored, " bytes from byte ", start,
                   "), the file ends at byte ", h_->file_size);
    return img;
  }
  check_compressed(f, path_, hdu, img, elements * double(dtype_size(img.dtype)), start,
                   h_->file_size, {static_cast<const uint8_t*>(h_->memory), h_->size});
  return img;
}

void FitsFile::read(const FitsImage& img, void* out) {
  const auto elements = LONGLONG(img.bytes() / dtype_size(img.dtype));
  if (elements == 0) return;
  CfitsioLock lock;
  int status = 0, anynul = 0, type = 0;
  // A null value of 0 turns cfitsio's null checking off (all types: 8 zero bytes).
  alignas(8) unsigned char no_null[8] = {};
  fits_movabs_hdu(h_->file, img.hdu, &type, &status);
  fits_read_img(h_->file, datatype_code(img.dtype), 1, elements, no_null, out, &anynul, &status);
  if (status == 0) return;
  std::string method;  // the compression algorithm, for the message
  if (img.compressed) {
    char value[FLEN_VALUE] = {};
    int key_status = 0;
    fits_read_key(h_->file, TSTRING, "ZCMPTYPE", value, nullptr, &key_status);
    if (key_status == 0) method = detail::concat(" (ZCMPTYPE '", value, "')");
  }
  throw ValueError(detail::concat(path_, ": HDU ", img.hdu, ": cannot decode the ",
                                  img.compressed ? "compressed " : "", "image", method,
                                  " (cfitsio: ", status_text(status), ")"));
}

#else  // built without cfitsio

struct FitsFile::Handle {};

bool fits_available() { return false; }
std::string cfitsio_version() { return ""; }

FitsFile::FitsFile(std::span<const uint8_t>, std::string path) : path_(std::move(path)) {
  throw RuntimeError("cannot read FITS file '" + path_ + "': stoker was built without cfitsio");
}
FitsFile::~FitsFile() = default;
FitsImage FitsFile::image(int) { return {}; }
void FitsFile::read(const FitsImage&, void*) {}

#endif

}  // namespace stoker::readers
