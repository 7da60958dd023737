#include "stoker/codecs/video/nvdec_video.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>

#include "stoker/core/error.hpp"

#ifdef STOKER_HAVE_NVDEC
namespace {
// The loader's complaints ("Cannot load libnvcuvid.so.1") go into the caller's string.
void ffnv_log(void* text, const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (text) static_cast<std::string*>(text)->append(line);
}
}  // namespace
#define FFNV_LOG_FUNC(logctx, msg, ...) ffnv_log((logctx), (msg), __VA_ARGS__)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
#include <ffnvcodec/dynlink_loader.h>
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_NVDEC
namespace {

// The driver's libraries, loaded once per process.
struct Driver {
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cuvid = nullptr;
  std::string why;  // empty when both loaded
};

const Driver& driver() {
  static const Driver d = [] {
    Driver d;
    std::string log;
    if (cuda_load_functions(&d.cu, &log) < 0) {
      d.why = "the CUDA driver (libcuda.so.1) could not be loaded";
    } else if (cuvid_load_functions(&d.cuvid, &log) < 0) {
      d.why = "NVDEC's library (libnvcuvid.so.1) could not be loaded: the driver installation "
              "lacks it (in containers: NVIDIA_DRIVER_CAPABILITIES must include video)";
    } else if (d.cu->cuInit(0) != CUDA_SUCCESS) {
      d.why = "cuInit failed: no usable GPU";
    }
    return d;
  }();
  return d;
}

std::string cu_error(CUresult r) {
  const char* name = nullptr;
  if (driver().cu) driver().cu->cuGetErrorName(r, &name);
  return name ? name : "CUDA error " + std::to_string(int(r));
}

bool codec_of(const std::string& name, cudaVideoCodec& codec) {
  static const std::unordered_map<std::string, cudaVideoCodec> codecs{
      {"h264", cudaVideoCodec_H264}, {"hevc", cudaVideoCodec_HEVC},
      {"vp8", cudaVideoCodec_VP8},   {"vp9", cudaVideoCodec_VP9},
      {"av1", cudaVideoCodec_AV1},   {"mpeg4", cudaVideoCodec_MPEG4},
      {"mjpeg", cudaVideoCodec_JPEG}, {"mpeg2video", cudaVideoCodec_MPEG2},
      {"mpeg1video", cudaVideoCodec_MPEG1}, {"vc1", cudaVideoCodec_VC1}};
  auto it = codecs.find(name);
  if (it == codecs.end()) return false;
  codec = it->second;
  return true;
}

// The device's primary context (the one the CUDA runtime uses), current while alive.
class ContextScope {
 public:
  explicit ContextScope(CUcontext ctx) { driver().cu->cuCtxPushCurrent(ctx); }
  ~ContextScope() {
    CUcontext popped = nullptr;
    driver().cu->cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

CUcontext retain_primary(int device, CUdevice& dev) {
  CUcontext ctx = nullptr;
  CUresult r = driver().cu->cuDeviceGet(&dev, device);
  if (r == CUDA_SUCCESS) r = driver().cu->cuDevicePrimaryCtxRetain(&ctx, dev);
  STOKER_ENFORCE(r == CUDA_SUCCESS, RuntimeError, "NVDEC: no context on device ", device, " (",
                 cu_error(r), ")");
  return ctx;
}

}  // namespace

namespace {

// What needs no driver call: the libraries, the codec, the pixel format.
std::string unusable(const VideoInfo& info) {
  const Driver& d = driver();
  if (!d.why.empty()) return d.why;
  cudaVideoCodec codec;
  if (!codec_of(info.codec, codec)) return "NVDEC does not decode " + info.codec;
  if (info.pixel_format != "yuv420p" && info.pixel_format != "yuvj420p" &&
      info.pixel_format != "nv12")
    return "stoker's NVDEC path decodes 8-bit 4:2:0 video; this stream is " + info.pixel_format +
           " (device='cpu' reads it)";
  return "";
}

// The engines' answer for a codec and size (cuvidGetDecoderCaps).
std::string engines_refuse(int device, const VideoInfo& info) {
  const Driver& d = driver();
  cudaVideoCodec codec = cudaVideoCodec_H264;
  codec_of(info.codec, codec);
  CUdevice dev;
  CUcontext ctx = retain_primary(device, dev);
  CUVIDDECODECAPS caps{};
  caps.eCodecType = codec;
  caps.eChromaFormat = cudaVideoChromaFormat_420;
  caps.nBitDepthMinus8 = 0;
  CUresult r;
  {
    ContextScope scope(ctx);
    r = d.cuvid->cuvidGetDecoderCaps(&caps);
  }
  d.cu->cuDevicePrimaryCtxRelease(dev);
  if (r != CUDA_SUCCESS) return "cuvidGetDecoderCaps failed (" + cu_error(r) + ")";
  if (!caps.bIsSupported) return "this GPU's NVDEC does not decode " + info.codec;
  if (info.width > int64_t(caps.nMaxWidth) || info.height > int64_t(caps.nMaxHeight) ||
      info.width < caps.nMinWidth || info.height < caps.nMinHeight)
    return "NVDEC decodes " + info.codec + " from " + std::to_string(caps.nMinWidth) + "x" +
           std::to_string(caps.nMinHeight) + " to " + std::to_string(caps.nMaxWidth) + "x" +
           std::to_string(caps.nMaxHeight) + "; this stream is " + std::to_string(info.width) +
           "x" + std::to_string(info.height);
  return "";
}

}  // namespace

std::string nvdec_unavailable(int device, const VideoInfo& info) {
  if (auto why = unusable(info); !why.empty()) return why;
  // The engines are asked once per device, codec and size: a dataset's files are mostly alike,
  // and readers and decoders ask for every file they open.
  static std::mutex mutex;
  static std::map<std::string, std::string> answers;
  const std::string key = std::to_string(device) + " " + info.codec + " " +
                          std::to_string(info.width) + "x" + std::to_string(info.height);
  {
    std::lock_guard lock(mutex);
    if (auto it = answers.find(key); it != answers.end()) return it->second;
  }
  std::string why = engines_refuse(device, info);
  std::lock_guard lock(mutex);
  return answers.emplace(key, std::move(why)).first->second;
}

struct NvdecVideo::Impl {
  explicit Impl(VideoFile f) : file(std::move(f)) {}
  ~Impl() {
    if (!ctx) return;
    {
      ContextScope scope(ctx);
      if (parser) driver().cuvid->cuvidDestroyVideoParser(parser);
      if (decoder) driver().cuvid->cuvidDestroyDecoder(decoder);
    }
    driver().cu->cuDevicePrimaryCtxRelease(dev);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  VideoFile file;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  cudaVideoCodec codec = cudaVideoCodec_H264;
  CUvideoparser parser = nullptr;
  CUvideodecoder decoder = nullptr;
  CUVIDEOFORMAT format{};  // the decoder's
  int64_t surface_height = 0;
  // The request being decoded.
  std::unordered_map<int64_t, int64_t> wanted;  // pts -> k
  int64_t remaining = 0;
  StreamHandle stream = nullptr;
  const VideoFile::TakeFrame* take = nullptr;
  std::exception_ptr error;
  std::vector<int64_t> shown;  // the request's displayed timestamps (the first few: errors)

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError("video '" + name() + "' (NVDEC): " + what);
  }
  const std::string& name() const { return file.name(); }

