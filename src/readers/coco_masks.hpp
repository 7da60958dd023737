// COCO's instance masks: run-length encodings (RLE) and polygons, and their rasterisation
// into a label image.
//
// A COCO RLE covers an h x w image in column-major order (pixel (y, x) is element x*h + y):
// counts alternate between runs of 0s and runs of 1s, starting with 0s. Its compressed text
// form (the "counts" string of crowd annotations) stores each count in 5-bit groups, as
// characters from '0' (48) up, low group first, 0x20 marking "more groups follow" and 0x10 in
// the last group the sign; counts after the second are stored as differences from the count
// two places back.
//
// Polygons are rasterised by COCO's rule (pycocotools' frPyObjects / annToMask, which the
// tests compare against): the boundary, scaled by 5 and rounded to integers, is walked one
// step at a time along each edge's longer axis; where the walk crosses the middle of a pixel
// column, the pixels of that column from the crossing's row (rounded up) down are toggled.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace stoker::readers {

// Decodes the compressed text form into counts. Throws ValueError (mentioning "RLE") for
// characters outside the alphabet, a truncated count or a negative run.
std::vector<uint32_t> rle_from_string(std::string_view text);

// A coordinate on the rule's grid: 5 v + 0.5 truncated toward zero, computed from the
// annotation's double (a float's rounding moves values such as 0.9 across a grid line), and
// saturated to +-2^30 (the caller rejects such vertices: see rle_from_polygon).
int32_t coco_grid(double v);

// The RLE of the polygon with vertices xy[2k], xy[2k+1] (on the grid, coco_grid) in an h x w
// image; no vertices: an empty mask. Vertices may lie outside the image; the caller bounds
// how far (the walk takes time proportional to the boundary's length).
std::vector<uint32_t> rle_from_polygon(std::span<const int32_t> xy, int64_t h, int64_t w);

// Sets pixel (y, x) of the row-major h x w `labels` to max(label, current) wherever the RLE
// is 1. The counts must add up to h*w (see rle_covers).
void paint_rle(std::span<const uint32_t> counts, int64_t h, int64_t w, int32_t label,
               int32_t* labels);

// Whether the counts add up to exactly h*w.
bool rle_covers(std::span<const uint32_t> counts, int64_t h, int64_t w);

}  // namespace stoker::readers
