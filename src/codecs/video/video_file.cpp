#include "stoker/codecs/video/video_file.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "stoker/core/error.hpp"
#include "stoker/core/mapping_guard.hpp"

#ifdef STOKER_HAVE_FFMPEG
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}
#endif

namespace stoker::codecs {

#ifdef STOKER_HAVE_FFMPEG
namespace {

std::string av_error(int err) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, text, sizeof(text));
  return text;
}

// The file's bytes as libavformat reads them: a cursor over memory.
struct MemoryInput {
  std::span<const uint8_t> data;
  int64_t at = 0;

  static int read(void* opaque, uint8_t* buf, int size) {
    auto* m = static_cast<MemoryInput*>(opaque);
    const int64_t left = int64_t(m->data.size()) - m->at;
    if (left <= 0) return AVERROR_EOF;
    const int n = int(std::min<int64_t>(left, size));
    std::memcpy(buf, m->data.data() + m->at, size_t(n));
    m->at += n;
    return n;
  }
  static int64_t seek(void* opaque, int64_t offset, int whence) {
    auto* m = static_cast<MemoryInput*>(opaque);
    const int64_t size = int64_t(m->data.size());
    switch (whence & ~AVSEEK_FORCE) {
      case AVSEEK_SIZE:
        return size;
      case SEEK_SET:
        break;
      case SEEK_CUR:
        offset += m->at;
        break;
      case SEEK_END:
        offset += size;
        break;
      default:
        return AVERROR(EINVAL);
    }
    if (offset < 0 || offset > size) return AVERROR(EINVAL);
    m->at = offset;
    return offset;
  }
};

struct FormatDeleter {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct IoDeleter {
  void operator()(AVIOContext* io) const {
    av_freep(&io->buffer);
    avio_context_free(&io);
  }
};
struct CodecDeleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketDeleter {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsDeleter {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct BsfDeleter {
  void operator()(AVBSFContext* b) const { av_bsf_free(&b); }
};

}  // namespace

struct VideoFile::Impl {
  std::string name;
  MemoryInput input;
  std::unique_ptr<AVIOContext, IoDeleter> io;
  std::unique_ptr<AVFormatContext, FormatDeleter> format;
  std::unique_ptr<AVCodecContext, CodecDeleter> codec;
  std::unique_ptr<AVFrame, FrameDeleter> frame;
  std::unique_ptr<AVPacket, PacketDeleter> packet;
  std::unique_ptr<SwsContext, SwsDeleter> sws;
  std::vector<uint8_t> converted;  // frames of other pixel formats, as 4:4:4
  std::unique_ptr<AVBSFContext, BsfDeleter> bsf;  // read_packets' filter, made at first use
  int stream = -1;
  std::shared_ptr<const VideoIndex> index;
  int64_t decoded_pts = 0;  // the last frame the decoder gave since the last seek
  bool positioned = false;  // the decoder runs forward from a seek
  bool drained = false;     // the demuxer reached the end and the decoder was flushed

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError("video '" + name + "': " + what);
  }

  // libavcodec refuses a frame above max_pixels (one claiming more than the stream's header)
  // with EINVAL, before allocating it.
  [[noreturn]] void decoding_failed(int err) const {
    fail("decoding failed: " + av_error(err) +
         (err == AVERROR(EINVAL) ? " (frames above max_pixels, " +
                                       std::to_string(codec->max_pixels) + " pixels, are refused)"
                                 : std::string()));
  }

  void seek_to(int64_t key_pts) {
    const int err = av_seek_frame(format.get(), stream, key_pts, AVSEEK_FLAG_BACKWARD);
    if (err < 0) fail("cannot seek to pts " + std::to_string(key_pts) + ": " + av_error(err));
    avcodec_flush_buffers(codec.get());
    positioned = true, drained = false;
    decoded_pts = INT64_MIN;
  }

