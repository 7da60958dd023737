#include "stoker/readers/coco_index.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "stoker/core/error.hpp"
#include "stoker/readers/coco_masks.hpp"
#include "stoker/readers/data_file.hpp"
#include "stoker/readers/json_events.hpp"

namespace stoker::readers {
namespace {

// The largest image a pixel-wise mask is made for: JPEG's limit on a side, 1 GiB of mask.
constexpr int64_t kMaxSide = 65535;
constexpr int64_t kMaxPixels = int64_t(1) << 28;

enum class Section { kOther, kImages, kCategories, kAnnotations };
enum class Field {
  kOther, kId, kWidth, kHeight, kFileName, kImageId, kCategoryId, kIsCrowd, kBbox, kSegmentation,
  kRleSize, kRleCounts
};
// What the innermost open container is.
enum class Ctx { kRoot, kSection, kElement, kBbox, kPolygons, kPolygon, kRle, kRleSize, kRleCounts };

struct ImageEntry {
  std::string file_name;
  int64_t id = 0, width = 0, height = 0;
  int64_t entry = 0;  // its position in `images`
};

// What an annotation refers to, until images are ordered and categories numbered.
struct ObjectRefs {
  int64_t image_id = 0, category_id = 0;
};

using Value = JsonScalar;

// Builds the image list, the category order and the annotations from the parser's events.
// Every container the reader does not need is skipped without being stored.
class CocoEvents final : public JsonEvents {
 public:
  CocoEvents(const std::string& path, const CocoOptions& o, CocoIndex& index)
      : path_(path), opt_(o), index_(index) {}

  std::vector<ImageEntry> images;
  std::vector<int64_t> categories;  // ids in file order
  std::vector<ObjectRefs> refs;     // one per object kept in the index

  void key(std::string_view k) override {
    if (skip_ > 0) return;
    switch (top()) {
      case Ctx::kRoot:
        section_ = k == "images"        ? Section::kImages
                   : k == "categories"  ? Section::kCategories
                   : k == "annotations" ? Section::kAnnotations
                                        : Section::kOther;
        break;
      case Ctx::kElement:
        field_ = element_field(k);
        break;
      case Ctx::kRle:
        field_ = k == "size" ? Field::kRleSize : k == "counts" ? Field::kRleCounts : Field::kOther;
        break;
      default:
        break;
    }
  }

  void start_object() override { open(true); }
  void start_array() override { open(false); }
  void end_container() override { close(); }
  void scalar(const Value& v) override { scalar_value(v); }

 private:

  Ctx top() const { return stack_.back(); }

  Field element_field(std::string_view k) const {
    if (section_ == Section::kImages) {
      return k == "id"          ? Field::kId
             : k == "width"     ? Field::kWidth
             : k == "height"    ? Field::kHeight
             : k == "file_name" ? Field::kFileName
                                : Field::kOther;
    }
    if (section_ == Section::kCategories) return k == "id" ? Field::kId : Field::kOther;
    return k == "image_id"       ? Field::kImageId
           : k == "category_id"  ? Field::kCategoryId
           : k == "iscrowd"      ? Field::kIsCrowd
           : k == "bbox"         ? Field::kBbox
           : k == "segmentation" ? Field::kSegmentation
                                 : Field::kOther;
  }

  // "annotations[12]", for messages.
  std::string where() const {
    const char* name = section_ == Section::kImages       ? "images"
                       : section_ == Section::kCategories ? "categories"
                                                          : "annotations";
    return detail::concat(path_, ": ", name, "[", element_, "]");
  }

  [[noreturn]] void fail(std::string_view what) const {
    throw ValueError(detail::concat(where(), ": ", what));
  }

  int64_t integer(const Value& v, const char* field) const {
    if (v.kind == Value::kInt) return v.i;
    // Some converters write ids as 1.0: integral floats are accepted.
    if (v.kind == Value::kFloat && std::isfinite(v.d) && v.d == std::floor(v.d) &&
        std::abs(v.d) < 9.0e15) {
      return int64_t(v.d);
    }
    fail(detail::concat("'", field, "' must be an integer"));
  }

  double number(const Value& v, const char* what) const {
    if (!v.is_number()) fail(detail::concat(what, " must be numbers"));
    return v.d;
  }

