// The tiles of a compressed FITS image, checked before cfitsio decodes them. cfitsio 4.2's Rice
// decoder reads as far as a tile's codes lead it and checks for the end of the tile's bytes
// only between blocks of pixels (a block may be the whole tile), and its PLIO decoder takes
// the length of a line list from the list itself: on corrupt tiles both read past the buffer
// holding the tile. These checks follow the decoders' reads exactly, without decoding, and
// say whether every read stays inside the tile's bytes (a tile that passes decodes as cfitsio
// decodes it; one that fails is refused). They read only the bytes given.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace stoker::readers {

// A Rice-coded tile of `pixels` pixels, coded in blocks of `blocksize` with `bytepix` bytes a
// pixel (cfitsio decodes 1 and 2 as such, anything else as 4).
bool rice_tile_in_bounds(std::span<const uint8_t> tile, int64_t pixels, int blocksize, int bytepix);

// A PLIO_1 tile of `pixels` pixels: an IRAF line list of big-endian 16-bit words, as the file
// stores them.
bool plio_tile_in_bounds(std::span<const uint8_t> tile, int64_t pixels);

// The number of pixels of tile `row` (0-based, NAXIS1's tiles first, as the table's rows go)
// of an image of extents `naxes` (NAXIS1 first) cut into tiles of `tile` (ZTILEn, positive).
int64_t fits_tile_pixels(const std::vector<int64_t>& naxes, const std::vector<int64_t>& tile,
                         int64_t row);

}  // namespace stoker::readers
