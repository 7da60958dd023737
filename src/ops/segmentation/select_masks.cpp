#include "stoker/ops/segmentation/select_masks.hpp"

#include <cstring>
#include <unordered_map>
#include <vector>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class SelectMasks final : public Operator {
 public:
  explicit SelectMasks(const OpSpec& spec)
      : Operator(spec), reindex_(spec.arg<bool>("reindex_masks")) {}

  void run(Workspace& ws) override {
    const Batch& ids = ws.input(0);
    const Batch& polygons = ws.input(1);
    const Batch& vertices = ws.input(2);
    STOKER_ENFORCE(polygons.dtype() == DType::kI32, TypeError,
                   "segmentation.select_masks: polygons must be int32, got ",
                   dtype_name(polygons.dtype()));
    const int n = ids.size();
    std::vector<std::vector<int32_t>> out_polygons(static_cast<size_t>(n));
    std::vector<std::vector<int64_t>> out_rows(static_cast<size_t>(n));  // vertex rows taken
    for_each_sample(ws, n, [&](int i, int) {
      select(i, sample_as_doubles(ids, i), polygons, vertices, out_polygons[size_t(i)],
             out_rows[size_t(i)]);
    });
    std::vector<TensorShape> pshapes, vshapes;
    for (int i = 0; i < n; ++i) {
      pshapes.emplace_back(std::vector<int64_t>{int64_t(out_polygons[size_t(i)].size() / 3), 3});
      vshapes.emplace_back(
          std::vector<int64_t>{int64_t(out_rows[size_t(i)].size()), vertices.shape(i)[1]});
    }
    Batch& po = add_output(ws, DType::kI32, pshapes, TensorLayout());
    Batch& vo = add_output(ws, vertices.dtype(), vshapes, vertices.layout());
    const size_t row_bytes_per_coord = dtype_size(vertices.dtype());
    for (int i = 0; i < n; ++i) {
      // No mask selected: both buffers may be null, which memcpy may not be given even for 0.
      if (!out_polygons[size_t(i)].empty())
        std::memcpy(po.data(i), out_polygons[size_t(i)].data(),
                    out_polygons[size_t(i)].size() * sizeof(int32_t));
      const size_t row = size_t(vertices.shape(i)[1]) * row_bytes_per_coord;
      const auto* src = static_cast<const uint8_t*>(vertices.data(i));
      auto* dst = static_cast<uint8_t*>(vo.data(i));
      for (int64_t r : out_rows[size_t(i)]) {
        std::memcpy(dst, src + size_t(r) * row, row);
        dst += row;
      }
    }
  }

 private:
  // Every polygon of each selected mask, masks in `mask_ids` order, polygons in input order;
  // their vertices renumbered in that order.
  void select(int i, const std::vector<double>& mask_ids, const Batch& polygons,
              const Batch& vertices, std::vector<int32_t>& out, std::vector<int64_t>& rows) const {
    const auto& ps = polygons.shape(i);
    const auto& vs = vertices.shape(i);
    STOKER_ENFORCE(ps.ndim() == 2 && ps[1] == 3, ValueError, "segmentation.select_masks: sample ",
                   i, ": polygons are [polygons, 3] rows of (mask id, first vertex, end vertex), "
                   "got ", ps.to_string());
    STOKER_ENFORCE(vs.ndim() == 2, ValueError, "segmentation.select_masks: sample ", i,
                   ": vertices are [vertices, coordinates], got ", vs.to_string());
    const auto* p = static_cast<const int32_t*>(polygons.data(i));
    std::unordered_map<int64_t, size_t> position;  // mask id -> its place in mask_ids
    for (size_t k = 0; k < mask_ids.size(); ++k) {
      const bool fresh = position.emplace(int64_t(mask_ids[k]), k).second;
      STOKER_ENFORCE(fresh, ValueError, "segmentation.select_masks: sample ", i, ": mask id ",
                     int64_t(mask_ids[k]), " is selected twice");
    }
    std::vector<std::vector<int64_t>> per_mask(mask_ids.size());
    for (int64_t q = 0; q < ps[0]; ++q) {
      const int32_t first = p[3 * q + 1], end = p[3 * q + 2];
      STOKER_ENFORCE(first >= 0 && first <= end && end <= vs[0], ValueError,
                     "segmentation.select_masks: sample ", i, ": polygon ", q, " has vertices [",
                     first, ", ", end, ") of ", vs[0]);
      auto it = position.find(p[3 * q]);
      if (it != position.end()) per_mask[it->second].push_back(q);
    }
    for (size_t k = 0; k < per_mask.size(); ++k) {
      STOKER_ENFORCE(!per_mask[k].empty(), ValueError, "segmentation.select_masks: sample ", i,
                     ": mask id ", int64_t(mask_ids[k]), " has no polygon");
      for (int64_t q : per_mask[k]) {
        const int32_t first = p[3 * q + 1], end = p[3 * q + 2];
        out.push_back(reindex_ ? int32_t(k) : p[3 * q]);
        out.push_back(int32_t(rows.size()));
        out.push_back(int32_t(rows.size()) + (end - first));
        for (int32_t v = first; v < end; ++v) rows.push_back(v);
      }
    }
  }

  bool reindex_;
};

}  // namespace

OpSchema select_masks_schema() {
  return {
      .name = "segmentation.select_masks",
      .doc =
          "Keeps the polygons of the masks listed in `mask_ids` (as DALI's "
          "segmentation.select_masks; polygons and vertices as readers.coco gives them): every "
          "polygon of each selected mask, the masks in mask_ids order, and the vertices they "
          "use, renumbered. With reindex_masks a polygon's mask id becomes the mask's position "
          "in mask_ids. Vertices may have any number of coordinates and any type.",
      .inputs = {"mask_ids", "polygons", "vertices"},
      .outputs = {"polygons", "vertices"},
      .args = {{"reindex_masks", ArgType::kBool,
                "Replace mask ids by their positions in mask_ids.", false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<SelectMasks>(s); },
      .example = OpExample{.args = {}, .dtype = "int32", .layout = ""},
  };
}

}  // namespace stoker::ops