  void check(CUresult r, const char* what) const {
    if (r != CUDA_SUCCESS) fail(std::string(what) + " failed (" + cu_error(r) + ")");
  }

  static int CUDAAPI on_sequence(void* self, CUVIDEOFORMAT* f) {
    auto& m = *static_cast<Impl*>(self);
    try {
      return m.sequence(*f);
    } catch (...) {
      m.error = std::current_exception();
      return 0;
    }
  }
  static int CUDAAPI on_decode(void* self, CUVIDPICPARAMS* p) {
    auto& m = *static_cast<Impl*>(self);
    const CUresult r = driver().cuvid->cuvidDecodePicture(m.decoder, p);
    if (r != CUDA_SUCCESS && !m.error) {
      m.error = std::make_exception_ptr(
          ValueError("video '" + m.name() + "' (NVDEC): decoding a picture failed (" +
                     cu_error(r) + ")"));
    }
    return r == CUDA_SUCCESS;
  }
  static int CUDAAPI on_display(void* self, CUVIDPARSERDISPINFO* d) {
    auto& m = *static_cast<Impl*>(self);
    if (d == nullptr || m.error) return 1;
    try {
      m.display(*d);
    } catch (...) {
      m.error = std::current_exception();
      return 0;
    }
    return 1;
  }