  // The decoded frame as 8-bit planes: those of the frame itself where its format is one of
  // the planar 8-bit ones (or NV12), else a 4:4:4 conversion by libswscale.
  VideoPlanes planes(int64_t number) {
    const AVFrame* f = frame.get();
    const VideoInfo& info = index->info;
    if (f->width != info.width || f->height != info.height)
      fail("frame " + std::to_string(number) + " is " + std::to_string(f->width) + "x" +
           std::to_string(f->height) + ", the stream " + std::to_string(info.width) + "x" +
           std::to_string(info.height));
    VideoPlanes p;
    p.width = f->width, p.height = f->height;
    p.bt709 = f->colorspace == AVCOL_SPC_BT709;
    p.full_range = f->color_range == AVCOL_RANGE_JPEG;
    p.chroma_center = f->chroma_location == AVCHROMA_LOC_CENTER;
    const auto format = AVPixelFormat(f->format);
    switch (format) {
      case AV_PIX_FMT_YUVJ420P:
      case AV_PIX_FMT_YUVJ422P:
      case AV_PIX_FMT_YUVJ444P:
        p.full_range = true;
        [[fallthrough]];
      case AV_PIX_FMT_YUV420P:
      case AV_PIX_FMT_YUV422P:
      case AV_PIX_FMT_YUV444P: {
        const auto* d = av_pix_fmt_desc_get(format);
        p.shift_x = d->log2_chroma_w, p.shift_y = d->log2_chroma_h;
        for (int c = 0; c < 3; ++c) p.data[c] = f->data[c], p.pitch[c] = f->linesize[c];
        return p;
      }
      case AV_PIX_FMT_NV12:
        p.shift_x = p.shift_y = 1, p.uv_step = 2;
        p.data[0] = f->data[0], p.pitch[0] = f->linesize[0];
        p.data[1] = f->data[1], p.data[2] = f->data[1] + 1;
        p.pitch[1] = p.pitch[2] = f->linesize[1];
        return p;
      default:
        break;
    }
    sws.reset(sws_getCachedContext(sws.release(), f->width, f->height, format, f->width,
                                   f->height, AV_PIX_FMT_YUV444P, SWS_BICUBIC, nullptr, nullptr,
                                   nullptr));
    if (!sws) fail("no conversion from its pixel format to 8-bit Y'CbCr");
    const int64_t plane = int64_t(f->width) * f->height;
    converted.resize(size_t(plane * 3));
    uint8_t* dst[4] = {converted.data(), converted.data() + plane, converted.data() + 2 * plane,
                       nullptr};
    int dst_pitch[4] = {f->width, f->width, f->width, 0};
    sws_scale(sws.get(), f->data, f->linesize, 0, f->height, dst, dst_pitch);
    p.shift_x = p.shift_y = 0, p.full_range = false, p.bt709 = false;
    for (int c = 0; c < 3; ++c) p.data[c] = dst[c], p.pitch[c] = f->width;
    return p;
  }

