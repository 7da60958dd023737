// FITS files (the Flexible Image Transport System of astronomy): image HDUs, plain or
// tile-compressed, decoded with cfitsio from bytes already in memory (a mapping or one read of
// the whole file), so that the readers' file options and mapped-file guards apply as to every
// other format. A gzip-compressed file (.fits.gz, which cfitsio's own file opening inflates) is
// inflated first, with the gzip-bomb limit of readers::gunzip.
//
// cfitsio 4.2 trusts the files it reads (docs/design/readers.md, "FITS"), so nothing reaches it
// unchecked: every header it will parse is walked first (fits_header.hpp); an image's data must
// lie inside the file; a compressed image and each of its tiles may decode to at most
// kMaxFitsRatio times its compressed size (at least kMinFitsLimit bytes), its tile descriptors
// must point inside its heap and its Rice and PLIO tiles must decode inside their bytes
// (fits_tiles.hpp); HCOMPRESS_1 is refused. A header cannot make a small file allocate
// gigabytes, and the ways fuzzing found to crash cfitsio or make it read out of bounds
// (fuzz/fits_fuzzer.cpp, fuzz/corpus/fits) are closed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/dtype.hpp"

namespace stoker::readers {

// True when stoker was built with cfitsio; its version ("4.2.0"), or "" without it.
bool fits_available();
std::string cfitsio_version();

// The most a compressed image may decode to, as a multiple of its compressed bytes (Rice codes
// runs of equal pixels in a few bits per block of 32: about 200x at most; GZIP about 1000x;
// PLIO's runs somewhat more), and the size always allowed.
inline constexpr double kMaxFitsRatio = 4096;
inline constexpr double kMinFitsLimit = double(int64_t(64) << 20);

// An image HDU as its header declares it, checked against the file.
struct FitsImage {
  int hdu = 0;  // 1-based, as FITS (and DALI's hdu_indices) count: 1 is the primary HDU
  // The type of the values after BZERO and BSCALE are applied (cfitsio's equivalent type):
  // BITPIX 16 with BZERO 32768 is uint16, BITPIX 8 with BZERO -128 int8, a scaled 8- or 16-bit
  // image float32, a scaled 32- or 64-bit one float64.
  DType dtype = DType::kU8;
  std::vector<int64_t> shape;  // NAXISn ... NAXIS1: C order, NAXIS1 varies fastest
  bool compressed = false;     // a tile-compressed image (a binary table holding the tiles)
  size_t bytes() const;        // of the decoded image
};

class FitsFile {
 public:
  // Opens the FITS file whose bytes are `data` (which must outlive this object). Throws
  // ValueError naming `path` when the bytes are not a FITS file (or a gzip-compressed one).
  FitsFile(std::span<const uint8_t> data, std::string path);
  ~FitsFile();
  FitsFile(const FitsFile&) = delete;
  FitsFile& operator=(const FitsFile&) = delete;

  // HDU `hdu` (1-based), checked: throws ValueError naming the file and the HDU when the file
  // has no such HDU, it is a table, it has no data (NAXIS = 0) or more than kMaxNdim axes, its
  // data run past the end of the file (truncated), a compressed image would decode to more
  // than its limit or its tiles are unsound, or a header on the way fails FitsHeaderWalk.
  FitsImage image(int hdu);
  // Decodes `img` (from image()) into `out` (img.bytes() bytes), values scaled by BZERO and
  // BSCALE, in native byte order. No null-value substitution: NaN stays NaN and a BLANK
  // integer keeps its stored (scaled) value. Throws ValueError naming the file and HDU when the
  // data cannot be decoded.
  void read(const FitsImage& img, void* out);

 private:
  struct Handle;
  std::unique_ptr<Handle> h_;
  std::string path_;
};

}  // namespace stoker::readers
