// COCO annotation files (instances_*.json): the images, their objects' boxes, categories and
// masks, indexed for readers.coco.
//
// The file is parsed in one pass from the parser's events (readers/json_events.hpp): no
// document tree is built, only the fields the reader outputs are kept, in flat arrays. Samples follow DALI's conventions: images ordered by
// id (or as `images` lists them), objects in file order, categories numbered 1..N in file order
// unless the ids are kept.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::readers {

struct CocoOptions {
  bool ltrb = false;                // boxes as [l, t, r, b] instead of [x, y, w, h]
  bool skip_empty = false;          // drop images without objects
  float size_threshold = 0.1f;      // drop objects whose box is narrower or lower (pixels)
  bool include_iscrowd = true;      // keep objects marked iscrowd=1
  bool keep_category_ids = false;   // labels as in the file (else 1..N in `categories` order)
  bool polygons = false;            // keep polygons (CocoIndex::vertices)
  bool pixel_masks = false;         // keep polygons on COCO's grid and crowd RLEs, to draw
  bool need_image_sizes = false;    // every image must give its width and height
  std::vector<std::string> images;  // read these files, in this order (empty: all, by id)
};

// A slice [begin, end) of one of the index's lists.
struct CocoRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

struct CocoObject {
  float box[4] = {};      // pixels; [l, t, r, b] or [x, y, w, h] as CocoOptions::ltrb says
  int32_t label = 0;      // the category id, or its number (1..N) in `categories`
  CocoRange polygons;     // in CocoIndex::polygons
  int64_t rle = -1;       // in CocoIndex::rles (crowd masks), -1: none
  int64_t entry = 0;      // its position in the file's `annotations`, for messages
};

struct CocoRle {
  int64_t h = 0, w = 0;
  CocoRange counts;       // in CocoIndex::rle_counts
};

struct CocoSample {
  std::string file_name;
  int64_t image_id = 0;
  int64_t width = 0, height = 0;  // as the annotations give them (0: not given)
  CocoRange objects;              // in CocoIndex::sample_objects
};

// Objects are stored once and listed per sample (an image named twice in CocoOptions::images
// is two samples sharing its objects).
struct CocoIndex {
  std::vector<CocoSample> samples;
  std::vector<int64_t> sample_objects;  // indices into objects
  std::vector<CocoObject> objects;
  // Vertex ranges, in vertices (CocoOptions::polygons) or grid_vertices (pixel_masks).
  std::vector<CocoRange> polygons;
  std::vector<float> vertices;          // x, y per vertex, pixels
  std::vector<int32_t> grid_vertices;   // x, y per vertex on COCO's grid (coco_masks.hpp)
  std::vector<CocoRle> rles;
  std::vector<uint32_t> rle_counts;
};

// Parses `path`. Throws ValueError naming the file and the entry ("annotations[12]") for
// malformed JSON, missing or mistyped fields, unknown categories, duplicate images, masks that
// do not fit their image, and images in CocoOptions::images that the file does not list;
// IOError when it cannot be read.
CocoIndex parse_coco_annotations(const std::string& path, const CocoOptions& options);

// The same from the file's text (the fuzz target and tests); `path` names it in errors.
CocoIndex parse_coco_annotations_text(std::string_view text, const std::string& path,
                                      const CocoOptions& options);

}  // namespace stoker::readers
