// COCO annotations: parsing into the index (fields, order, options, errors) and the mask
// encodings (RLE text, polygon rasterisation) on cases worked out with pycocotools; the Python
// tests compare the masks with pycocotools on real and random annotations.
#include <gtest/gtest.h>

#include "stoker/core/error.hpp"
#include "stoker/readers/coco_index.hpp"
#include "stoker/readers/coco_masks.hpp"

namespace stoker::readers {
namespace {

// `expr` throws `Type` with `text` in its message.
#define STOKER_EXPECT_ERROR(expr, Type, text)                                         \
  do {                                                                                \
    try {                                                                             \
      (void)(expr);                                                                   \
      ADD_FAILURE() << "no " #Type " from " #expr;                                    \
    } catch (const Type& e) {                                                         \
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();     \
    }                                                                                 \
  } while (0)

// COCO's compressed counts, encoded from the format's description (the decoder's reference):
// one stored value in 5-bit groups, low first.
std::string encode_value(int64_t x) {
  std::string s;
  bool more = true;
  while (more) {
    int64_t c = x & 0x1f;
    x >>= 5;  // arithmetic shift keeps the sign
    more = (c & 0x10) ? x != -1 : x != 0;
    if (more) c |= 0x20;
    s += char(c + 48);
  }
  return s;
}

// Counts after the second are stored as differences from the count two places back.
std::string rle_to_string(const std::vector<uint32_t>& counts) {
  std::string s;
  for (size_t i = 0; i < counts.size(); ++i) {
    s += encode_value(i > 2 ? int64_t(counts[i]) - int64_t(counts[i - 2]) : int64_t(counts[i]));
  }
  return s;
}

TEST(CocoRle, DecodesPycocotoolsStrings) {
  // pycocotools' encoding of the 5x6 mask with rows 1-2, columns 1-3 set.
  EXPECT_EQ(rle_from_string("6230009"), (std::vector<uint32_t>{6, 2, 3, 2, 3, 2, 12}));
  std::vector<uint32_t> counts{203, 7, 2, 18, 13, 7, 2, 18, 0, 1u << 31, 5, 70000, 3};
  EXPECT_EQ(rle_from_string(rle_to_string(counts)), counts);
  EXPECT_TRUE(rle_from_string("").empty());
}

TEST(CocoRle, RejectsBadStrings) {
  STOKER_EXPECT_ERROR(rle_from_string("62~"), ValueError, "has the character '~' at 2");
  STOKER_EXPECT_ERROR(rle_from_string("6P"), ValueError, "ends inside a count");
  // A third count smaller than the first by more than it: a negative run.
  STOKER_EXPECT_ERROR(rle_from_string(rle_to_string({5, 1, 0}) + encode_value(-10)), ValueError,
                      "gives run 3 the length -9");
  STOKER_EXPECT_ERROR(rle_from_string("PPPPPPPP0"), ValueError, "longer than 32 bits");
}

TEST(CocoRle, RasterisesPolygonsByCocosRule) {
  // pycocotools: frPyObjects([[1,1, 4,1, 4,3, 1,3]], 5, 6) covers rows 1-2 of columns 1-3.
  auto grid = [](std::vector<double> xy) {
    std::vector<int32_t> g;
    for (double v : xy) g.push_back(coco_grid(v));
    return g;
  };
  const auto rect = grid({1, 1, 4, 1, 4, 3, 1, 3});
  EXPECT_EQ(rle_from_polygon(rect, 5, 6), (std::vector<uint32_t>{6, 2, 3, 2, 3, 2, 12}));
  // The same rectangle walked the other way round.
  EXPECT_EQ(rle_from_polygon(grid({1, 3, 4, 3, 4, 1, 1, 1}), 5, 6), rle_from_polygon(rect, 5, 6));
  EXPECT_EQ(rle_from_polygon({}, 5, 6), (std::vector<uint32_t>{30}));
  EXPECT_EQ(rle_from_polygon(grid({100, 100, 120, 100, 120, 130}), 5, 6),
            (std::vector<uint32_t>{30}));
  // The grid rounds the annotation's double: 0.9 is 5 (4.5 + 0.5), 0.9f would be 4.
  EXPECT_EQ(coco_grid(0.9), 5);
  EXPECT_EQ(coco_grid(-0.35), -1);  // -1.25: truncated toward zero, as C converts
  EXPECT_EQ(coco_grid(1e300), 1 << 30);
}

TEST(CocoRle, PaintsTheLargerLabel) {
  std::vector<int32_t> mask(30, 0);
  const std::vector<uint32_t> counts{6, 2, 3, 2, 3, 2, 12};
  ASSERT_TRUE(rle_covers(counts, 5, 6));
  EXPECT_FALSE(rle_covers(counts, 5, 7));
  paint_rle(counts, 5, 6, 7, mask.data());
  paint_rle(std::vector<uint32_t>{0, 30}, 5, 6, 3, mask.data());  // everything, smaller label
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 6; ++x) {
      const bool in = y >= 1 && y <= 2 && x >= 1 && x <= 3;
      EXPECT_EQ(mask[size_t(y * 6 + x)], in ? 7 : 3) << y << "," << x;
    }
  }
}

