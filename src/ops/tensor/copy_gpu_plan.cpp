#include "stoker/ops/tensor/copy_gpu_plan.hpp"

#ifdef STOKER_HAVE_CUDA
#include <algorithm>
#include <cstring>

namespace stoker::ops {

kernels::StridedCopy copy_desc(const void* in, void* out, const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& out_stride,
                                  const std::vector<int64_t>& in_stride,
                                  const std::vector<int64_t>& in_shape, const std::string& op,
                                  const std::vector<int64_t>& in_start, uint64_t fill) {
  STOKER_ENFORCE(shape.size() <= size_t(kernels::kCopyMaxDims), ValueError, op, " (gpu): at most ",
                 kernels::kCopyMaxDims, " dimensions, got ", shape.size());
  kernels::StridedCopy d;
  d.in = in, d.out = out, d.ndim = int32_t(shape.size()), d.count = 1, d.fill = fill;
  for (size_t k = 0; k < shape.size(); ++k) {
    d.shape[k] = shape[k], d.out_stride[k] = out_stride[k], d.in_stride[k] = in_stride[k];
    d.in_shape[k] = in_shape[k], d.count *= shape[k];
    d.in_start[k] = in_start.empty() ? 0 : in_start[k];
  }
  return d;
}

void run_copies(const Operator& op, Workspace& ws, const std::vector<kernels::StridedCopy>& d,
                size_t element_size) {
  if (d.empty()) return;
  int64_t most = 0;
  for (const auto& c : d) most = std::max(most, c.count);
  auto device = upload(ws, d);
  cuda_check(kernels::strided_copy_gpu(static_cast<const kernels::StridedCopy*>(device->data()),
                                       int(d.size()), most, int(element_size), ws.stream),
             op.spec().schema->name + " (gpu): launching the copy kernel");
}

}  // namespace stoker::ops
#endif  // STOKER_HAVE_CUDA