  bool scalar_value(const Value& v) {
    if (skip_ > 0 || stack_.empty()) return true;
    switch (top()) {
      case Ctx::kRoot:
        if (section_ != Section::kOther) {
          throw ValueError(detail::concat(path_, ": '", section_name(), "' must be a list"));
        }
        break;
      case Ctx::kElement:
        element_value(v);
        break;
      case Ctx::kBbox:
        if (bbox_count_ >= 4) fail("'bbox' must have 4 numbers, it has more");
        obj_.box[bbox_count_++] = float(number(v, "'bbox' values"));
        break;
      case Ctx::kPolygons:
        fail("'segmentation' must be a list of polygons (lists of x, y numbers) or an RLE object");
      case Ctx::kPolygon: {
        const double c = number(v, "polygon coordinates");
        if (opt_.polygons) index_.vertices.push_back(float(c));
        if (opt_.pixel_masks) index_.grid_vertices.push_back(coco_grid(c));
        break;
      }
      case Ctx::kRle:
        if (field_ == Field::kRleCounts) {
          if (v.kind != Value::kString) fail("RLE 'counts' must be a string or a list of integers");
          try {
            auto counts = rle_from_string(v.s);
            index_.rle_counts.insert(index_.rle_counts.end(), counts.begin(), counts.end());
          } catch (const ValueError& e) {
            fail(e.what());
          }
        }
        break;
      case Ctx::kRleSize:
        rle_size_.push_back(integer(v, "size"));
        break;
      case Ctx::kRleCounts: {
        const int64_t c = integer(v, "counts");
        if (c < 0 || c > int64_t(std::numeric_limits<uint32_t>::max())) {
          fail("RLE 'counts' must be non-negative 32-bit integers");
        }
        index_.rle_counts.push_back(uint32_t(c));
        break;
      }
      case Ctx::kSection:  // a list entry that is not an object: skipped, as DALI does
        ++element_;
        break;
    }
    return true;
  }

  void element_value(const Value& v) {
    switch (field_) {
      case Field::kId:
        image_.id = integer(v, "id");
        has_id_ = true;
        break;
      case Field::kWidth:
        image_.width = integer(v, "width");
        break;
      case Field::kHeight:
        image_.height = integer(v, "height");
        break;
      case Field::kFileName:
        if (v.kind != Value::kString) fail("'file_name' must be a string");
        image_.file_name = std::string(v.s);
        has_file_ = true;
        break;
      case Field::kImageId:
        ref_.image_id = integer(v, "image_id");
        has_image_id_ = true;
        break;
      case Field::kCategoryId:
        ref_.category_id = integer(v, "category_id");
        has_category_ = true;
        break;
      case Field::kIsCrowd:
        crowd_ = v.kind == Value::kBool ? v.i != 0 : integer(v, "iscrowd") != 0;
        break;
      case Field::kBbox:
        fail("'bbox' must be a list of 4 numbers");
      default:  // segmentation: null or another scalar means no mask
        break;
    }
  }

  const char* section_name() const {
    return section_ == Section::kImages ? "images"
           : section_ == Section::kCategories ? "categories" : "annotations";
  }

  bool open(bool object) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (stack_.empty()) {
      if (!object) throw ValueError(detail::concat(path_, ": the top level must be an object"));
      stack_.push_back(Ctx::kRoot);
      return true;
    }
    switch (top()) {
      case Ctx::kRoot:
        if (section_ == Section::kOther) return skip();
        if (object) {
          throw ValueError(detail::concat(path_, ": '", section_name(), "' must be a list"));
        }
        element_ = -1;
        return push(Ctx::kSection);
      case Ctx::kSection:
        if (!object) {
          ++element_;
          return skip();
        }
        start_element();
        return push(Ctx::kElement);
      case Ctx::kElement:
        if (field_ == Field::kBbox) {
          if (object) fail("'bbox' must be a list of 4 numbers");
          bbox_count_ = 0;
          return push(Ctx::kBbox);
        }
        if (field_ == Field::kSegmentation) {
          if (object) {
            if (!opt_.pixel_masks) return skip();  // crowd RLEs: only pixel-wise masks use them
            rle_size_.clear();
            rle_counts_begin_ = int64_t(index_.rle_counts.size());
            return push(Ctx::kRle);
          }
          if (!opt_.polygons && !opt_.pixel_masks) return skip();
          return push(Ctx::kPolygons);
        }
        if (field_ == Field::kWidth || field_ == Field::kHeight || field_ == Field::kId ||
            field_ == Field::kFileName || field_ == Field::kImageId ||
            field_ == Field::kCategoryId || field_ == Field::kIsCrowd) {
          fail(detail::concat("'", field_name(), "' must be a single value"));
        }
        return skip();
      case Ctx::kPolygons:
        if (object) fail("'segmentation' polygons must be lists of x, y numbers");
        polygon_begin_ = coords();
        return push(Ctx::kPolygon);
      case Ctx::kRle:
        if (!object && field_ == Field::kRleSize) return push(Ctx::kRleSize);
        if (!object && field_ == Field::kRleCounts) return push(Ctx::kRleCounts);
        return skip();
      case Ctx::kBbox:
        fail("'bbox' must be a list of 4 numbers");
      case Ctx::kPolygon:
        fail("polygon coordinates must be numbers");
      case Ctx::kRleSize:
      case Ctx::kRleCounts:
        fail("RLE 'size' and 'counts' must be lists of integers");
    }
    return true;
  }

