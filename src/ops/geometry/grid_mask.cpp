// grid_mask (CPU and GPU): per-sample constants on the host (kernels::grid_mask_setup), then
// one kernel per image on the CPU or one launch per batch on the GPU.
#include "stoker/ops/geometry/grid_mask.hpp"

#include <cstdint>
#include <vector>

#include "stoker/kernels/geometry/displacement_cpu.hpp"
#include "stoker/kernels/geometry/displacement_gpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using kernels::GridMaskSample;

class GridMask : public Operator {
 public:
  using Operator::Operator;

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto desc = plan(ws, in);
    Batch& out = add_output(ws, in.dtype(), shapes(in), in.layout());
    for_each_sample(ws, in.size(), [&](int i, int) {
      GridMaskSample s = desc[size_t(i)];
      s.in = in.data(i), s.out = out.data(i);
      const int64_t c = in.shape(i)[2];
      switch (in.dtype()) {
        case DType::kU8:
          kernels::grid_mask_cpu<uint8_t>(s, c);
          break;
        case DType::kI16:
          kernels::grid_mask_cpu<int16_t>(s, c);
          break;
        case DType::kI32:
          kernels::grid_mask_cpu<int32_t>(s, c);
          break;
        default:
          kernels::grid_mask_cpu<float>(s, c);
          break;
      }
    });
  }

 protected:
  static std::vector<TensorShape> shapes(const Batch& in) {
    std::vector<TensorShape> out;
    for (int i = 0; i < in.size(); ++i) out.push_back(in.shape(i));
    return out;
  }

  // Checks the batch (3-D HWC samples of uint8, int16, int32 or float32, as DALI's CPU backend)
  // and every sample's arguments; gives the descriptors without data pointers.
  std::vector<GridMaskSample> plan(const Workspace& ws, const Batch& in) const {
    const auto& name = spec_.schema->name;
    const DType t = in.dtype();
    STOKER_ENFORCE(t == DType::kU8 || t == DType::kI16 || t == DType::kI32 || t == DType::kF32,
                   TypeError, name, ": expected uint8, int16, int32 or float32 input, got ",
                   dtype_name(t));
    std::vector<GridMaskSample> desc(static_cast<size_t>(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 3, ValueError, name, ": sample ", i,
                     ": expected an HWC image (3 dimensions), got shape ", s.to_string());
      const double tile_arg = scalar_arg(ws, "tile", i);
      const int64_t tile = tile_arg >= 1 && tile_arg < 9e18 ? int64_t(tile_arg) : 0;
      STOKER_ENFORCE(tile > 0, ValueError, name, ": sample ", i, ": tile must be positive, got ",
                     tile_arg);
      auto& d = desc[size_t(i)];
      d.h = s[0], d.w = s[1];
      kernels::grid_mask_setup(
          d, tile, float(scalar_arg(ws, "ratio", i)), float(scalar_arg(ws, "angle", i)),
          float(scalar_arg(ws, "shift_x", i)), float(scalar_arg(ws, "shift_y", i)));
    }
    return desc;
  }
};

#ifdef STOKER_HAVE_CUDA
class GridMaskGpu final : public GridMask {
 public:
  using GridMask::GridMask;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const auto& name = spec_.schema->name;
    auto desc = plan(ws, in);
    Batch& out = add_output(ws, in.dtype(), shapes(in), in.layout());
    if (n == 0) return;
    const int64_t C = in.shape(0)[2];
    int64_t sum_h = 0, sum_w = 0;
    for (int i = 0; i < n; ++i) {
      STOKER_ENFORCE(in.shape(i)[2] == C, ValueError, name,
                     " (gpu): every sample needs the same channel count; sample ", i, " has ",
                     in.shape(i)[2], ", sample 0 ", C);
      desc[size_t(i)].in = in.data(i), desc[size_t(i)].out = out.data(i);
      sum_h += desc[size_t(i)].h, sum_w += desc[size_t(i)].w;
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::grid_mask_gpu(static_cast<const GridMaskSample*>(device->data()), n,
                                      (sum_h + n - 1) / n, (sum_w + n - 1) / n, int(C), in.dtype(),
                                      ws.stream),
               name + " (gpu): launching the kernel");
  }
};
#endif

}  // namespace

OpSchema grid_mask_schema() {
  return OpSchema{
      .name = "grid_mask",
      .doc =
          "GridMask augmentation (https://arxiv.org/abs/2001.04086, as DALI's grid_mask): "
          "zeroes squares of a grid of `tile`-pixel tiles, each square `ratio` of the tile "
          "wide, rotated by `angle` radians about the origin and then shifted by (shift_x, "
          "shift_y). Pixel (x, y) is kept when either coordinate of its position in tile "
          "units, (x cos a - y sin a - shift_x, x sin a + y cos a - shift_y) / tile, has a "
          "fractional part >= ratio. 3-D HWC samples of uint8, int16, int32 or float32.",
      .inputs = {"input"},
      .outputs = {"output"},
      .args = {{"tile", ArgType::kInt,
                "Tile length in pixels: a black square plus the gap to the next one.", int64_t{100},
                true},
               {"ratio", ArgType::kFloat, "The black square's width over the tile's.", 0.5, true},
               {"angle", ArgType::kFloat, "Rotation of the grid, in radians.", 0.0, true},
               {"shift_x", ArgType::kFloat, "x of the translation, applied after rotation.", 0.0,
                true},
               {"shift_y", ArgType::kFloat, "y of the translation, applied after rotation.", 0.0,
                true}},
      .make_cpu = [](const OpSpec& sp) { return std::make_unique<GridMask>(sp); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& sp) { return std::make_unique<GridMaskGpu>(sp); },
#endif
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
