// Python arrays as stoker batches without copying (external sources), and the release of the
// Python objects behind them.
//
// A borrowed buffer's last reference may go on any of stoker's threads. Those threads never
// take the GIL: the Python thread may hold it while it waits for them (a pipeline destroyed
// from Python joins its threads), which would deadlock. So a released buffer only parks its
// Python owner here, with events for the GPU work that still reads the memory, and the next
// call from Python (feed, run, close) drops the owners whose work is done.
#include <nanobind/stl/optional.h>

#include <mutex>
#include <vector>

#include "bindings.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/core/error.hpp"

namespace stoker::python {
namespace {

struct Parked {
  std::shared_ptr<void> owner;  // a Python reference: destroyed with the GIL held
  std::vector<std::shared_ptr<CudaEvent>> pending;
};

struct ParkedOwners {
  std::mutex mutex;
  std::vector<Parked> parked;
};

ParkedOwners& parked_owners() {
  static auto* p = new ParkedOwners;  // never destroyed: no Python work after finalisation
  return *p;
}

std::shared_ptr<Buffer> borrow(void* data, size_t bytes, MemoryKind kind,
                               std::shared_ptr<void> owner) {
  return Buffer::wrap(
      data, bytes, kind,
      [owner = std::move(owner)](std::vector<std::shared_ptr<CudaEvent>> e) mutable {
        auto& p = parked_owners();
        std::lock_guard lock(p.mutex);
        p.parked.push_back({std::move(owner), std::move(e)});
      });
}

template <typename T>
std::shared_ptr<void> hold(T object) {
  return std::shared_ptr<void>(new T(std::move(object)),
                               [](void* p) { delete static_cast<T*>(p); });
}

MemoryKind memory_of(int dlpack_device) {
  switch (dlpack_device) {
    case nb::device::cpu::value:
      return MemoryKind::kHost;
    case nb::device::cuda_host::value:
      return MemoryKind::kPinned;
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value:
      return MemoryKind::kDevice;
    default:
      throw TypeError(detail::concat("arrays on DLPack device type ", dlpack_device,
                                     " are not supported (CPU and CUDA memory are)"));
  }
}

// One sample or one whole batch, as imported.
struct Imported {
  void* data = nullptr;
  std::vector<int64_t> dims;
  DType dtype = DType::kU8;
  MemoryKind memory = MemoryKind::kHost;
  int device = -1;
  std::shared_ptr<void> owner;
};

using Array = nb::ndarray<nb::ro, nb::c_contig>;

Imported import_one(nb::handle h, const std::string& what, const char* expected) {
  Imported out;
  if (nb::isinstance<nb::tuple>(h)) {  // (address, shape, dtype name, owner): CUDA memory
    auto t = nb::cast<nb::tuple>(h);
    STOKER_ENFORCE(nb::len(t) == 4, TypeError, what, ": ", expected);
    out.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(t[0]));
    for (nb::handle d : t[1]) out.dims.push_back(nb::cast<int64_t>(d));
    out.dtype = dtype_from_name(nb::cast<std::string>(t[2]));
    out.memory = MemoryKind::kDevice;
    out.owner = hold(nb::borrow<nb::object>(t[3]));
    return out;
  }
  Array a;
  STOKER_ENFORCE(nb::try_cast(h, a), TypeError, what, ": ", expected);
  out.data = const_cast<void*>(a.data());
  for (size_t k = 0; k < a.ndim(); ++k) out.dims.push_back(int64_t(a.shape(k)));
  out.dtype = from_dlpack(a.dtype());
  out.memory = memory_of(a.device_type());
  out.device = a.device_id();
  out.owner = hold(std::move(a));
  return out;
}

void check_device(const Imported& x, const std::string& what, std::optional<int> device_id) {
  if (x.memory != MemoryKind::kDevice || x.device < 0 || !device_id) return;
  STOKER_ENFORCE(x.device == *device_id, ValueError, what, ": the data is on GPU ", x.device,
                 ", the pipeline on GPU ", *device_id);
}

}  // namespace

Batch borrow_arrays(nb::handle data, const std::string& what, std::optional<int> device_id) {
  const bool list = nb::isinstance<nb::list>(data) || nb::isinstance<nb::tuple>(data);
  if (!list) {
    Imported x = import_one(data, what,
                            "expected a list of arrays or one array whose first axis is the batch "
                            "(C-contiguous: numpy, or any DLPack producer)");
    check_device(x, what, device_id);
    STOKER_ENFORCE(!x.dims.empty(), ValueError, what, ": a single array must have a batch axis");
    const std::vector<int64_t> sample_dims(x.dims.begin() + 1, x.dims.end());
    const TensorShape shape(sample_dims);
    const size_t sample_bytes = size_t(shape.volume()) * dtype_size(x.dtype);
    const int n = int(x.dims[0]);
    auto buffer = borrow(x.data, sample_bytes * size_t(n), x.memory, std::move(x.owner));
    Batch b = Batch::with_samples(n, x.dtype, {}, x.memory);
    for (int i = 0; i < n; ++i)
      b.set_sample(i, buffer, static_cast<uint8_t*>(x.data) + sample_bytes * size_t(i), shape);
    return b;
  }
  STOKER_ENFORCE(nb::len(data) > 0, ValueError, what, ": the batch is empty");
  Batch b;
  int i = 0;
  for (nb::handle h : data) {
    Imported x = import_one(h, what,
                            "samples must be C-contiguous arrays (numpy, or any DLPack "
                            "producer)");
    check_device(x, what, device_id);
    if (i == 0) b = Batch::with_samples(int(nb::len(data)), x.dtype, {}, x.memory);
    STOKER_ENFORCE(x.dtype == b.dtype(), TypeError, what, ": sample ", i, " has dtype ",
                   dtype_name(x.dtype), ", sample 0 has ", dtype_name(b.dtype()));
    STOKER_ENFORCE((x.memory == MemoryKind::kDevice) == (b.memory() == MemoryKind::kDevice),
                   TypeError, what, ": sample ", i, " is in ", memory_kind_name(x.memory),
                   " memory, sample 0 in ", memory_kind_name(b.memory()),
                   " memory; a batch lies on one device");
    const TensorShape shape(x.dims);
    const size_t bytes = size_t(shape.volume()) * dtype_size(x.dtype);
    b.set_sample(i, borrow(x.data, bytes, x.memory, std::move(x.owner)), x.data, shape);
    ++i;
  }
  return b;
}

void release_borrowed(bool wait) {
  auto& p = parked_owners();
  std::vector<Parked> all;
  {
    std::lock_guard lock(p.mutex);
    all.swap(p.parked);
  }
  std::vector<Parked> later;
  for (auto& x : all) {
    bool ready = true;
    for (auto& e : x.pending) {
      try {
        if (wait) {
          nb::gil_scoped_release release;
          e->synchronize();
        }
        ready = ready && e->done();
      } catch (const Error&) {
        // A broken context: no work of ours can still read the memory.
      }
    }
    if (!ready) later.push_back(std::move(x));
  }
  if (!later.empty()) {
    std::lock_guard lock(p.mutex);
    for (auto& x : later) p.parked.push_back(std::move(x));
  }
  all.clear();  // drops the ready owners' Python references, with the GIL held
}

}  // namespace stoker::python