const char* kFile = R"({
  "info": {"nested": [[1, 2], {"deep": [3]}]},
  "annotations": [
    {"id": 1, "image_id": 20, "category_id": 7, "bbox": [1, 2, 3, 4], "iscrowd": 0,
     "segmentation": [[0, 0, 5, 0, 5, 5], [1, 1, 2, 1, 2, 2]], "area": 9.5},
    "not an object",
    {"image_id": 10, "category_id": 3, "bbox": [10, 20, 30, 40], "iscrowd": 1,
     "segmentation": {"size": [8, 9], "counts": [0, 72]}},
    {"image_id": 20, "category_id": 3.0, "bbox": [0, 0, 0.05, 5]},
    {"image_id": 99, "category_id": 3, "bbox": [0, 0, 1, 1]}
  ],
  "images": [{"id": 20, "file_name": "b.jpg", "width": 6, "height": 7, "license": 1},
             {"id": 10, "file_name": "a.jpg", "width": 9, "height": 8},
             {"id": 15.0, "file_name": "c.jpg", "width": 4, "height": 4}],
  "categories": [{"id": 7, "name": "dog"}, {"id": 3, "name": "cat"}]
})";

TEST(CocoIndex, OrdersImagesByIdAndKeepsObjectsInFileOrder) {
  CocoOptions o;
  o.polygons = true;
  auto index = parse_coco_annotations_text(kFile, "f.json", o);
  ASSERT_EQ(index.samples.size(), 3u);
  EXPECT_EQ(index.samples[0].file_name, "a.jpg");
  EXPECT_EQ(index.samples[1].file_name, "c.jpg");
  EXPECT_EQ(index.samples[2].file_name, "b.jpg");
  EXPECT_EQ(index.samples[2].width, 6);
  EXPECT_EQ(index.samples[1].objects.size(), 0);
  // b.jpg: the first annotation (the third is under size_threshold).
  ASSERT_EQ(index.samples[2].objects.size(), 1);
  const auto& dog = index.objects[size_t(index.sample_objects[size_t(index.samples[2].objects.begin)])];
  EXPECT_EQ(dog.label, 1);  // categories numbered in file order
  EXPECT_EQ(dog.entry, 0);
  EXPECT_EQ(std::vector<float>(dog.box, dog.box + 4), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(dog.polygons.size(), 2);
  EXPECT_EQ(index.polygons[size_t(dog.polygons.begin)].size(), 3);
  EXPECT_EQ(index.vertices.size(), 12u);
  const auto& crowd = index.objects[size_t(index.sample_objects[size_t(index.samples[0].objects.begin)])];
  EXPECT_EQ(crowd.label, 2);
  EXPECT_EQ(crowd.rle, -1);  // RLEs only when asked for
}

TEST(CocoIndex, AppliesTheOptions) {
  CocoOptions o;
  o.ltrb = true;
  o.skip_empty = true;
  o.include_iscrowd = false;
  o.keep_category_ids = true;
  o.size_threshold = 0.0f;
  auto index = parse_coco_annotations_text(kFile, "f.json", o);
  ASSERT_EQ(index.samples.size(), 1u);  // a.jpg's only object is a crowd; c.jpg has none
  ASSERT_EQ(index.samples[0].objects.size(), 2);
  const auto& first = index.objects[size_t(index.sample_objects[0])];
  EXPECT_EQ(std::vector<float>(first.box, first.box + 4), (std::vector<float>{1, 2, 4, 6}));
  EXPECT_EQ(first.label, 7);
  EXPECT_EQ(index.objects[size_t(index.sample_objects[1])].label, 3);

  CocoOptions pick;
  pick.images = {"b.jpg", "a.jpg", "b.jpg"};
  pick.pixel_masks = true;
  index = parse_coco_annotations_text(kFile, "f.json", pick);
  ASSERT_EQ(index.samples.size(), 3u);
  EXPECT_EQ(index.samples[2].file_name, "b.jpg");
  EXPECT_EQ(index.samples[2].objects.size(), 1);
  const auto& crowd = index.objects[size_t(index.sample_objects[size_t(index.samples[1].objects.begin)])];
  ASSERT_GE(crowd.rle, 0);
  EXPECT_EQ(index.rles[size_t(crowd.rle)].counts.size(), 2);
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(CocoIndex, NamesTheFileAndEntryInErrors) {
  CocoOptions o;
  STOKER_EXPECT_ERROR(parse_coco_annotations_text("{\"images\": [}", "f.json", o), ValueError,
                      "f.json: not valid JSON (at byte 12): syntax error");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text("[]", "f.json", o), ValueError,
                      "the top level must be an object");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "[10, 20, 30, 40]", "[10, 20, 30]"),
                                                  "f.json", o),
                      ValueError, "f.json: annotations[2]: 'bbox' must have 4 numbers, not 3");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "\"category_id\": 7", "\"category_id\": 8"),
                                                  "f.json", o),
                      ValueError, "annotations[0]: category_id 8 is not in 'categories'");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "\"id\": 15.0", "\"id\": 10"),
                                                  "f.json", o),
                      ValueError, "images[2] has the id 10 of images[1]");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "\"image_id\": 10", "\"image_id\": \"10\""),
                                                  "f.json", o),
                      ValueError, "annotations[2]: 'image_id' must be an integer");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, ", \"file_name\": \"c.jpg\"", ""),
                                                  "f.json", o),
                      ValueError, "images[2]: the image has no 'file_name'");
  o.images = {"a.jpg", "z.jpg"};
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(kFile, "f.json", o), ValueError,
                      "images[1] 'z.jpg' is not an image of f.json");
  CocoOptions masks;
  masks.pixel_masks = masks.need_image_sizes = true;
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "[0, 72]", "[0, 71]"), "f.json", masks),
                      ValueError, "annotations[2]: RLE 'counts' do not add up to its size 8x9");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "\"width\": 9", "\"width\": 10"),
                                                  "f.json", masks),
                      ValueError, "annotations[2]: its RLE mask is 8x9 (height x width) but image 10 is 8x10");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "[1, 1, 2, 1, 2, 2]", "[1, 1, 2, 1, 2]"),
                                                  "f.json", masks),
                      ValueError, "annotations[0]: a polygon has an odd number of coordinates");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "[1, 1, 2, 1, 2, 2]", "[1, 1, 2, 1, 2, 900]"),
                                                  "f.json", masks),
                      ValueError, "polygon vertex (2, 900) lies far outside its 6x7 image");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, ", \"width\": 4, \"height\": 4", ""),
                                                  "f.json", masks),
                      ValueError, "images[2]: the image needs a positive 'width' and 'height'");
  STOKER_EXPECT_ERROR(parse_coco_annotations_text(with(kFile, "\"width\": 4", "\"width\": 70000"),
                                                  "f.json", masks),
                      ValueError, "images[2]: the image is 70000x4 pixels");
}

}  // namespace
}  // namespace stoker::readers
