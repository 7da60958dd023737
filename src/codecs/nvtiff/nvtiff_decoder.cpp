// nvTIFF loaded at run time (dlopen); see nvtiff_decoder.hpp. Built only with nvtiff.h
// (STOKER_HAVE_NVTIFF); without it nvtiff_available() says so.
#include "stoker/codecs/nvtiff/nvtiff_decoder.hpp"

#include <cstdlib>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVTIFF
#include <cuda_runtime_api.h>
#include <nvtiff.h>
#include <nvtiff_version.h>

#include <cstring>
#include <utility>
#include <vector>

#include "stoker/core/pip_library.hpp"
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVTIFF
namespace {

struct Api {
  decltype(&nvtiffGetProperty) get_property = nullptr;
  decltype(&nvtiffDecoderCreateSimple) decoder_create = nullptr;
  decltype(&nvtiffDecoderDestroy) decoder_destroy = nullptr;
  decltype(&nvtiffDecodeParamsCreate) params_create = nullptr;
  decltype(&nvtiffDecodeParamsDestroy) params_destroy = nullptr;
  decltype(&nvtiffDecodeParamsSetOutputFormat) set_format = nullptr;
  decltype(&nvtiffDecodeParamsSetRegions) set_regions = nullptr;
  decltype(&nvtiffStreamOpen) open = nullptr;
  decltype(&nvtiffStreamClose) close = nullptr;
  decltype(&nvtiffStreamGetImageInfo) image_info = nullptr;
  decltype(&nvtiffStreamGetTagInfo) tag_info = nullptr;
  decltype(&nvtiffStreamGetTagValue) tag_value = nullptr;
  decltype(&nvtiffDecodeCheckSupported) supported = nullptr;
  decltype(&nvtiffDecode) decode = nullptr;
  std::string error;  // why loading failed (empty: loaded)
};

// The entry points of `lib`, and whether its version is the one whose interface (structures
// included) this was built for: 0.8.
std::string resolve(void* lib, Api& r) {
  std::string error;
  auto get = [&](auto& fn, const char* sym) { resolve_symbol(lib, fn, sym, "libnvtiff", error); };
  get(r.get_property, "nvtiffGetProperty");
  get(r.decoder_create, "nvtiffDecoderCreateSimple");
  get(r.decoder_destroy, "nvtiffDecoderDestroy");
  get(r.params_create, "nvtiffDecodeParamsCreate");
  get(r.params_destroy, "nvtiffDecodeParamsDestroy");
  get(r.set_format, "nvtiffDecodeParamsSetOutputFormat");
  get(r.set_regions, "nvtiffDecodeParamsSetRegions");
  get(r.open, "nvtiffStreamOpen");
  get(r.close, "nvtiffStreamClose");
  get(r.image_info, "nvtiffStreamGetImageInfo");
  get(r.tag_info, "nvtiffStreamGetTagInfo");
  get(r.tag_value, "nvtiffStreamGetTagValue");
  get(r.supported, "nvtiffDecodeCheckSupported");
  get(r.decode, "nvtiffDecode");
  if (!error.empty()) return error + " (stoker needs nvTIFF 0.8's interface)";
  int major = -1, minor = -1;
  r.get_property(MAJOR_VERSION, &major);
  r.get_property(MINOR_VERSION, &minor);
  if (major != NVTIFF_VER_MAJOR || minor != NVTIFF_VER_MINOR)
    return "libnvtiff " + std::to_string(major) + "." + std::to_string(minor) + " (stoker needs " +
           std::to_string(NVTIFF_VER_MAJOR) + "." + std::to_string(NVTIFF_VER_MINOR) + ")";
  return {};
}

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("STOKER_DISABLE_NVTIFF");
    if (off && *off && std::string(off) != "0") {
      r.error = "disabled by STOKER_DISABLE_NVTIFF";
      return r;
    }
    std::string why;
    void* lib = open_pip_library_checked(
        pip_library_candidates("STOKER_NVTIFF_LIBRARY", "libnvtiff.so.0",
                               "nvidia/nvtiff/lib/libnvtiff.so.0"),
        [&](void* l) { return resolve(l, r); }, why);
    if (!lib)
      r.error = why.empty()
                    ? "libnvtiff not found (pip install nvidia-nvtiff-cu13, or stoker[cuda])"
                    : why;
    return r;
  }();
  return a;
}

// A tag's values as unsigned integers (empty when the tag is absent or not integral).
std::vector<uint64_t> tag_values(const Api& a, nvtiffStream_t t, uint16_t tag) {
  nvtiffTagDataType_t type{};
  uint32_t size = 0, count = 0;
  if (a.tag_info(t, 0, tag, &type, &size, &count) != NVTIFF_STATUS_SUCCESS || count == 0 ||
      (size != 1 && size != 2 && size != 4 && size != 8) || count > (1u << 24))
    return {};
  if (type != NVTIFF_TAG_TYPE_BYTE && type != NVTIFF_TAG_TYPE_SHORT &&
      type != NVTIFF_TAG_TYPE_LONG && type != NVTIFF_TAG_TYPE_LONG8 && type != NVTIFF_TAG_TYPE_IFD8)
    return {};
  std::vector<uint8_t> raw(size_t(size) * count);
  if (a.tag_value(t, 0, tag, raw.data(), count) != NVTIFF_STATUS_SUCCESS) return {};
  std::vector<uint64_t> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, raw.data() + size_t(i) * size, size);  // host order, as nvTIFF gives it
    out[i] = v;
  }
  return out;
}

// FillOrder 1 and Predictor 1 where given (libtiff undoes the others; nvTIFF is not known
// to), and every strip or tile inside the file (a truncated file decodes to garbage on the GPU
// where libtiff raises).
bool plain_and_whole(const Api& a, nvtiffStream_t t, size_t file_size) {
  for (uint16_t tag : {uint16_t(266), uint16_t(317)}) {  // FillOrder, Predictor
    const auto v = tag_values(a, t, tag);
    if (!v.empty() && v[0] != 1) return false;
  }
  // StripOffsets and StripByteCounts, or TileOffsets and TileByteCounts.
  constexpr std::pair<uint16_t, uint16_t> kPieces[] = {{273, 279}, {324, 325}};
  for (auto [offsets_tag, counts_tag] : kPieces) {
    const auto offsets = tag_values(a, t, offsets_tag), counts = tag_values(a, t, counts_tag);
    if (offsets.empty() && counts.empty()) continue;
    if (offsets.size() != counts.size()) return false;
    for (size_t i = 0; i < offsets.size(); ++i)
      if (offsets[i] > file_size || counts[i] > file_size - offsets[i]) return false;
    return true;
  }
  return false;  // neither strips nor tiles
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

bool NvtiffDecoder::decode(const NvjpegJob& job, int channels, int64_t height, int64_t width,
                           StreamHandle stream) {
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
  if (a.image_info(tiff, 0, &info) != NVTIFF_STATUS_SUCCESS || !as_stored(info, channels) ||
      int64_t(info.image_height) != height || int64_t(info.image_width) != width ||
      !plain_and_whole(a, tiff, job.size))
    return false;
  const nvtiffDecodeRegion_t region{0, int32_t(job.x), int32_t(job.y), uint32_t(job.w),
                                    uint32_t(job.h)};
  if (a.set_regions(s.params, &region, 1) != NVTIFF_STATUS_SUCCESS) return false;
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
bool NvtiffDecoder::decode(const NvjpegJob&, int, int64_t, int64_t, StreamHandle) { return false; }

#endif

}  // namespace stoker::codecs
