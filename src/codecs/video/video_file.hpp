// A video file's video stream, demuxed by FFmpeg's libavformat and decoded on the CPU by its
// libavcodec: the index of its frames (display order, key frames), and frames decoded by their
// numbers as 8-bit Y'CbCr planes, seeking only to the key frames the wanted frames need (the
// conversion to RGB is a kernel shared with the GPU decoder: kernels/color/yuv_to_rgb.hpp). The file is read
// from memory (a mapped file, or bytes from another reader), through a custom AVIOContext.
//
// Built only where FFmpeg's development files are (STOKER_HAVE_FFMPEG; scripts/setup installs
// Debian's); elsewhere open() throws a RuntimeError saying so.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace stoker::codecs {

struct VideoInfo {
  std::string codec;  // FFmpeg's decoder name: "h264", "hevc", "vp9", ...
  int64_t width = 0, height = 0;
  int64_t frames = 0;  // decodable frames of the stream (its packets)
  // The stream's time base (seconds per pts unit) and average frame rate, as fractions.
  int64_t time_base_num = 0, time_base_den = 1;
  int64_t fps_num = 0, fps_den = 1;
  // Frame durations (pts steps in display order) differ by more than one unit of the time base
  // (its rounding): DALI's readers.video refuses such files unless told otherwise
  // (skip_vfr_check).
  bool variable_frame_rate = false;
  // The stream's pixel format as FFmpeg names it ("yuv420p", ...) and its colour description
  // (what NVDEC's frames are converted with; the CPU path reads each frame's own).
  std::string pixel_format;
  bool bt709 = false, full_range = false, chroma_center = false;
};

// A decoded frame: Y, Cb, Cr planes of 8 bits, chroma subsampled by 2^shift, and how to turn
// it into RGB. Streams in other pixel formats (10 bits, RGB, palettes) are converted to 4:4:4
// by libswscale first (BT.601, limited range).
struct VideoPlanes {
  const uint8_t* data[3] = {};
  int64_t pitch[3] = {};
  int uv_step = 1;  // bytes between a row's chroma samples (2: NV12's interleaved Cb, Cr)
  int shift_x = 1, shift_y = 1;
  bool chroma_center = false;  // chroma between luma columns (MPEG-1, JPEG), not on the even ones
  bool full_range = false;
  bool bt709 = false;  // else BT.601
  int64_t width = 0, height = 0;
};

// What indexing a file found; shared by the VideoFiles later opened on the same bytes, which
// then skip the scan.
struct VideoIndex {
  VideoInfo info;
  std::vector<int64_t> pts;  // presentation timestamps in display order (stream time base)
  std::vector<bool> key;     // whether each is a key frame
  // Whether each is a key frame with leading pictures (decoded after it, shown before it: an
  // open GOP's): a decoder that starts at it drops them.
  std::vector<bool> leading;

  // The key frame at or before frame n (display order): where decoding frame n starts.
  int64_t key_at_or_before(int64_t n) const {
    while (!key[size_t(n)]) --n;
    return n;
  }
  // Throws ValueError naming the file unless frames first + k * stride, k < count, all exist.
  void check_frames(const std::string& name, int64_t first, int64_t count, int64_t stride) const;
};

class VideoFile {
 public:
  // Whether this build has FFmpeg.
  static bool available();
  // The largest frame (width * height) accepted by default: the image decoders' max_pixels.
  static constexpr int64_t kMaxPixels = int64_t(1) << 27;
  // Demuxes `data` (the whole file; it must outlive the VideoFile) and indexes its first video
  // stream, or takes `index` from an earlier open of the same bytes. `name` names the file in
  // errors. Throws ValueError for data FFmpeg cannot read, files without a video stream,
  // streams without frames or codecs without a decoder, and streams whose frames exceed
  // `max_pixels`: refused before any frame is allocated (libavcodec's own max_pixels also bounds
  // FFmpeg's probing decoders and this file's decoder, for frames claiming more than the
  // stream's header).
  static VideoFile open(std::span<const uint8_t> data, std::string name,
                        std::shared_ptr<const VideoIndex> index = nullptr,
                        int64_t max_pixels = kMaxPixels);
  VideoFile(VideoFile&&) noexcept;
  VideoFile& operator=(VideoFile&&) noexcept;
  ~VideoFile();

  const std::string& name() const;  // as given to open(): errors name the file with it
  const VideoInfo& info() const { return index_->info; }
  const std::vector<int64_t>& pts() const { return index_->pts; }
  const std::vector<bool>& key() const { return index_->key; }
  const std::shared_ptr<const VideoIndex>& index() const { return index_; }

  // Decodes `count` frames, numbers first, first + stride, ... (display order), and calls
  // take(k, planes) for the k-th; the planes are valid during the call only. Throws ValueError
  // naming the file and the frame when a frame cannot be decoded (corrupt or truncated data).
  using TakeFrame = std::function<void(int64_t k, const VideoPlanes& frame)>;
  void decode(int64_t first, int64_t count, int64_t stride, const TakeFrame& take);

  // For decoders elsewhere (NVDEC): seeks to the key frame whose timestamp is `key_pts` and
  // calls take(bytes, pts) for each packet of the stream from there, in decode order, as
  // NVDEC's parser takes them (H.264 and HEVC in Annex B, with their parameter sets; MPEG-4's
  // packed B-frames unpacked), until take returns false or the stream ends. The bytes are valid
  // during the call.
  using TakePacket = std::function<bool(std::span<const uint8_t> bytes, int64_t pts)>;
  void read_packets(int64_t key_pts, const TakePacket& take);
  // The codec's out-of-band header (MPEG-4's VOL in MP4, ...; empty when it has none).
  std::span<const uint8_t> extradata() const;

 private:
  struct Impl;
  VideoFile(std::unique_ptr<Impl> impl, std::shared_ptr<const VideoIndex> index);
  // open(), decode() and read_packets() without the check that the file kept its bytes.
  static VideoFile open_unchecked(std::span<const uint8_t> data, std::string name,
                                  std::shared_ptr<const VideoIndex> index, int64_t max_pixels);
  void decode_frames(int64_t first, int64_t count, int64_t stride, const TakeFrame& take);
  void read_packets_from(int64_t key_pts, const TakePacket& take);
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<const VideoIndex> index_;
};

}  // namespace stoker::codecs