  // The next decoded frame (in `frame`); false at the end of the stream.
  bool next_frame() {
    for (;;) {
      const int got = avcodec_receive_frame(codec.get(), frame.get());
      if (got == 0) {
        decoded_pts = frame->best_effort_timestamp;
        return true;
      }
      if (got == AVERROR_EOF) return false;
      if (got != AVERROR(EAGAIN)) decoding_failed(got);
      if (drained) return false;
      const int read = av_read_frame(format.get(), packet.get());
      if (read == AVERROR_EOF) {
        drained = true;
        avcodec_send_packet(codec.get(), nullptr);  // flush the frames the decoder holds
        continue;
      }
      if (read < 0) fail("reading failed: " + av_error(read));
      if (packet->stream_index == stream) {
        const int sent = avcodec_send_packet(codec.get(), packet.get());
        av_packet_unref(packet.get());
        if (sent < 0 && sent != AVERROR(EAGAIN)) decoding_failed(sent);
      } else {
        av_packet_unref(packet.get());
      }
    }
  }
};

namespace {
// The file's bytes may be a mapping whose file shrank while FFmpeg read them (the lost pages read
// as zeros: core/mapping_guard.hpp). That is the error, not what the decoder made of the zeros.
void check_not_damaged(std::span<const uint8_t> data, const std::string& name) {
  if (const MappingGuard* g = damaged_mapping(data.data(), data.size()))
    throw IOError(detail::concat("video '", name, "': '", g->path(),
                                 "' shrank while it was being decoded: its bytes past the new end "
                                 "are gone (the file changed under the pipeline)"));
}
}  // namespace

VideoFile VideoFile::open(std::span<const uint8_t> data, std::string name,
                          std::shared_ptr<const VideoIndex> known, int64_t max_pixels) {
  try {
    return open_unchecked(data, name, std::move(known), max_pixels);
  } catch (...) {
    check_not_damaged(data, name);
    throw;
  }
}

VideoFile VideoFile::open_unchecked(std::span<const uint8_t> data, std::string name,
                                    std::shared_ptr<const VideoIndex> known, int64_t max_pixels) {
  // FFmpeg's own messages would repeat what the errors below say, once per thread and packet:
  // only fatal ones are printed (a process-wide setting of the FFmpeg libraries stoker loads).
  static std::once_flag quiet;
  std::call_once(quiet, [] { av_log_set_level(AV_LOG_FATAL); });
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->input.data = data;
  constexpr int kIoBuffer = 1 << 16;
  auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBuffer));
  STOKER_ENFORCE(buffer != nullptr, RuntimeError, "video: out of memory");
  impl->io.reset(avio_alloc_context(buffer, kIoBuffer, 0, &impl->input, &MemoryInput::read, nullptr,
                                    &MemoryInput::seek));
  if (!impl->io) {
    av_free(buffer);
    throw RuntimeError("video: out of memory");
  }
  AVFormatContext* fmt = avformat_alloc_context();
  STOKER_ENFORCE(fmt != nullptr, RuntimeError, "video: out of memory");
  fmt->pb = impl->io.get();
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  int err = avformat_open_input(&fmt, nullptr, nullptr, nullptr);  // frees fmt on failure
  if (err < 0) impl->fail("not a video file FFmpeg can read (" + av_error(err) + ")");
  impl->format.reset(fmt);
  // Probing decodes a few frames: its decoders refuse frames above max_pixels before allocating
  // them (a small file can claim 16000x16000 frames), as this file's decoder does below. A
  // refused size reads 0x0 after probing: the container's claim is kept for the error.
  const std::string limit = std::to_string(max_pixels);
  std::vector<AVDictionary*> probe_options(fmt->nb_streams, nullptr);
  std::vector<std::pair<int, int>> claimed;
  for (unsigned k = 0; k < fmt->nb_streams; ++k) {
    av_dict_set(&probe_options[k], "max_pixels", limit.c_str(), 0);
    claimed.emplace_back(fmt->streams[k]->codecpar->width, fmt->streams[k]->codecpar->height);
  }
  err = avformat_find_stream_info(fmt, probe_options.data());
  for (auto& o : probe_options) av_dict_free(&o);
  if (err < 0) impl->fail("cannot read the streams (" + av_error(err) + ")");
  const AVCodec* decoder = nullptr;
  impl->stream = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
  if (impl->stream == AVERROR_STREAM_NOT_FOUND) impl->fail("no video stream");
  if (impl->stream < 0 || decoder == nullptr)
    impl->fail("no decoder for its video stream (" + av_error(impl->stream) + ")");
  const AVStream* st = fmt->streams[impl->stream];
  auto [claimed_w, claimed_h] = size_t(impl->stream) < claimed.size()
                                    ? claimed[size_t(impl->stream)]
                                    : std::pair<int, int>{0, 0};
  if (st->codecpar->width > 0 && st->codecpar->height > 0)
    claimed_w = st->codecpar->width, claimed_h = st->codecpar->height;
  if (int64_t(claimed_w) * claimed_h > max_pixels)
    impl->fail("its frames are " + std::to_string(claimed_w) + "x" + std::to_string(claimed_h) +
               " pixels, above max_pixels (" + limit + "): refused before decoding");
  impl->codec.reset(avcodec_alloc_context3(decoder));
  STOKER_ENFORCE(impl->codec != nullptr, RuntimeError, "video: out of memory");
  err = avcodec_parameters_to_context(impl->codec.get(), st->codecpar);
  if (err < 0) impl->fail("bad codec parameters (" + av_error(err) + ")");
  impl->codec->thread_count = 1;  // the readers decode many files on their own threads
  impl->codec->max_pixels = max_pixels;  // frames claiming more than the header are refused
  err = avcodec_open2(impl->codec.get(), decoder, nullptr);
  if (err < 0)
    impl->fail("cannot open the " + std::string(decoder->name) + " decoder (" + av_error(err) +
               ")");
  impl->frame.reset(av_frame_alloc());
  impl->packet.reset(av_packet_alloc());
  STOKER_ENFORCE(impl->frame && impl->packet, RuntimeError, "video: out of memory");

  if (known) {
    impl->index = known;
    return VideoFile(std::move(impl), std::move(known));
  }
  // The index: every packet of the stream, its timestamp and whether it starts a key frame.
  auto index = std::make_shared<VideoIndex>();
  std::vector<std::pair<int64_t, bool>> frames;
  while ((err = av_read_frame(fmt, impl->packet.get())) >= 0) {
    if (impl->packet->stream_index == impl->stream) {
      const int64_t t = impl->packet->pts != AV_NOPTS_VALUE ? impl->packet->pts : impl->packet->dts;
      if (t == AV_NOPTS_VALUE) {
        av_packet_unref(impl->packet.get());
        impl->fail("a packet has no timestamp");
      }
      frames.emplace_back(t, (impl->packet->flags & AV_PKT_FLAG_KEY) != 0);
    }
    av_packet_unref(impl->packet.get());
  }
  if (err != AVERROR_EOF) impl->fail("reading failed: " + av_error(err));
  if (frames.empty()) impl->fail("its video stream has no frames");
  // Key frames with leading pictures: later in decode order, earlier in display order (HEVC's
  // CRA and H.264's open GOPs: decoding that starts there skips those pictures).
  std::vector<int64_t> leading;  // their timestamps
  for (size_t j = 0; j < frames.size(); ++j) {
    if (!frames[j].second) continue;
    for (size_t i = j + 1; i < frames.size() && !frames[i].second; ++i) {
      if (frames[i].first < frames[j].first) {
        leading.push_back(frames[j].first);
        break;
      }
    }
  }
  std::sort(frames.begin(), frames.end());
  for (size_t k = 1; k < frames.size(); ++k) {
    if (frames[k].first == frames[k - 1].first)
      impl->fail("two frames have the same timestamp " + std::to_string(frames[k].first));
  }
  for (const auto& [t, k] : frames) {
    index->pts.push_back(t), index->key.push_back(k);
    index->leading.push_back(k && std::binary_search(leading.begin(), leading.end(), t));
  }
  if (!index->key[0]) impl->fail("the first frame is not a key frame");

  VideoInfo& info = index->info;
  info.codec = decoder->name;
  info.width = impl->codec->width, info.height = impl->codec->height;
  if (info.width <= 0 || info.height <= 0)
    impl->fail("the video stream has no frame size (its frames cannot be decoded, or claim more "
               "than max_pixels (" + limit + ") pixels)");
  info.frames = int64_t(index->pts.size());
  info.time_base_num = st->time_base.num, info.time_base_den = st->time_base.den;
  info.fps_num = st->avg_frame_rate.num, info.fps_den = std::max(1, st->avg_frame_rate.den);
  const AVCodecParameters* par = st->codecpar;
  if (const char* name = av_get_pix_fmt_name(AVPixelFormat(par->format))) info.pixel_format = name;
  info.bt709 = par->color_space == AVCOL_SPC_BT709;
  info.full_range = par->color_range == AVCOL_RANGE_JPEG || par->format == AV_PIX_FMT_YUVJ420P;
  info.chroma_center = par->chroma_location == AVCHROMA_LOC_CENTER;
  // Steps that differ by one unit of the time base are rounding (30 fps in milliseconds: 33,
  // 33, 34), not a variable rate.
  int64_t shortest = INT64_MAX, longest = 0;
  for (size_t k = 1; k < index->pts.size(); ++k) {
    const int64_t step = index->pts[k] - index->pts[k - 1];
    shortest = std::min(shortest, step), longest = std::max(longest, step);
  }
  info.variable_frame_rate = index->pts.size() > 2 && longest - shortest > 1;
  impl->index = index;
  return VideoFile(std::move(impl), std::move(index));
}


