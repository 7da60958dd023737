#include "stoker/ops/readers/coco_reader.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/coco_index.hpp"
#include "stoker/readers/coco_masks.hpp"

namespace stoker::ops {
namespace {

using readers::CocoIndex;
using readers::SampleData;

struct CocoOutputs {
  bool polygons = false, pixelwise = false, image_ids = false;
};

CocoOutputs coco_outputs(const OpSpec& spec) {
  CocoOutputs o{spec.arg<bool>("polygon_masks"), spec.arg<bool>("pixelwise_masks"),
                spec.arg<bool>("image_ids")};
  STOKER_ENFORCE(!(o.polygons && o.pixelwise), ValueError,
                 "readers.coco: polygon_masks and pixelwise_masks cannot both be set");
  return o;
}

std::vector<std::string> coco_output_names(const OpSpec& spec) {
  const auto o = coco_outputs(spec);
  std::vector<std::string> names{"images", "bboxes", "labels"};
  if (o.polygons) names.insert(names.end(), {"polygons", "vertices"});
  if (o.pixelwise) names.push_back("pixelwise_masks");
  if (o.image_ids) names.push_back("image_ids");
  return names;
}

// A pooled buffer for `count` values of T, and the SampleData viewing it.
template <typename T>
std::pair<T*, SampleData> pooled(MemoryPool& pool, int64_t count, TensorShape shape) {
  auto buf = pool.acquire(size_t(std::max<int64_t>(count, 1)) * sizeof(T));
  T* data = static_cast<T*>(buf->data());
  return {data, SampleData{std::move(buf), data, std::move(shape)}};
}

class CocoSource final : public ReaderSource {
 public:
  explicit CocoSource(const OpSpec& spec)
      : spec_(spec), out_(coco_outputs(spec)), files_(file_options(spec)),
        ratio_(spec.arg<bool>("ratio")), file_root_(spec.arg<std::string>("file_root")) {}

  std::vector<DType> output_dtypes() const override {
    std::vector<DType> d{DType::kU8, DType::kF32, DType::kI32};
    if (out_.polygons) {
      d.push_back(DType::kI32);
      d.push_back(DType::kF32);
    }
    if (out_.pixelwise) d.push_back(DType::kI32);
    if (out_.image_ids) d.push_back(DType::kI32);
    return d;
  }
  TensorLayout output_layout(size_t k) const override {
    return out_.pixelwise && k == 3 ? TensorLayout("HWC") : TensorLayout();
  }
  std::string source_info(int64_t index) const override { return path_of(index); }

  int64_t build_index() override {
    const auto file = spec_.arg<std::string>("annotations_file");
    STOKER_ENFORCE(!file.empty(), ValueError, "readers.coco: give `annotations_file`");
    readers::CocoOptions o;
    o.ltrb = spec_.arg<bool>("ltrb");
    o.skip_empty = spec_.arg<bool>("skip_empty");
    o.size_threshold = float(spec_.arg<double>("size_threshold"));
    o.include_iscrowd = spec_.arg<bool>("include_iscrowd");
    o.keep_category_ids = spec_.arg<bool>("avoid_class_remapping");
    o.polygons = out_.polygons;
    o.pixel_masks = out_.pixelwise;
    o.need_image_sizes = ratio_ || out_.pixelwise;
    o.images = spec_.arg<std::vector<std::string>>("images");
    index_ = readers::parse_coco_annotations(file, o);
    STOKER_ENFORCE(!index_.samples.empty(), ValueError, "readers.coco: ", file,
                   " gives no images to read", o.skip_empty ? " (skip_empty is set)" : "");
    return int64_t(index_.samples.size());
  }