  const char* field_name() const {
    switch (field_) {
      case Field::kId: return "id";
      case Field::kWidth: return "width";
      case Field::kHeight: return "height";
      case Field::kFileName: return "file_name";
      case Field::kImageId: return "image_id";
      case Field::kCategoryId: return "category_id";
      case Field::kIsCrowd: return "iscrowd";
      default: return "?";
    }
  }

  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const Ctx done = top();
    stack_.pop_back();
    switch (done) {
      case Ctx::kElement:
        finish_element();
        break;
      case Ctx::kBbox:
        if (bbox_count_ != 4) fail(detail::concat("'bbox' must have 4 numbers, not ", bbox_count_));
        break;
      case Ctx::kPolygon: {
        if ((coords() - polygon_begin_) % 2 != 0) fail("a polygon has an odd number of coordinates");
        index_.polygons.push_back({polygon_begin_ / 2, coords() / 2});
        obj_.polygons.end = int64_t(index_.polygons.size());
        break;
      }
      case Ctx::kRle:
        finish_rle();
        break;
      default:
        break;
    }
    // A value that was a container ends its key (the next key sets the next field).
    if (done != Ctx::kPolygon) field_ = Field::kOther;
    return true;
  }

  // Polygon coordinates kept so far (one list or the other, as the options say).
  int64_t coords() const {
    return int64_t(opt_.polygons ? index_.vertices.size() : index_.grid_vertices.size());
  }

  bool push(Ctx c) {
    stack_.push_back(c);
    return true;
  }
  bool skip() {
    skip_ = 1;
    return true;
  }

  void start_element() {
    ++element_;
    field_ = Field::kOther;
    image_ = ImageEntry{};
    image_.entry = element_;
    obj_ = CocoObject{};
    obj_.entry = element_;
    obj_.polygons = {int64_t(index_.polygons.size()), int64_t(index_.polygons.size())};
    ref_ = ObjectRefs{};
    has_id_ = has_file_ = has_image_id_ = has_category_ = crowd_ = false;
    bbox_count_ = -1;
  }

  void finish_rle() {
    if (rle_size_.size() != 2 || rle_size_[0] <= 0 || rle_size_[1] <= 0) {
      fail("RLE 'size' must be [height, width], both positive");
    }
    const CocoRange counts{rle_counts_begin_, int64_t(index_.rle_counts.size())};
    if (counts.size() == 0) fail("RLE 'counts' is missing or empty");
    const std::span<const uint32_t> c(index_.rle_counts.data() + counts.begin,
                                      size_t(counts.size()));
    if (!rle_covers(c, rle_size_[0], rle_size_[1])) {
      fail(detail::concat("RLE 'counts' do not add up to its size ", rle_size_[0], "x",
                          rle_size_[1]));
    }
    index_.rles.push_back(CocoRle{rle_size_[0], rle_size_[1], counts});
    obj_.rle = int64_t(index_.rles.size()) - 1;
  }

