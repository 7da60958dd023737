// stft_gpu.hpp's CufftR2c: cuFFT opened at run time (as nvJPEG is, codecs/nvjpeg), so that
// neither the build nor CPU pipelines need it. Only the header is needed to build:
// src/kernels/CMakeLists.txt sets STOKER_HAVE_CUFFT and the include folder on this file alone
// when it finds cufft.h (the CUDA toolkit's, or PyPI's nvidia-cufft). Opened: CUDA 13's cuFFT
// (libcufft.so.12), the system's or PyPI's nvidia-cufft (site-packages/nvidia/cu13/lib).
#include "stoker/core/error.hpp"
#include "stoker/kernels/signal/stft_gpu.hpp"

#if defined(STOKER_HAVE_CUDA) && defined(STOKER_HAVE_CUFFT)
#include <cufft.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "stoker/core/pip_library.hpp"
#endif

namespace stoker::kernels {

#if defined(STOKER_HAVE_CUDA) && defined(STOKER_HAVE_CUFFT)
namespace {

struct CufftApi {
  decltype(&cufftCreate) create = nullptr;
  decltype(&cufftDestroy) destroy = nullptr;
  decltype(&cufftSetAutoAllocation) set_auto_allocation = nullptr;
  decltype(&cufftMakePlanMany64) make_plan = nullptr;
  decltype(&cufftSetWorkArea) set_work_area = nullptr;
  decltype(&cufftSetStream) set_stream = nullptr;
  decltype(&cufftExecR2C) exec_r2c = nullptr;
  std::string error;
};

const CufftApi& api() {
  static const CufftApi a = [] {
    CufftApi r;
    const char* off = std::getenv("STOKER_DISABLE_CUFFT");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_CUFFT";
      return r;
    }
    void* lib = open_pip_library(pip_library_candidates("STOKER_CUFFT_LIBRARY", "libcufft.so.12",
                                                        "nvidia/cu13/lib/libcufft.so.12"));
    if (!lib) {
      r.error =
          "libcufft.so.12 not found (install CUDA 13's cuFFT, or pip install nvidia-cufft, or "
          "set STOKER_CUFFT_LIBRARY to its path)";
      return r;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, sym));
      if (!fn && r.error.empty()) r.error = std::string("libcufft lacks ") + sym;
    };
    get(r.create, "cufftCreate");
    get(r.destroy, "cufftDestroy");
    get(r.set_auto_allocation, "cufftSetAutoAllocation");
    get(r.make_plan, "cufftMakePlanMany64");
    get(r.set_work_area, "cufftSetWorkArea");
    get(r.set_stream, "cufftSetStream");
    get(r.exec_r2c, "cufftExecR2C");
    return r;
  }();
  return a;
}

const char* status_name(cufftResult s) {
  switch (s) {
    case CUFFT_INVALID_PLAN:
      return "invalid plan";
    case CUFFT_ALLOC_FAILED:
      return "allocation failed";
    case CUFFT_INVALID_VALUE:
      return "invalid value";
    case CUFFT_INTERNAL_ERROR:
      return "internal error";
    case CUFFT_EXEC_FAILED:
      return "execution failed";
    case CUFFT_SETUP_FAILED:
      return "setup failed";
    case CUFFT_INVALID_SIZE:
      return "invalid size";
    default:
      return "error";
  }
}

void check(cufftResult s, const char* what) {
  STOKER_ENFORCE(s == CUFFT_SUCCESS, RuntimeError, "cuFFT ", what, " failed: ", status_name(s),
                 " (status ", int(s), ")");
}

// A plan's rows hold at most this many floats (1 GiB of input): larger batches take several.
constexpr int64_t kMaxPlanValues = int64_t(1) << 28;

}  // namespace

std::string cufft_unavailable() { return api().error; }

CufftR2c::CufftR2c(int64_t nfft) : nfft_(nfft) {
  STOKER_ENFORCE(api().error.empty(), RuntimeError, "cuFFT cannot be used: ", api().error);
}

CufftR2c::~CufftR2c() {
  for (auto& [batch, p] : plans_) api().destroy(p.handle);
}

int64_t CufftR2c::batch_for(int64_t rows) const {
  const int64_t cap = std::max<int64_t>(kMaxPlanValues / nfft_, 1);
  const int64_t most = std::min(rows, cap);
  int64_t b = 1;
  while (b * 2 <= most) b *= 2;
  return b;
}

const CufftR2c::Plan& CufftR2c::plan(int64_t batch) {
  auto it = plans_.find(batch);
  if (it != plans_.end()) return it->second;
  cufftHandle h = 0;
  check(api().create(&h), "creating a plan");
  try {
    // The work area comes from the caller's pool (forward), not from cudaMalloc.
    check(api().set_auto_allocation(h, 0), "leaving the work area to stoker");
    long long n = nfft_, in_embed = nfft_, out_embed = nfft_ / 2 + 1;
    size_t work = 0;
    check(api().make_plan(h, 1, &n, &in_embed, 1, nfft_, &out_embed, 1, nfft_ / 2 + 1, CUFFT_R2C,
                          batch, &work),
          "planning a batched real-to-complex FFT");
    return plans_.emplace(batch, Plan{int(h), work}).first->second;
  } catch (...) {
    api().destroy(h);
    throw;
  }
}

size_t CufftR2c::work_bytes(int64_t rows) {
  size_t most = 0;
  for (int64_t done = 0; done < rows;) {
    const int64_t b = batch_for(rows - done);
    most = std::max(most, plan(b).work);
    done += b;
  }
  return most;
}

void CufftR2c::forward(const float* in, float* out, int64_t rows, void* work, StreamHandle stream) {
  const int64_t bins = nfft_ / 2 + 1;
  for (int64_t done = 0; done < rows;) {
    const int64_t b = batch_for(rows - done);
    const Plan& p = plan(b);
    check(api().set_stream(p.handle, static_cast<cudaStream_t>(stream)), "setting the stream");
    check(api().set_work_area(p.handle, work), "setting the work area");
    check(api().exec_r2c(p.handle, const_cast<cufftReal*>(in + done * nfft_),
                         reinterpret_cast<cufftComplex*>(out + done * bins * 2)),
          "real-to-complex FFT");
    done += b;
  }
}

#else  // no CUDA or no cufft.h in this build

std::string cufft_unavailable() {
#ifdef STOKER_HAVE_CUDA
  return "this stoker was built without cuFFT's header cufft.h (CUDA 13's cuFFT, or pip install "
         "nvidia-cufft, when building)";
#else
  return "this stoker was built without CUDA";
#endif
}

CufftR2c::CufftR2c(int64_t nfft) : nfft_(nfft) {
  throw RuntimeError("cuFFT cannot be used: " + cufft_unavailable());
}
CufftR2c::~CufftR2c() = default;
int64_t CufftR2c::batch_for(int64_t rows) const { return rows; }
const CufftR2c::Plan& CufftR2c::plan(int64_t) {
  throw RuntimeError("cuFFT cannot be used: " + cufft_unavailable());
}
size_t CufftR2c::work_bytes(int64_t) {
  throw RuntimeError("cuFFT cannot be used: " + cufft_unavailable());
}
void CufftR2c::forward(const float*, float*, int64_t, void*, StreamHandle) {
  throw RuntimeError("cuFFT cannot be used: " + cufft_unavailable());
}

#endif

}  // namespace stoker::kernels
