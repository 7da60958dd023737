// nvTIFF loaded at run time (dlopen); see nvtiff_decoder.hpp. Built only with nvtiff.h
// (STOKER_HAVE_NVTIFF); without it nvtiff_available() says so.
#include "stoker/codecs/nvtiff/nvtiff_decoder.hpp"

#include <cstdlib>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVTIFF
#include <cuda_runtime_api.h>
#include <nvtiff.h>

#include "stoker/core/pip_library.hpp"
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVTIFF
namespace {

struct Api {
  decltype(&nvtiffDecoderCreateSimple) decoder_create = nullptr;
  decltype(&nvtiffDecoderDestroy) decoder_destroy = nullptr;
  decltype(&nvtiffDecodeParamsCreate) params_create = nullptr;
  decltype(&nvtiffDecodeParamsDestroy) params_destroy = nullptr;
  decltype(&nvtiffDecodeParamsSetOutputFormat) set_format = nullptr;
  decltype(&nvtiffDecodeParamsSetRegions) set_regions = nullptr;
  decltype(&nvtiffStreamOpen) open = nullptr;
  decltype(&nvtiffStreamClose) close = nullptr;
  decltype(&nvtiffStreamGetImageInfo) image_info = nullptr;
  decltype(&nvtiffDecodeCheckSupported) supported = nullptr;
  decltype(&nvtiffDecode) decode = nullptr;
  std::string error;  // why loading failed (empty: loaded)
};

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("STOKER_DISABLE_NVTIFF");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_NVTIFF";
      return r;
    }
    void* lib = open_pip_library(pip_library_candidates("STOKER_NVTIFF_LIBRARY", "libnvtiff.so.0",
                                                        "nvidia/nvtiff/lib/libnvtiff.so.0"));
    if (!lib) {
      r.error = "libnvtiff not found (pip install nvidia-nvtiff-cu13, or stoker[cuda])";
      return r;
    }
    auto get = [&](auto& fn, const char* sym) {
      resolve_symbol(lib, fn, sym, "libnvtiff", r.error);
    };
    get(r.decoder_create, "nvtiffDecoderCreateSimple");
    get(r.decoder_destroy, "nvtiffDecoderDestroy");
    get(r.params_create, "nvtiffDecodeParamsCreate");
    get(r.params_destroy, "nvtiffDecodeParamsDestroy");
    get(r.set_format, "nvtiffDecodeParamsSetOutputFormat");
    get(r.set_regions, "nvtiffDecodeParamsSetRegions");
    get(r.open, "nvtiffStreamOpen");
    get(r.close, "nvtiffStreamClose");
    get(r.image_info, "nvtiffStreamGetImageInfo");
    get(r.supported, "nvtiffDecodeCheckSupported");
    get(r.decode, "nvtiffDecode");
    if (!r.error.empty()) r.error += " (stoker needs nvTIFF 0.8's interface)";
    return r;
  }();
  return a;
}

void check(nvtiffStatus_t s, const char* what) {
  STOKER_ENFORCE(s == NVTIFF_STATUS_SUCCESS, RuntimeError, "nvTIFF ", what, ": status ", int(s));
}

// The kinds whose pixels nvTIFF gives as stored, as libtiff gives them to the CPU decoder.
bool as_stored(const nvtiffImageInfo_t& info, int channels) {
  if (int(info.samples_per_pixel) != channels || info.planar_config != NVTIFF_PLANARCONFIG_CONTIG)
    return false;
  const bool gray = info.photometric_int == NVTIFF_PHOTOMETRIC_MINISBLACK && channels <= 2;
  const bool rgb = info.photometric_int == NVTIFF_PHOTOMETRIC_RGB && channels >= 3;
  if (!gray && !rgb) return false;
  switch (info.compression) {
    case NVTIFF_COMPRESSION_NONE:
    case NVTIFF_COMPRESSION_LZW:
    case NVTIFF_COMPRESSION_ADOBE_DEFLATE:
    case NVTIFF_COMPRESSION_DEFLATE:
    case NVTIFF_COMPRESSION_PACKBITS:
      break;
    default:
      return false;
  }
  for (int c = 0; c < channels; ++c) {
    if (info.bits_per_sample[c] != 8) return false;
    if (info.sample_format[c] != NVTIFF_SAMPLEFORMAT_UINT &&
        info.sample_format[c] != NVTIFF_SAMPLEFORMAT_UNKNOWN)
      return false;
  }
  return true;
}

}  // namespace