  void finish_element() {
    switch (section_) {
      case Section::kImages:
        if (!has_id_) fail("the image has no 'id'");
        if (!has_file_) fail("the image has no 'file_name'");
        if (opt_.need_image_sizes && (image_.width <= 0 || image_.height <= 0)) {
          fail("the image needs a positive 'width' and 'height' (for relative coordinates or "
               "pixel-wise masks)");
        }
        // A pixel-wise mask is allocated from these: they must be an image's.
        if (opt_.pixel_masks && (image_.width > kMaxSide || image_.height > kMaxSide ||
                          image_.width * image_.height > kMaxPixels)) {
          fail(detail::concat("the image is ", image_.width, "x", image_.height,
                              " pixels; pixel-wise masks are made for images up to ", kMaxSide,
                              " pixels a side and ", kMaxPixels, " pixels"));
        }
        images.push_back(std::move(image_));
        break;
      case Section::kCategories:
        if (!has_id_) fail("the category has no 'id'");
        categories.push_back(image_.id);
        break;
      case Section::kAnnotations: {
        if (!has_image_id_) fail("the annotation has no 'image_id'");
        if (!has_category_) fail("the annotation has no 'category_id'");
        if (bbox_count_ != 4) fail("the annotation has no 'bbox'");
        const bool keep = (!crowd_ || opt_.include_iscrowd) &&
                          obj_.box[2] >= opt_.size_threshold && obj_.box[3] >= opt_.size_threshold;
        if (!keep) {  // drop the masks it added
          if (obj_.polygons.size() > 0) {
            const auto first = size_t(index_.polygons[size_t(obj_.polygons.begin)].begin) * 2;
            index_.vertices.resize(std::min(index_.vertices.size(), first));
            index_.grid_vertices.resize(std::min(index_.grid_vertices.size(), first));
          }
          index_.polygons.resize(size_t(obj_.polygons.begin));
          if (obj_.rle >= 0) {
            index_.rle_counts.resize(size_t(index_.rles[size_t(obj_.rle)].counts.begin));
            index_.rles.pop_back();
          }
          break;
        }
        if (opt_.ltrb) {
          obj_.box[2] += obj_.box[0];
          obj_.box[3] += obj_.box[1];
        }
        index_.objects.push_back(obj_);
        refs.push_back(ref_);
        break;
      }
      case Section::kOther:
        break;
    }
  }

  const std::string& path_;
  const CocoOptions& opt_;
  CocoIndex& index_;
  std::vector<Ctx> stack_;
  int64_t skip_ = 0;
  Section section_ = Section::kOther;
  Field field_ = Field::kOther;
  int64_t element_ = -1;
  ImageEntry image_;
  CocoObject obj_;
  ObjectRefs ref_;
  bool has_id_ = false, has_file_ = false, has_image_id_ = false, has_category_ = false;
  bool crowd_ = false;
  int bbox_count_ = -1;
  int64_t polygon_begin_ = 0, rle_counts_begin_ = 0;
  std::vector<int64_t> rle_size_;
};

// The labels: category ids as they are, or numbered 1..N in `categories` order (DALI's
// remapping; a repeated id keeps its first number, and the numbering still advances).
void label_objects(CocoIndex& index, const CocoEvents& events, const std::string& path,
                   const CocoOptions& o) {
  std::unordered_map<int64_t, int32_t> numbers;
  if (!o.keep_category_ids) {
    for (size_t k = 0; k < events.categories.size(); ++k) {
      numbers.emplace(events.categories[k], int32_t(k + 1));
    }
  }
  for (size_t k = 0; k < index.objects.size(); ++k) {
    const int64_t id = events.refs[k].category_id;
    auto& object = index.objects[k];
    if (o.keep_category_ids) {
      STOKER_ENFORCE(id >= std::numeric_limits<int32_t>::min() &&
                         id <= std::numeric_limits<int32_t>::max(),
                     ValueError, path, ": annotations[", object.entry, "]: category_id ", id,
                     " does not fit a 32-bit label");
      object.label = int32_t(id);
      continue;
    }
    auto it = numbers.find(id);
    // (DALI labels such objects 0, the background class.)
    STOKER_ENFORCE(it != numbers.end(), ValueError, path, ": annotations[", object.entry,
                   "]: category_id ", id, " is not in 'categories'");
    object.label = it->second;
  }
}

// A mask is drawn on its image: RLE sizes must be the image's, polygon vertices near it (the
// rasteriser's time grows with a polygon's length).
void check_masks_fit(const CocoIndex& index, const CocoObject& object, const ImageEntry& image,
                     const std::string& path) {
  if (object.rle >= 0) {
    const auto& rle = index.rles[size_t(object.rle)];
    STOKER_ENFORCE(rle.h == image.height && rle.w == image.width, ValueError, path,
                   ": annotations[", object.entry, "]: its RLE mask is ", rle.h, "x", rle.w,
                   " (height x width) but image ", image.id, " is ", image.height, "x",
                   image.width);
  }
  // Up to the image's larger side (and at least 256 pixels) beyond each edge; on the grid,
  // 5 steps a pixel.
  const int64_t margin = 5 * std::max<int64_t>({image.width, image.height, 256});
  const int64_t w = 5 * image.width, h = 5 * image.height;
  for (int64_t p = object.polygons.begin; p < object.polygons.end; ++p) {
    const auto& poly = index.polygons[size_t(p)];
    for (int64_t v = poly.begin; v < poly.end; ++v) {
      const int64_t x = index.grid_vertices[size_t(2 * v)];
      const int64_t y = index.grid_vertices[size_t(2 * v + 1)];
      STOKER_ENFORCE(x >= -margin && x <= w + margin && y >= -margin && y <= h + margin,
                     ValueError, path, ": annotations[", object.entry, "]: polygon vertex (",
                     double(x) / 5, ", ", double(y) / 5, ") lies far outside its ", image.width,
                     "x", image.height, " image");
    }
  }
}

