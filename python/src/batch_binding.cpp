// Binding of stoker::Batch: per-sample and whole-batch zero-copy views (DLPack and the buffer
// protocol through nanobind's ndarray), shapes, layout, source info.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>

#include "bindings.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"
#include "stoker/core/mapping_guard.hpp"

namespace stoker::python {
namespace {

nb::dlpack::dtype to_dlpack(DType d) {
  using nb::dlpack::dtype_code;
  auto code = [&] {
    switch (d) {
      case DType::kBool:
        return dtype_code::Bool;
      case DType::kU8:
      case DType::kU16:
      case DType::kU32:
      case DType::kU64:
        return dtype_code::UInt;
      case DType::kI8:
      case DType::kI16:
      case DType::kI32:
      case DType::kI64:
        return dtype_code::Int;
      case DType::kBF16:
        return dtype_code::Bfloat;
      default:
        return dtype_code::Float;
    }
  }();
  return {uint8_t(code), uint8_t(dtype_size(d) * 8), 1};
}

// A capsule that keeps `owner` alive for as long as Python holds the view.
nb::capsule keep_alive(std::shared_ptr<Buffer> owner) {
  auto* held = new std::shared_ptr<Buffer>(std::move(owner));
  return nb::capsule(held,
                     [](void* p) noexcept { delete static_cast<std::shared_ptr<Buffer>*>(p); });
}

// Pinned host memory is exported as CPU memory: consumers read it as such (torch, numpy and
// others refuse DLPack's CUDA-host device type) and find out themselves that it is page-locked.
int dlpack_device(MemoryKind k) {
  return k == MemoryKind::kDevice ? nb::device::cuda::value : nb::device::cpu::value;
}

nb::ndarray<nb::array_api> view(void* data, const std::vector<size_t>& shape, DType dtype,
                                MemoryKind mem, std::shared_ptr<Buffer> owner) {
  // nanobind aborts the interpreter on arrays of very many dimensions: refuse them here.
  STOKER_ENFORCE(shape.size() <= size_t(kMaxNdim) + 1, ValueError, "an array of ", shape.size(),
                 " dimensions cannot be handed over (at most ", kMaxNdim, " per sample)");
  // Device memory says which GPU it is on (a pipeline per GPU in one process).
  const int device_id = mem == MemoryKind::kDevice ? std::max(cuda_device_of(data), 0) : 0;
  return nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), keep_alive(std::move(owner)),
                                    nullptr, to_dlpack(dtype), dlpack_device(mem), device_id);
}

std::vector<size_t> dims(const TensorShape& s) {
  return std::vector<size_t>(s.dims().begin(), s.dims().end());
}

int64_t volume_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) {
    STOKER_ENFORCE(d >= 0, ValueError, "a shape cannot have negative extents, got ", d);
    n *= d;
  }
  return n;
}

// Host samples [first, end) that view a mapped file (zero-copy reads): the file must still hold
// their bytes, else an IOError names it (core/mapping_guard.hpp). Copies are checked again after:
// a file that shrank during the copy read zeros there.
void check_mapped(const Batch& b, int first, int end) {
  if (b.memory() == MemoryKind::kDevice) return;
  for (int i = first; i < end; ++i)
    if (const MappingGuard* g = guarded_mapping(b.data(i), b.sample(i).num_bytes()))
      g->check_size();
}

// Sample i viewed with `shape` (DALI's TensorCPU.reshape/squeeze): same elements, another shape.
nb::ndarray<nb::array_api> sample_view(const Batch& b, int i,
                                       std::optional<std::vector<int64_t>> shape) {
  STOKER_ENFORCE(i >= 0 && i < b.size(), IndexError, "sample index ", i,
                 " out of range for a batch of ", b.size());
  check_mapped(b, i, i + 1);
  if (!shape) return view(b.data(i), dims(b.shape(i)), b.dtype(), b.memory(), b.owner(i));
  STOKER_ENFORCE(volume_of(*shape) == b.shape(i).volume(), ValueError, "cannot view sample ", i,
                 " of shape ", b.shape(i).to_string(), " (", b.shape(i).volume(),
                 " elements) with a shape of ", volume_of(*shape), " elements");
  return view(b.data(i), std::vector<size_t>(shape->begin(), shape->end()), b.dtype(),
              b.memory(), b.owner(i));
}

