#include "stoker/ops/geometry/coord_flip.hpp"

#include <array>
#include <string>
#include <vector>

#include "stoker/kernels/geometry/coord_flip.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class CoordFlip : public Operator {
 public:
  explicit CoordFlip(const OpSpec& spec) : Operator(spec), layout_(spec.arg<std::string>("layout")) {
    for (size_t k = 0; k < layout_.size(); ++k)
      STOKER_ENFORCE((layout_[k] == 'x' || layout_[k] == 'y' || layout_[k] == 'z') &&
                         layout_.find(layout_[k]) == k && layout_.size() <= 3,
                     ValueError, "coord_flip: layout must be made of x, y and z, each once, got '",
                     layout_, "'");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError,
                   "coord_flip: the coordinates must be float32, got ", dtype_name(in.dtype()));
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    const auto params = plan(ws, in);
    for_each_sample(ws, in.size(), [&](int i, int) {
      kernels::coord_flip_cpu(static_cast<float*>(out.data(i)),
                              static_cast<const float*>(in.data(i)), in.shape(i).volume(),
                              params[size_t(i)]);
    });
  }

 protected:
  // Each sample's flips and origins; checks the shapes ([N, D], D the layout's length or 1-3,
  // the same D for every sample, as DALI requires).
  std::vector<kernels::CoordFlip> plan(const Workspace& ws, const Batch& in) const {
    std::vector<kernels::CoordFlip> out(static_cast<size_t>(in.size()));
    int64_t ndim = -1;
    for (int i = 0; i < in.size(); ++i) {
      const auto& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 2, ValueError, "coord_flip: sample ", i,
                     " must be [points, dimensions], got ", s.to_string());
      STOKER_ENFORCE(ndim < 0 || s[1] == ndim, ValueError, "coord_flip: sample ", i, " has ",
                     s[1], " coordinates per point, sample 0 has ", ndim);
      ndim = s[1];
      STOKER_ENFORCE(ndim >= 1 && ndim <= 3, ValueError,
                     "coord_flip: 1 to 3 coordinates per point, got ", ndim);
      const std::string layout = layout_.empty() ? std::string("xyz").substr(0, size_t(ndim))
                                                 : layout_;
      STOKER_ENFORCE(int64_t(layout.size()) == ndim, ValueError, "coord_flip: layout '", layout,
                     "' names ", layout.size(), " coordinates, the points have ", ndim);
      auto& p = out[size_t(i)];
      p.ndim = int32_t(ndim);
      for (size_t d = 0; d < layout.size(); ++d) {
        const std::string axis(1, layout[d]);
        p.flip[d] = scalar_arg(ws, "flip_" + axis, i) != 0;
        p.origin[d] = 2.0f * float(scalar_arg(ws, "center_" + axis, i));
      }
    }
    return out;
  }

 private:
  std::string layout_;
};

#ifdef STOKER_HAVE_CUDA
class CoordFlipGpu final : public CoordFlip {
 public:
  using CoordFlip::CoordFlip;
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kF32, TypeError,
                   "coord_flip: the coordinates must be float32, got ", dtype_name(in.dtype()));
    Batch& out = add_output(ws, DType::kF32, in.shapes(), in.layout());
    if (in.size() == 0) return;
    const auto params = plan(ws, in);
    std::vector<kernels::CoordFlipGpuSample> desc;
    int64_t most = 0;
    for (int i = 0; i < in.size(); ++i) {
      desc.push_back({static_cast<const float*>(in.data(i)), static_cast<float*>(out.data(i)),
                      in.shape(i).volume(), params[size_t(i)]});
      most = std::max(most, desc.back().count);
    }
    auto device = upload(ws, desc);
    cuda_check(kernels::coord_flip_gpu(
                   static_cast<const kernels::CoordFlipGpuSample*>(device->data()),
                   int(desc.size()), most, ws.stream),
               "coord_flip (gpu): launching the kernel");
  }
};
#endif

ArgSchema flip_arg(const char* axis, int64_t on) {
  return {std::string("flip_") + axis, ArgType::kInt,
          std::string("Flip the ") + axis + " coordinate when non-zero.", on, true};
}

ArgSchema center_arg(const char* axis) {
  return {std::string("center_") + axis, ArgType::kFloat,
          std::string("The centre of the flip along ") + axis + ".", 0.5, true};
}

}  // namespace

OpSchema coord_flip_schema() {
  return {
      .name = "coord_flip",
      .doc =
          "Reflects point coordinates about a centre (as DALI): samples are [points, D] float32 "
          "(D = 1 to 3, the same for every sample); coordinate v along a flipped axis becomes "
          "2 * center - v, e.g. normalised coordinates follow a flip of the image they refer "
          "to. `layout` orders the coordinates (default x, xy or xyz by D).",
      .inputs = {"coordinates"},
      .outputs = {"coordinates"},
      .args = {{"layout", ArgType::kString, "The coordinates' order, of x, y and z (\"\": by D).",
                std::string("")},
               flip_arg("x", 1),
               flip_arg("y", 0),
               flip_arg("z", 0),
               center_arg("x"),
               center_arg("y"),
               center_arg("z")},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<CoordFlip>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<CoordFlipGpu>(s); },
#endif
      .example = OpExample{.args = {}, .dtype = "float32", .layout = ""},
  };
}

}  // namespace stoker::ops