// Orders the images, gives each its objects (in file order) and drops what is not read.
void build_samples(CocoIndex& index, CocoEvents& events, const std::string& path,
                   const CocoOptions& o) {
  auto& images = events.images;
  std::unordered_map<int64_t, size_t> by_id;
  std::unordered_map<std::string_view, size_t> by_name;
  by_id.reserve(images.size());
  by_name.reserve(images.size());
  for (size_t k = 0; k < images.size(); ++k) {
    auto [id_at, new_id] = by_id.emplace(images[k].id, k);
    STOKER_ENFORCE(new_id, ValueError, path, ": images[", images[k].entry, "] has the id ",
                   images[k].id, " of images[", images[id_at->second].entry, "]");
    auto [name_at, new_name] = by_name.emplace(images[k].file_name, k);
    STOKER_ENFORCE(new_name, ValueError, path, ": images[", images[k].entry,
                   "] has the file_name '", images[k].file_name, "' of images[",
                   images[name_at->second].entry, "]");
  }
  // Each image's objects, in file order (a counting sort by image).
  std::vector<int64_t> first(images.size() + 1, 0);
  std::vector<int64_t> image_of(index.objects.size(), -1);
  for (size_t k = 0; k < index.objects.size(); ++k) {
    auto it = by_id.find(events.refs[k].image_id);
    if (it == by_id.end()) continue;  // an annotation of an image not listed: unused
    image_of[k] = int64_t(it->second);
    ++first[it->second + 1];
  }
  for (size_t k = 0; k < images.size(); ++k) first[k + 1] += first[k];
  std::vector<int64_t> objects_of(size_t(first.back()));
  {
    std::vector<int64_t> fill(first.begin(), first.end() - 1);
    for (size_t k = 0; k < index.objects.size(); ++k) {
      if (image_of[k] >= 0) objects_of[size_t(fill[size_t(image_of[k])]++)] = int64_t(k);
    }
  }

  std::vector<size_t> order;
  if (o.images.empty()) {
    order.resize(images.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return images[a].id < images[b].id; });
  } else {
    for (size_t k = 0; k < o.images.size(); ++k) {
      auto it = by_name.find(o.images[k]);
      STOKER_ENFORCE(it != by_name.end(), ValueError, "images[", k, "] '", o.images[k],
                     "' is not an image of ", path);
      order.push_back(it->second);
    }
  }
  for (size_t k : order) {
    const auto& image = images[k];
    const int64_t begin = first[k], end = first[k + 1];
    if (o.skip_empty && begin == end) continue;
    CocoSample sample{image.file_name, image.id, image.width, image.height, {}};
    sample.objects.begin = int64_t(index.sample_objects.size());
    for (int64_t j = begin; j < end; ++j) {
      const int64_t object = objects_of[size_t(j)];
      if (o.pixel_masks) check_masks_fit(index, index.objects[size_t(object)], image, path);
      index.sample_objects.push_back(object);
    }
    sample.objects.end = int64_t(index.sample_objects.size());
    index.samples.push_back(std::move(sample));
  }
}

}  // namespace

CocoIndex parse_coco_annotations_text(std::string_view text, const std::string& path,
                                      const CocoOptions& options) {
  CocoIndex index;
  CocoEvents events(path, options, index);
  parse_json_events(text, events, path);
  label_objects(index, events, path, options);
  build_samples(index, events, path, options);
  return index;
}

CocoIndex parse_coco_annotations(const std::string& path, const CocoOptions& options) {
  // Mapped, not copied: the text is read once, front to back.
  MemoryPool pool(make_host_allocator());
  FileBytes bytes;
  try {
    bytes = DataFile(path, FileOptions{}).read_all(pool, /*touch=*/false);
  } catch (const IOError& e) {
    throw IOError(detail::concat("cannot read annotations_file: ", e.what()));
  }
  return parse_coco_annotations_text(
      {reinterpret_cast<const char*>(bytes.data), bytes.size}, path, options);
}

}  // namespace stoker::readers