  void load(readers::LoadedSample& s, MemoryPool& pool) const override {
    const auto& sample = index_.samples[size_t(s.index)];
    auto bytes = readers::read_whole_file(path_of(s.index), files_, pool);
    s.outputs.clear();
    s.outputs.push_back({std::move(bytes.owner), bytes.data, TensorShape{int64_t(bytes.size)}});

    const int64_t n = sample.objects.size();
    const int64_t* objects = index_.sample_objects.data() + sample.objects.begin;
    auto [boxes, boxes_out] = pooled<float>(pool, 4 * n, TensorShape{n, 4});
    auto [labels, labels_out] = pooled<int32_t>(pool, n, TensorShape{n});
    // Relative coordinates divide by the image's size as the annotations give it (DALI's).
    const float sx = ratio_ ? float(sample.width) : 1.f;
    const float sy = ratio_ ? float(sample.height) : 1.f;
    for (int64_t k = 0; k < n; ++k) {
      const auto& object = index_.objects[size_t(objects[k])];
      for (int c = 0; c < 4; ++c) boxes[4 * k + c] = object.box[c] / (c % 2 == 0 ? sx : sy);
      labels[k] = object.label;
    }
    s.outputs.push_back(std::move(boxes_out));
    s.outputs.push_back(std::move(labels_out));
    if (out_.polygons) polygon_outputs(sample, s, pool, sx, sy);
    if (out_.pixelwise) s.outputs.push_back(pixelwise_mask(sample, pool));
    if (out_.image_ids) {
      auto [id, id_out] = pooled<int32_t>(pool, 1, TensorShape{1});
      *id = int32_t(sample.image_id);
      s.outputs.push_back(std::move(id_out));
    }
  }

 private:
  std::string path_of(int64_t index) const {
    const auto& name = index_.samples[size_t(index)].file_name;
    return file_root_.empty() ? name : (std::filesystem::path(file_root_) / name).string();
  }

  // DALI's polygons output: (object, first vertex, end vertex) per polygon, the vertices
  // numbered within the sample; and the vertices, x y per row.
  void polygon_outputs(const readers::CocoSample& sample, readers::LoadedSample& s,
                       MemoryPool& pool, float sx, float sy) const {
    const int64_t* objects = index_.sample_objects.data() + sample.objects.begin;
    int64_t polygons = 0, vertices = 0;
    for (int64_t k = 0; k < sample.objects.size(); ++k) {
      const auto& object = index_.objects[size_t(objects[k])];
      polygons += object.polygons.size();
      for (int64_t p = object.polygons.begin; p < object.polygons.end; ++p) {
        vertices += index_.polygons[size_t(p)].size();
      }
    }
    auto [poly, poly_out] = pooled<int32_t>(pool, 3 * polygons, TensorShape{polygons, 3});
    auto [vert, vert_out] = pooled<float>(pool, 2 * vertices, TensorShape{vertices, 2});
    int64_t next_vertex = 0;
    for (int64_t k = 0; k < sample.objects.size(); ++k) {
      const auto& object = index_.objects[size_t(objects[k])];
      for (int64_t p = object.polygons.begin; p < object.polygons.end; ++p) {
        const auto& range = index_.polygons[size_t(p)];
        *poly++ = int32_t(k);
        *poly++ = int32_t(next_vertex);
        *poly++ = int32_t(next_vertex + range.size());
        for (int64_t v = range.begin; v < range.end; ++v) {
          *vert++ = index_.vertices[size_t(2 * v)] / sx;
          *vert++ = index_.vertices[size_t(2 * v + 1)] / sy;
        }
        next_vertex += range.size();
      }
    }
    s.outputs.push_back(std::move(poly_out));
    s.outputs.push_back(std::move(vert_out));
  }

