// EXIF orientation (TIFF tag 0x0112 in IFD0 of a JPEG's APP1 "Exif" segment, of a PNG's eXIf
// or a WebP's EXIF chunk, or of a TIFF file itself), read with a small bounds-checked parser:
// the only field the decoders need.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stoker::codecs {

// 1..8 as EXIF defines them, stored as a SHORT (the standard's type) or a LONG or SLONG (as some
// writers do); 1 (as stored) when the JPEG has no EXIF, no orientation tag, another type, an
// out-of-range value (some cameras write 0) or a malformed segment. Never throws.
int jpeg_exif_orientation(const uint8_t* data, size_t size);
// The same for PNG files (an eXIf chunk), WebP files (an EXIF chunk of an extended file; its
// payload with or without the "Exif\0\0" prefix some writers put) and TIFF files (the
// Orientation tag of the first page). 1 where there is none.
int png_exif_orientation(const uint8_t* data, size_t size);
int webp_exif_orientation(const uint8_t* data, size_t size);
int tiff_file_orientation(const uint8_t* data, size_t size);

// True for orientations that swap width and height (5 to 8).
inline bool orientation_swaps_axes(int orientation) { return orientation >= 5; }

}  // namespace stoker::codecs