std::string nvtiff_unavailable() { return api().error; }

bool nvtiff_available(int, std::string* why) { return runtime_library_usable(api().error, why); }

struct NvtiffDecoder::State {
  explicit State(int d) : device(d), stream(d) {}
  int device;
  CudaStream stream;  // nvTIFF's own: it is synchronised after every image
  CudaEvent ready;    // the caller's stream's earlier work
  nvtiffDecoder_t decoder = nullptr;
  nvtiffDecodeParams_t params = nullptr;

  ~State() {
    const Api& a = api();
    DeviceGuard guard(device);
    if (params) a.params_destroy(params);
    if (decoder) a.decoder_destroy(decoder, cudaStream_t(stream.get()));
    stream.synchronize();
  }
};

NvtiffDecoder::NvtiffDecoder(int device) {
  std::string why;
  STOKER_ENFORCE(nvtiff_available(device, &why), RuntimeError, "nvTIFF unavailable: ", why);
  const Api& a = api();
  DeviceGuard guard(device);
  state_ = std::make_unique<State>(device);
  check(a.decoder_create(&state_->decoder, cudaStream_t(state_->stream.get())),
        "creating a decoder");
  check(a.params_create(&state_->params), "creating decoding parameters");
  check(a.set_format(state_->params, NVTIFF_OUTPUT_UNCHANGED_I), "setting the output format");
}

NvtiffDecoder::~NvtiffDecoder() = default;

bool NvtiffDecoder::decode(const NvjpegJob& job, int channels, StreamHandle stream) {
  if (channels < 1 || channels > 4) return false;
  const Api& a = api();
  State& s = *state_;
  DeviceGuard guard(s.device);
  nvtiffStream_t tiff = nullptr;
  if (a.open(job.data, job.size, &tiff) != NVTIFF_STATUS_SUCCESS) return false;
  struct Closer {
    const Api& a;
    nvtiffStream_t t;
    ~Closer() { a.close(t); }
  } closer{a, tiff};
  nvtiffImageInfo_t info{};
  if (a.image_info(tiff, 0, &info) != NVTIFF_STATUS_SUCCESS || !as_stored(info, channels))
    return false;
  const nvtiffDecodeRegion_t region{0, int32_t(job.x), int32_t(job.y), uint32_t(job.w),
                                    uint32_t(job.h)};
  check(a.set_regions(s.params, &region, 1), "setting the region");
  void* plane = job.out;
  size_t pitch = size_t(job.pitch);
  nvtiffImage_t out{&plane, &pitch, 1};
  if (a.supported(tiff, s.decoder, s.params, &out) != NVTIFF_STATUS_SUCCESS) return false;
  s.ready.record(stream);
  s.ready.wait_on(s.stream.get());
  const nvtiffStatus_t status =
      a.decode(tiff, s.decoder, s.params, &out, cudaStream_t(s.stream.get()));
  // One decode in flight per decoder, whatever the status (nvTIFF's rule); the bytes it reads
  // stay valid until then.
  s.stream.synchronize();
  return status == NVTIFF_STATUS_SUCCESS;
}

#else  // without nvtiff.h

bool nvtiff_available(int, std::string* why) {
  if (why) *why = nvtiff_unavailable();
  return false;
}
std::string nvtiff_unavailable() { return "stoker was built without nvtiff.h"; }
struct NvtiffDecoder::State {};
NvtiffDecoder::NvtiffDecoder(int) {
  throw RuntimeError("nvTIFF unavailable: stoker was built without nvtiff.h");
}
NvtiffDecoder::~NvtiffDecoder() = default;
bool NvtiffDecoder::decode(const NvjpegJob&, int, StreamHandle) { return false; }

#endif

}  // namespace stoker::codecs
