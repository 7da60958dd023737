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

#include <cstdlib>
#include <filesystem>
#include <vector>
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

// Where PyPI puts libnvcomp (site-packages/nvidia/libnvcomp/lib64): beside the folder of the
// library holding this code (stoker's Python extension in site-packages/stoker/), or in the
// site-packages of the running interpreter's prefix or of $VIRTUAL_ENV (a build tree's stoker).
std::vector<std::string> library_candidates() {
  namespace fs = std::filesystem;
  const fs::path rel = fs::path("nvidia") / "libnvcomp" / "lib64" / "libnvcomp.so.5";
  std::vector<std::string> names;
  if (const char* env = std::getenv("STOKER_NVCOMP_LIBRARY"); env && *env) names.push_back(env);
  names.push_back("libnvcomp.so.5");
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_candidates), &info) && info.dli_fname)
    names.push_back((fs::path(info.dli_fname).parent_path().parent_path() / rel).string());
  std::error_code ec;
  std::vector<fs::path> prefixes{
      fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path()};
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv) prefixes.emplace_back(venv);
  for (const fs::path& prefix : prefixes)
    for (const auto& e : fs::directory_iterator(prefix / "lib", ec))
      if (e.path().filename().string().rfind("python3", 0) == 0)
        names.push_back((e.path() / "site-packages" / rel).string());
  return names;
}

const NvcompApi& api() {
  static const NvcompApi a = [] {
    NvcompApi r;
    void* lib = nullptr;
    for (const auto& name : library_candidates())
      if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
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