void VideoFile::decode(int64_t first, int64_t count, int64_t stride, const TakeFrame& take) {
  try {
    decode_frames(first, count, stride, take);
  } catch (...) {
    check_not_damaged(impl_->input.data, impl_->name);
    throw;
  }
  check_not_damaged(impl_->input.data, impl_->name);
}

void VideoFile::decode_frames(int64_t first, int64_t count, int64_t stride,
                              const TakeFrame& take) {
  Impl& m = *impl_;
  index_->check_frames(m.name, first, count, stride);
  const auto& pts = index_->pts;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t number = first + k * stride;
    const int64_t want = pts[size_t(number)];
    // The key frame at or before the wanted one (display order): decoding starts there when the
    // decoder is not already on its way to the wanted frame past it.
    const int64_t key_pts = pts[size_t(index_->key_at_or_before(number))];
    if (!m.positioned || m.decoded_pts >= want || m.decoded_pts < key_pts) m.seek_to(key_pts);
    bool found = false;
    while (m.next_frame()) {
      if (m.decoded_pts < want) continue;
      found = m.decoded_pts == want;
      break;
    }
    if (!found) {
      m.positioned = false;
      m.fail("frame " + std::to_string(number) + " (pts " + std::to_string(want) +
             ") could not be decoded (corrupt or truncated data)");
    }
    take(k, m.planes(number));
  }
}