// The samples of a contiguous batch, back to back, viewed as one tensor of `shape` (DALI's
// as_reshaped_tensor: the samples may differ in shape).
nb::ndarray<nb::array_api> reshaped_view(const Batch& b, const std::vector<int64_t>& shape) {
  int64_t total = 0;
  for (int i = 0; i < b.size(); ++i) total += b.shape(i).volume();
  STOKER_ENFORCE(volume_of(shape) == total, ValueError, "cannot view a batch of ", total,
                 " elements as a tensor of ", volume_of(shape), " elements");
  STOKER_ENFORCE(b.size() > 0, ValueError, "the batch is empty");
  STOKER_ENFORCE(b.is_contiguous(), ValueError,
                 "the batch's samples do not lie back to back in memory: it cannot be viewed as "
                 "one tensor (copy it, e.g. with as_tensor() on the CPU)");
  check_mapped(b, 0, b.size());
  return view(b.data(0), std::vector<size_t>(shape.begin(), shape.end()), b.dtype(), b.memory(),
              b.owner(0));
}

// DALI's copy_to_external: the samples back to back at `dst` (host memory for a CPU batch;
// device or host memory for a GPU batch, copied on `stream` after the batch is ready; the call
// waits for the copy unless non_blocking). `sample` >= 0 copies that sample only.
void copy_to_external(const Batch& b, uintptr_t dst, std::optional<int64_t> stream,
                      bool non_blocking, int sample) {
  STOKER_ENFORCE(sample < b.size(), IndexError, "sample index ", sample,
                 " out of range for a batch of ", b.size());
  const int first = sample < 0 ? 0 : sample, end = sample < 0 ? b.size() : sample + 1;
  STOKER_ENFORCE(dst != 0, ValueError, "copy_to_external: the destination pointer is null");
  auto* out = reinterpret_cast<uint8_t*>(dst);
  if (b.memory() != MemoryKind::kDevice) {
    check_mapped(b, first, end);
    for (int i = first; i < end; ++i) {
      const size_t n = b.sample(i).num_bytes();
      if (n) std::memcpy(out, b.data(i), n);
      out += n;
    }
    check_mapped(b, first, end);
    return;
  }
  auto handle = reinterpret_cast<StreamHandle>(static_cast<intptr_t>(stream.value_or(0)));
  const bool to_device = cuda_device_of(out) >= 0;
  nb::gil_scoped_release release;
  if (b.ready_event()) b.ready_event()->wait_on(handle);
  for (int i = first; i < end; ++i) {
    const size_t n = b.sample(i).num_bytes();
    if (n && to_device) copy_device_async(out, b.data(i), n, handle);
    if (n && !to_device) copy_to_host_async(out, b.data(i), n, handle);
    out += n;
  }
  b.record_stream(handle);
  if (!non_blocking) synchronize_stream(handle);
}

// The whole batch as one (N, ...) array: a view when the batch is contiguous, else a copy.
nb::ndarray<nb::array_api> batch_view(const Batch& b) {
  STOKER_ENFORCE(b.size() > 0, ValueError, "the batch is empty");
  if (!b.is_uniform()) {
    int j = 1;
    while (b.shape(j) == b.shape(0)) ++j;
    throw ValueError(detail::concat(
        "the batch is not uniform: sample 0 has shape ", b.shape(0).to_string(), " but sample ", j,
        " has ", b.shape(j).to_string(), "; access samples one by one (batch[i])"));
  }
  std::vector<size_t> shape{size_t(b.size())};
  for (auto d : b.shape(0).dims()) shape.push_back(size_t(d));
  check_mapped(b, 0, b.size());
  if (b.is_contiguous()) return view(b.data(0), shape, b.dtype(), b.memory(), b.owner(0));
  STOKER_ENFORCE(b.memory() != MemoryKind::kDevice, ValueError,
                 "a non-contiguous device batch cannot be viewed as one array");
  auto copy = default_host_pool().acquire(b.total_bytes());
  auto* p = static_cast<uint8_t*>(copy->data());
  for (int i = 0; i < b.size(); ++i) {
    size_t n = b.sample(i).num_bytes();
    std::memcpy(p, b.data(i), n);
    p += n;
  }
  check_mapped(b, 0, b.size());
  void* data = copy->data();
  return view(data, shape, b.dtype(), MemoryKind::kHost, std::move(copy));
}

// DLPack's stream argument for CUDA: None or 1 the legacy default stream, 2 the per-thread
// default stream, -1 no synchronisation, anything else a cudaStream_t.
void prepare_for_consumer(const Batch& b, std::optional<int64_t> stream) {
  if (b.memory() != MemoryKind::kDevice) return;
  const int64_t s = stream.value_or(1);
  STOKER_ENFORCE(s != 0, ValueError,
                 "stream 0 is ambiguous in DLPack; pass 1 (legacy default) or 2 (per-thread)");
  if (s == -1) return;
  auto handle = reinterpret_cast<StreamHandle>(static_cast<intptr_t>(s));
  nb::gil_scoped_release release;
  if (b.ready_event()) b.ready_event()->wait_on(handle);
  // The consumer's work on `handle` reads these buffers: they are recycled only after it.
  b.record_stream(handle);
}