  int sequence(const CUVIDEOFORMAT& f) {
    if (f.chroma_format != cudaVideoChromaFormat_420 || f.bit_depth_luma_minus8 != 0)
      fail("the stream is not 8-bit 4:2:0 (device='cpu' reads it)");
    const int surfaces = std::max<int>(f.min_num_decode_surfaces, 1) + 4;
    if (decoder && f.coded_width == format.coded_width && f.coded_height == format.coded_height &&
        f.display_area.right == format.display_area.right &&
        f.display_area.bottom == format.display_area.bottom)
      return surfaces;  // the same stream again (a new parser after a seek)
    if (decoder) driver().cuvid->cuvidDestroyDecoder(decoder), decoder = nullptr;
    CUVIDDECODECREATEINFO ci{};
    ci.CodecType = f.codec;
    ci.ChromaFormat = f.chroma_format;
    ci.OutputFormat = cudaVideoSurfaceFormat_NV12;
    ci.bitDepthMinus8 = 0;
    ci.DeinterlaceMode = f.progressive_sequence ? cudaVideoDeinterlaceMode_Weave
                                                : cudaVideoDeinterlaceMode_Adaptive;
    ci.ulNumOutputSurfaces = 2;
    ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
    ci.ulNumDecodeSurfaces = tcu_ulong(surfaces);
    ci.ulWidth = f.coded_width, ci.ulHeight = f.coded_height;
    ci.ulMaxWidth = f.coded_width, ci.ulMaxHeight = f.coded_height;
    ci.display_area.left = short(f.display_area.left), ci.display_area.top = short(f.display_area.top);
    ci.display_area.right = short(f.display_area.right);
    ci.display_area.bottom = short(f.display_area.bottom);
    const int w = f.display_area.right - f.display_area.left;
    const int h = f.display_area.bottom - f.display_area.top;
    ci.ulTargetWidth = tcu_ulong((w + 1) & ~1), ci.ulTargetHeight = tcu_ulong((h + 1) & ~1);
    check(driver().cuvid->cuvidCreateDecoder(&decoder, &ci), "creating the decoder");
    format = f;
    surface_height = int64_t(ci.ulTargetHeight);
    return surfaces;
  }

  void display(const CUVIDPARSERDISPINFO& d) {
    if (shown.size() < 12) shown.push_back(d.timestamp);
    auto it = wanted.find(d.timestamp);
    if (it == wanted.end()) return;
    const int64_t k = it->second;
    wanted.erase(it);
    CUVIDPROCPARAMS pp{};
    pp.progressive_frame = d.progressive_frame;
    pp.second_field = d.repeat_first_field + 1;
    pp.top_field_first = d.top_field_first;
    pp.unpaired_field = d.repeat_first_field < 0;
    pp.output_stream = CUstream(stream);
    unsigned long long ptr = 0;
    unsigned int pitch = 0;
    check(driver().cuvid->cuvidMapVideoFrame(decoder, d.picture_index, &ptr, &pitch, &pp),
          "mapping a decoded frame");
    VideoPlanes p;
    const auto* base = reinterpret_cast<const uint8_t*>(uintptr_t(ptr));
    const auto* chroma = base + int64_t(pitch) * surface_height;
    p.data[0] = base, p.data[1] = chroma, p.data[2] = chroma + 1;
    p.pitch[0] = p.pitch[1] = p.pitch[2] = pitch;
    p.uv_step = 2, p.shift_x = p.shift_y = 1;
    const VideoInfo& info = file.info();
    p.bt709 = info.bt709, p.full_range = info.full_range, p.chroma_center = info.chroma_center;
    p.width = format.display_area.right - format.display_area.left;
    p.height = format.display_area.bottom - format.display_area.top;
    try {
      (*take)(k, p);
      synchronize_stream(stream);
    } catch (...) {
      driver().cuvid->cuvidUnmapVideoFrame(decoder, ptr);
      throw;
    }
    check(driver().cuvid->cuvidUnmapVideoFrame(decoder, ptr), "unmapping a decoded frame");
    --remaining;
  }