std::span<const uint8_t> VideoFile::extradata() const {
  const AVCodecParameters* par = impl_->format->streams[impl_->stream]->codecpar;
  return {par->extradata, size_t(std::max(par->extradata_size, 0))};
}

void VideoFile::read_packets(int64_t key_pts, const TakePacket& take) {
  try {
    read_packets_from(key_pts, take);
  } catch (...) {
    check_not_damaged(impl_->input.data, impl_->name);
    throw;
  }
  check_not_damaged(impl_->input.data, impl_->name);
}

void VideoFile::read_packets_from(int64_t key_pts, const TakePacket& take) {
  Impl& m = *impl_;
  const AVStream* st = m.format->streams[m.stream];
  if (!m.bsf) {
    // What DALI's NVDEC reader filters with: length-prefixed H.264/HEVC to Annex B, AVI's
    // packed MPEG-4 B-frames unpacked; others as they are.
    const char* name = "null";
    if (st->codecpar->codec_id == AV_CODEC_ID_H264) name = "h264_mp4toannexb";
    if (st->codecpar->codec_id == AV_CODEC_ID_HEVC) name = "hevc_mp4toannexb";
    if (st->codecpar->codec_id == AV_CODEC_ID_MPEG4) name = "mpeg4_unpack_bframes";
    const AVBitStreamFilter* filter = av_bsf_get_by_name(name);
    if (filter == nullptr) m.fail(std::string("FFmpeg lacks the bitstream filter ") + name);
    AVBSFContext* ctx = nullptr;
    if (av_bsf_alloc(filter, &ctx) < 0) throw RuntimeError("video: out of memory");
    m.bsf.reset(ctx);
    avcodec_parameters_copy(ctx->par_in, st->codecpar);
    ctx->time_base_in = st->time_base;
    const int err = av_bsf_init(ctx);
    if (err < 0) m.fail("cannot set up the bitstream filter " + std::string(name) + ": " + av_error(err));
  }
  int err = av_seek_frame(m.format.get(), m.stream, key_pts, AVSEEK_FLAG_BACKWARD);
  if (err < 0) m.fail("cannot seek to pts " + std::to_string(key_pts) + ": " + av_error(err));
  av_bsf_flush(m.bsf.get());
  m.positioned = false;  // the CPU decoder's position is lost
  std::unique_ptr<AVPacket, PacketDeleter> filtered(av_packet_alloc());
  bool more = true;
  while (more) {
    err = av_read_frame(m.format.get(), m.packet.get());
    if (err == AVERROR_EOF) break;
    if (err < 0) m.fail("reading failed: " + av_error(err));
    if (m.packet->stream_index != m.stream) {
      av_packet_unref(m.packet.get());
      continue;
    }
    err = av_bsf_send_packet(m.bsf.get(), m.packet.get());  // takes the packet's reference
    if (err < 0) {
      av_packet_unref(m.packet.get());
      m.fail("filtering a packet failed: " + av_error(err));
    }
    while (more && (err = av_bsf_receive_packet(m.bsf.get(), filtered.get())) == 0) {
      const int64_t pts = filtered->pts != AV_NOPTS_VALUE ? filtered->pts : filtered->dts;
      more = take({filtered->data, size_t(filtered->size)}, pts);
      av_packet_unref(filtered.get());
    }
    if (more && err != AVERROR(EAGAIN)) m.fail("filtering a packet failed: " + av_error(err));
  }
}