  // The label of the object covering each pixel (0: none); where objects overlap, the larger
  // label. Polygons are drawn by COCO's rule, crowd RLEs as they are (readers/coco_masks.hpp).
  SampleData pixelwise_mask(const readers::CocoSample& sample, MemoryPool& pool) const {
    const int64_t h = sample.height, w = sample.width;
    auto [mask, mask_out] = pooled<int32_t>(pool, h * w, TensorShape{h, w, 1});
    std::fill_n(mask, h * w, 0);
    const int64_t* objects = index_.sample_objects.data() + sample.objects.begin;
    for (int64_t k = 0; k < sample.objects.size(); ++k) {
      const auto& object = index_.objects[size_t(objects[k])];
      for (int64_t p = object.polygons.begin; p < object.polygons.end; ++p) {
        const auto& range = index_.polygons[size_t(p)];
        const auto counts = readers::rle_from_polygon(
            {index_.grid_vertices.data() + 2 * range.begin, size_t(2 * range.size())}, h, w);
        readers::paint_rle(counts, h, w, object.label, mask);
      }
      if (object.rle >= 0) {
        const auto& rle = index_.rles[size_t(object.rle)];
        readers::paint_rle({index_.rle_counts.data() + rle.counts.begin, size_t(rle.counts.size())},
                           h, w, object.label, mask);
      }
    }
    return std::move(mask_out);
  }

  OpSpec spec_;
  CocoOutputs out_;
  readers::FileOptions files_;
  bool ratio_;
  std::string file_root_;
  CocoIndex index_;  // built once, then read-only
};

}  // namespace

OpSchema coco_reader_schema() {
  OpSchema schema{
      .name = "readers.coco",
      .doc =
          "Reads a COCO dataset: a folder of images and an annotations file (instances_*.json). "
          "Outputs, as DALI's: images (the encoded bytes, uint8 1-D), bboxes (float32, one row "
          "of 4 per object: [x, y, w, h], or [l, t, r, b] with `ltrb`), labels (int32, one per "
          "object); with `polygon_masks` polygons (int32 rows of [object, first vertex, end "
          "vertex]) and vertices (float32 rows of [x, y]); with `pixelwise_masks` a mask "
          "(int32, HWC with one channel: the label of the object at each pixel, 0 where none; "
          "where objects overlap, the larger label; crowd RLE masks included); with "
          "`image_ids` the image's id (int32, shape (1,)). Images are read in the order of "
          "their ids (or as `images` lists them), objects in the file's order. The file is "
          "parsed in one pass without building a document tree.",
      .output_names = coco_output_names,
      .args =
          {
              {"file_root", ArgType::kString, "Folder the images' file_name are relative to.",
               std::string()},
              {"annotations_file", ArgType::kString, "The COCO annotations JSON file.",
               std::string()},
              {"ltrb", ArgType::kBool, "Boxes as [left, top, right, bottom].", false},
              {"ratio", ArgType::kBool,
               "Box and vertex coordinates relative to the image's width and height (as the "
               "annotations give them).",
               false},
              {"skip_empty", ArgType::kBool, "Skip images that have no objects.", false},
              {"size_threshold", ArgType::kFloat,
               "Drop objects whose box is narrower or lower than this (pixels).", 0.1},
              {"include_iscrowd", ArgType::kBool, "Keep objects marked iscrowd=1.", true},
              {"avoid_class_remapping", ArgType::kBool,
               "Labels are the category ids of the file (default: the categories numbered 1, "
               "2, ... in the order the file lists them; 0 is left for the background).",
               false},
              {"polygon_masks", ArgType::kBool, "Output polygons and vertices.", false},
              {"pixelwise_masks", ArgType::kBool,
               "Output a mask per image (the images' width and height must be in the file).",
               false},
              {"image_ids", ArgType::kBool, "Output each image's id.", false},
              {"images", ArgType::kStringList,
               "Read only these images (file_name as in the annotations), in this order; a "
               "name given twice is read twice.",
               std::vector<std::string>{}},
          },
      .make_cpu = [](const OpSpec& s) { return make_reader<CocoSource>(s); },
      .deprecated_names = {"coco_reader"},
  };
  for (auto& a : loader_arg_schemas()) schema.args.push_back(a);
  return schema;
}

}  // namespace stoker::ops