// A host copy of a device batch (waits for the batch to be ready).
Batch to_host(const Batch& b) {
  if (b.memory() != MemoryKind::kDevice) return b;
  std::vector<TensorShape> shapes;
  shapes.reserve(size_t(b.size()));
  for (int i = 0; i < b.size(); ++i) shapes.push_back(b.shape(i));
  Batch out = Batch::allocate(default_host_pool(), b.dtype(), shapes, b.layout());
  nb::gil_scoped_release release;
  if (b.ready_event()) b.ready_event()->synchronize();
  for (int i = 0; i < b.size(); ++i)
    copy_to_host_async(out.data(i), b.data(i), b.sample(i).num_bytes(), nullptr);
  synchronize_stream(nullptr);
  out.copy_source_info(b);
  return out;
}

nb::tuple shape_tuple(const TensorShape& s) {
  nb::list l;
  for (auto d : s.dims()) l.append(d);
  return nb::tuple(l);
}

}  // namespace

DType from_dlpack(nb::dlpack::dtype t) {
  using nb::dlpack::dtype_code;
  switch (dtype_code(t.code)) {
    case dtype_code::Bool:
      return DType::kBool;
    case dtype_code::UInt:
      if (t.bits == 8) return DType::kU8;
      if (t.bits == 16) return DType::kU16;
      if (t.bits == 32) return DType::kU32;
      if (t.bits == 64) return DType::kU64;
      break;
    case dtype_code::Int:
      if (t.bits == 8) return DType::kI8;
      if (t.bits == 16) return DType::kI16;
      if (t.bits == 32) return DType::kI32;
      if (t.bits == 64) return DType::kI64;
      break;
    case dtype_code::Float:
      if (t.bits == 16) return DType::kF16;
      if (t.bits == 32) return DType::kF32;
      if (t.bits == 64) return DType::kF64;
      break;
    case dtype_code::Bfloat:
      if (t.bits == 16) return DType::kBF16;
      break;
    default:
      break;
  }
  throw TypeError(detail::concat("unsupported array dtype (DLPack code ", int(t.code), ", ",
                                 int(t.bits), " bits)"));
}

void bind_batch(nb::module_& m) {
  nb::class_<Batch>(m, "Batch", "A batch of samples (native). Use stoker.Batch in Python.")
      .def("__len__", &Batch::size)
      .def_prop_ro("dtype", [](const Batch& b) { return std::string(dtype_name(b.dtype())); })
      .def_prop_ro("layout", [](const Batch& b) { return b.layout().str(); })
      .def_prop_ro("device",
                   [](const Batch& b) {
                     return std::string(b.memory() == MemoryKind::kDevice ? "gpu" : "cpu");
                   })
      .def("shape",
           [](const Batch& b, int i) {
             STOKER_ENFORCE(i >= 0 && i < b.size(), IndexError, "sample index ", i,
                            " out of range for a batch of ", b.size());
             return shape_tuple(b.shape(i));
           })
      .def("is_uniform", &Batch::is_uniform)
      .def(
          "data_ptr", [](const Batch& b, int i) { return reinterpret_cast<uintptr_t>(b.data(i)); },
          "The address of sample i's first element (host or device memory).")
      .def("is_contiguous", &Batch::is_contiguous)
      .def("nbytes", &Batch::total_bytes)
      .def("source_info",
           [](const Batch& b, int i) {
             STOKER_ENFORCE(i >= 0 && i < b.size(), IndexError, "sample index ", i,
                            " out of range for a batch of ", b.size());
             return b.source_info(i);
           })
      .def("prepare_for_consumer", &prepare_for_consumer, nb::arg("stream").none(),
           "Makes `stream` wait until a device batch is complete and keeps its buffers from "
           "being recycled before that stream's work (no-op for CPU batches).")
      .def("to_host", &to_host, "A host copy of a device batch (the batch itself on the CPU).")
      .def("sample", &sample_view, nb::arg("i"), nb::arg("shape") = nb::none(),
           nb::rv_policy::reference)
      .def("as_ndarray", &batch_view, nb::rv_policy::reference)
      .def(
          "dlpack_device",
          [](const Batch& b) {
            // What as_ndarray() exports, without making the array (torch asks before
            // __dlpack__: a view per call doubled the hand-off's cost).
            const bool on_gpu = b.memory() == MemoryKind::kDevice && b.size() > 0;
            return nb::make_tuple(dlpack_device(b.memory()),
                                  on_gpu ? std::max(cuda_device_of(b.data(0)), 0) : 0);
          },
          "DLPack's (device type, device id) of the batch's memory, as as_ndarray() exports it.")
      .def("as_reshaped", &reshaped_view, nb::rv_policy::reference)
      .def("copy_to_external", &copy_to_external, nb::arg("dst"), nb::arg("stream").none(),
           nb::arg("non_blocking"), nb::arg("sample") = -1);
}

}  // namespace stoker::python
