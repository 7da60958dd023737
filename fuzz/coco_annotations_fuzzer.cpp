// libFuzzer target: a COCO annotations file must give an index or a stoker::ValueError, and
// every mask the index allows must draw inside its image: each polygon's RLE covers exactly
// the image (else the target traps), RLEs are painted, for images up to 2^16 pixels.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/readers/coco_index.hpp"
#include "stoker/readers/coco_masks.hpp"

using namespace stoker::readers;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte picks the options: polygons (for the outputs) or pixel-wise masks, ltrb,
  // skip_empty, crowds, category ids.
  const uint8_t pick = data[0];
  CocoOptions o;
  o.pixel_masks = (pick & 1) != 0;
  o.polygons = !o.pixel_masks;
  o.need_image_sizes = o.pixel_masks || (pick & 2) != 0;
  o.ltrb = (pick & 4) != 0;
  o.skip_empty = (pick & 8) != 0;
  o.include_iscrowd = (pick & 16) == 0;
  o.keep_category_ids = (pick & 32) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const auto index = parse_coco_annotations_text(text, "fuzz.json", o);
    if (!o.pixel_masks) return 0;
    for (const auto& sample : index.samples) {
      const int64_t h = sample.height, w = sample.width;
      if (h * w > (int64_t(1) << 16)) continue;
      std::vector<int32_t> mask(size_t(h * w), 0);
      for (int64_t k = sample.objects.begin; k < sample.objects.end; ++k) {
        const auto& object = index.objects[size_t(index.sample_objects[size_t(k)])];
        for (int64_t p = object.polygons.begin; p < object.polygons.end; ++p) {
          const auto& range = index.polygons[size_t(p)];
          const auto counts = rle_from_polygon(
              {index.grid_vertices.data() + 2 * range.begin, size_t(2 * range.size())}, h, w);
          if (!rle_covers(counts, h, w)) __builtin_trap();
          paint_rle(counts, h, w, object.label, mask.data());
        }
        if (object.rle >= 0) {
          const auto& rle = index.rles[size_t(object.rle)];
          if (rle.h != h || rle.w != w) __builtin_trap();
          paint_rle({index.rle_counts.data() + rle.counts.begin, size_t(rle.counts.size())}, h,
                    w, object.label, mask.data());
        }
      }
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
