// The GPU half of lz4_inflate.hpp: nvCOMP's batched LZ4, its library opened at run time (as
// nvJPEG's is, codecs/nvjpeg) so that neither the build nor CPU pipelines need it. Only the
// header is needed to build: src/kernels/CMakeLists.txt sets STOKER_HAVE_NVCOMP and the include
// folder on this file alone when it finds nvcomp/lz4.h (PyPI's nvidia-libnvcomp-cu13). Only the
// ABI of those headers (nvCOMP 5) is opened.
#include "stoker/core/error.hpp"
#include "stoker/kernels/compression/lz4_inflate.hpp"

#if defined(STOKER_HAVE_CUDA) && defined(STOKER_HAVE_NVCOMP)
#include <dlfcn.h>
#include <nvcomp/lz4.h>

#include "stoker/core/pip_library.hpp"
#endif

namespace stoker::kernels {

#if defined(STOKER_HAVE_CUDA) && defined(STOKER_HAVE_NVCOMP)
namespace {

struct NvcompApi {
  decltype(&nvcompBatchedLZ4DecompressGetTempSizeAsync) temp_size = nullptr;
  decltype(&nvcompBatchedLZ4DecompressAsync) decompress = nullptr;
  decltype(&nvcompBatchedLZ4GetDecompressSizeAsync) sizes = nullptr;
  std::string error;
};

const NvcompApi& api() {
  static const NvcompApi a = [] {
    NvcompApi r;
    // PyPI's nvidia-libnvcomp-cu13 puts it in site-packages/nvidia/libnvcomp/lib64.
    void* lib = open_pip_library(pip_library_candidates("STOKER_NVCOMP_LIBRARY", "libnvcomp.so.5",
                                                        "nvidia/libnvcomp/lib64/libnvcomp.so.5"));
    if (!lib) {
      r.error =
          "libnvcomp.so.5 not found (pip install nvidia-libnvcomp-cu13, or set "
          "STOKER_NVCOMP_LIBRARY to its path)";
      return r;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
      if (!fn) r.error = std::string("libnvcomp lacks ") + sym;
    };
    get(r.temp_size, "nvcompBatchedLZ4DecompressGetTempSizeAsync");
    get(r.decompress, "nvcompBatchedLZ4DecompressAsync");
    get(r.sizes, "nvcompBatchedLZ4GetDecompressSizeAsync");
    return r;
  }();
  return a;
}

void check(nvcompStatus_t s, const char* what) {
  STOKER_ENFORCE(s == nvcompSuccess, RuntimeError, "nvCOMP ", what, " failed (status ", int(s),
                 ")");
}

}  // namespace

std::string nvcomp_unavailable() { return api().error; }

size_t nvcomp_lz4_temp_bytes(const NvcompLz4Batch& b) {
  STOKER_ENFORCE(api().error.empty(), RuntimeError, "nvCOMP: ", api().error);
  size_t bytes = 0;
  check(api().temp_size(b.n, b.max_capacity, nvcompBatchedLZ4DecompressDefaultOpts, &bytes,
                        b.total_capacity),
        "LZ4 scratch size");
  return bytes;
}

void nvcomp_lz4_inflate(const NvcompLz4Batch& b, void* temp, size_t temp_bytes,
                        StreamHandle stream) {
  STOKER_ENFORCE(api().error.empty(), RuntimeError, "nvCOMP: ", api().error);
  check(api().decompress(b.src, b.src_sizes, b.capacities, b.inflated_sizes, b.n, temp, temp_bytes,
                         b.dst, nvcompBatchedLZ4DecompressDefaultOpts,
                         reinterpret_cast<nvcompStatus_t*>(b.statuses),
                         static_cast<cudaStream_t>(stream)),
        "LZ4 decompression");
}

void nvcomp_lz4_inflated_sizes(const NvcompLz4Batch& b, size_t* sizes, StreamHandle stream) {
  STOKER_ENFORCE(api().error.empty(), RuntimeError, "nvCOMP: ", api().error);
  check(api().sizes(b.src, b.src_sizes, sizes, b.n, static_cast<cudaStream_t>(stream)),
        "LZ4 size query");
}

#else  // no CUDA or no nvCOMP header in this build

std::string nvcomp_unavailable() {
#ifdef STOKER_HAVE_CUDA
  return "this stoker was built without nvCOMP's header (pip install nvidia-libnvcomp-cu13)";
#else
  return "this stoker was built without CUDA";
#endif
}
size_t nvcomp_lz4_temp_bytes(const NvcompLz4Batch&) {
  throw RuntimeError("nvCOMP: " + nvcomp_unavailable());
}
void nvcomp_lz4_inflate(const NvcompLz4Batch&, void*, size_t, StreamHandle) {
  throw RuntimeError("nvCOMP: " + nvcomp_unavailable());
}
void nvcomp_lz4_inflated_sizes(const NvcompLz4Batch&, size_t*, StreamHandle) {
  throw RuntimeError("nvCOMP: " + nvcomp_unavailable());
}

#endif

}  // namespace stoker::kernels