#else  // no FFmpeg

struct VideoFile::Impl {};

VideoFile VideoFile::open(std::span<const uint8_t>, std::string name,
                          std::shared_ptr<const VideoIndex>, int64_t) {
  throw RuntimeError("video '" + name +
                     "': stoker was built without FFmpeg (libavformat, libavcodec, libswscale)");
}

void VideoFile::decode(int64_t, int64_t, int64_t, const TakeFrame&) {}
void VideoFile::read_packets(int64_t, const TakePacket&) {}
std::span<const uint8_t> VideoFile::extradata() const { return {}; }

#endif

void VideoIndex::check_frames(const std::string& name, int64_t first, int64_t count,
                              int64_t stride) const {
  const int64_t n = int64_t(pts.size());
  STOKER_ENFORCE(
      count >= 0 && stride >= 1 && first >= 0 && (count == 0 || first + (count - 1) * stride < n),
      ValueError, "video '", name, "': frames ", first, " + k * ", stride, " for k < ", count,
      " are not all among its ", n, " frames");
}

bool VideoFile::available() {
#ifdef STOKER_HAVE_FFMPEG
  return true;
#else
  return false;
#endif
}

#ifdef STOKER_HAVE_FFMPEG
const std::string& VideoFile::name() const { return impl_->name; }
#else
const std::string& VideoFile::name() const {
  static const std::string none;
  return none;
}
#endif

VideoFile::VideoFile(std::unique_ptr<Impl> impl, std::shared_ptr<const VideoIndex> index)
    : impl_(std::move(impl)), index_(std::move(index)) {}
VideoFile::VideoFile(VideoFile&&) noexcept = default;
VideoFile& VideoFile::operator=(VideoFile&&) noexcept = default;
VideoFile::~VideoFile() = default;

}  // namespace stoker::codecs