  void new_parser() {
    if (parser) driver().cuvid->cuvidDestroyVideoParser(parser), parser = nullptr;
    CUVIDPARSERPARAMS params{};
    params.CodecType = codec;
    params.ulMaxNumDecodeSurfaces = 1;  // raised by the sequence callback's answer
    params.ulMaxDisplayDelay = 0;       // frames as soon as they can be shown
    params.pUserData = this;
    params.pfnSequenceCallback = &Impl::on_sequence;
    params.pfnDecodePicture = &Impl::on_decode;
    params.pfnDisplayPicture = &Impl::on_display;
    CUVIDEOFORMATEX ext{};
    const auto extra = file.extradata();
    // Codecs whose headers travel out of band in their containers (MPEG-4 in MP4).
    if (codec == cudaVideoCodec_MPEG4 && !extra.empty() &&
        extra.size() <= sizeof(ext.raw_seqhdr_data)) {
      std::copy(extra.begin(), extra.end(), ext.raw_seqhdr_data);
      ext.format.seqhdr_data_length = unsigned(extra.size());
      params.pExtVideoInfo = &ext;
    }
    check(driver().cuvid->cuvidCreateVideoParser(&parser, &params), "creating the parser");
  }
};

NvdecVideo::NvdecVideo(VideoFile file, int device) {
  const std::string why = nvdec_unavailable(device, file.info());
  STOKER_ENFORCE(why.empty(), RuntimeError, "video '", file.name(), "' (NVDEC): ", why);
  cudaVideoCodec codec = cudaVideoCodec_H264;
  codec_of(file.info().codec, codec);  // known: nvdec_unavailable checked it
  impl_ = std::make_unique<Impl>(std::move(file));
  impl_->codec = codec;
  impl_->ctx = retain_primary(device, impl_->dev);
}

NvdecVideo::~NvdecVideo() = default;

void NvdecVideo::decode(int64_t first, int64_t count, int64_t stride, StreamHandle stream,
                        const VideoFile::TakeFrame& take) {
  Impl& m = *impl_;
  const VideoIndex& index = *m.file.index();
  const auto& pts = index.pts;
  index.check_frames(m.name(), first, count, stride);
  if (count == 0) return;
  m.wanted.clear();
  for (int64_t k = 0; k < count; ++k) m.wanted[pts[size_t(first + k * stride)]] = k;
  m.remaining = count;
  m.stream = stream;
  m.take = &take;
  m.error = nullptr;
  m.shown.clear();
  int64_t key_at = index.key_at_or_before(first);
  // NVDEC's parser gives the first picture of a stream that opens on a key frame with leading
  // pictures (HEVC's CRA) the timestamp of a leading picture it dropped: when that key frame is
  // itself wanted, decoding starts at the key frame before it.
  if (key_at == first && key_at > 0 && index.leading[size_t(key_at)])
    key_at = index.key_at_or_before(key_at - 1);
  ContextScope scope(m.ctx);
  m.new_parser();  // a fresh parser after every seek: nothing of the last request lingers
  m.file.read_packets(pts[size_t(key_at)], [&](std::span<const uint8_t> bytes, int64_t t) {
    CUVIDSOURCEDATAPACKET packet{};
    packet.payload = bytes.data();
    packet.payload_size = tcu_ulong(bytes.size());
    packet.flags = CUVID_PKT_TIMESTAMP;
    packet.timestamp = t;
    const CUresult r = driver().cuvid->cuvidParseVideoData(m.parser, &packet);
    if (r != CUDA_SUCCESS && !m.error)
      m.error = std::make_exception_ptr(
          ValueError("video '" + m.name() + "' (NVDEC): parsing failed (" + cu_error(r) + ")"));
    return !m.error && m.remaining > 0;
  });
  if (!m.error && m.remaining > 0) {  // the end of the stream: the frames still held
    CUVIDSOURCEDATAPACKET end{};
    end.flags = CUVID_PKT_ENDOFSTREAM;
    driver().cuvid->cuvidParseVideoData(m.parser, &end);
  }
  driver().cuvid->cuvidDestroyVideoParser(m.parser);
  m.parser = nullptr;
  if (m.error) std::rethrow_exception(m.error);
  if (m.remaining > 0) {
    int64_t missing = first;
    for (int64_t k = 0; k < count; ++k)
      if (m.wanted.count(pts[size_t(first + k * stride)])) {
        missing = first + k * stride;
        break;
      }
    std::string shown;
    for (int64_t t : m.shown) shown += (shown.empty() ? "" : ", ") + std::to_string(t);
    m.fail("frame " + std::to_string(missing) + " (pts " + std::to_string(pts[size_t(missing)]) +
           ") could not be decoded (corrupt or truncated data; decoding from pts " +
           std::to_string(pts[size_t(key_at)]) + " showed " + (shown.empty() ? "none" : shown) +
           ")");
  }
}

#else  // no NVDEC in this build

struct NvdecVideo::Impl {
  VideoFile file;
};

std::string nvdec_unavailable(int, const VideoInfo&) {
  return "stoker was built without NVDEC (it needs CUDA, FFmpeg and nv-codec-headers)";
}

NvdecVideo::NvdecVideo(VideoFile file, int) {
  throw RuntimeError("video '" + file.name() + "' (NVDEC): " + nvdec_unavailable(0, {}));
}
NvdecVideo::~NvdecVideo() = default;
void NvdecVideo::decode(int64_t, int64_t, int64_t, StreamHandle, const VideoFile::TakeFrame&) {}

#endif

NvdecVideo::NvdecVideo(NvdecVideo&&) noexcept = default;
NvdecVideo& NvdecVideo::operator=(NvdecVideo&&) noexcept = default;
const VideoFile& NvdecVideo::file() const { return impl_->file; }


}  // namespace stoker::codecs
