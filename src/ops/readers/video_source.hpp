// What the video readers share (readers.video, experimental.readers.video, readers.video_resize):
// a ReaderSource whose samples are clips, frames of one file each. The files are indexed at build
// (codecs::VideoFile: demuxed, not decoded); each reader says which files it reads, how it cuts
// them into clips and which frames a clip holds (a list, in output order, that may repeat frames
// and hold padding). Clips are decoded on the reader's I/O threads, by FFmpeg's libavcodec or
// (gpu readers) NVDEC into device memory, each distinct frame once and in order, with a few
// decoders kept open per file so that consecutive clips continue where the last stopped.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stoker/codecs/video/nvdec_video.hpp"
#include "stoker/codecs/video/video_file.hpp"
#include "stoker/ops/readers/reader_base.hpp"
#include "stoker/readers/video_index.hpp"

namespace stoker::ops {

enum class FrameNumbers { kNone, kScalar, kSequence };

// enable_frame_num's values (DALI's): 'none'/False, 'scalar'/True, 'sequence'. Errors name `op`.
FrameNumbers parse_frame_numbers(const std::string& op, const std::string& mode);

// What a video reader outputs and how (set by its schema's arguments).
struct VideoSourceOptions {
  std::string op;  // the operator's name, in errors
  bool labels = false, timestamps = false;
  FrameNumbers frame_numbers = FrameNumbers::kNone;
  DType dtype = DType::kU8;
  bool rgb = true, normalized = false;
  std::vector<double> fill{0.0};  // the padding frame's value: one, or one per channel
  int64_t length = 1;             // frames per clip
};

// One frame of a clip: the frame decoded into it (-1: the padding frame) and the number its
// frame_num output says.
struct ClipFrame {
  int64_t decode = -1;
  int64_t number = -1;
};

// A dataset sample: a clip of one file.
struct VideoClip {
  int32_t file = 0;
  int32_t count =
      0;  // what the reader's frames() needs besides `start` (readers.video: frames read)
  int64_t start = 0;  // the first frame (frame_num 'scalar')
};

class VideoSource : public ReaderSource {
 public:
  VideoSource(const OpSpec& spec, VideoSourceOptions options);
  ~VideoSource() override;  // (OpenVideo is complete in the .cpp)

  int64_t build_index() final;
  std::vector<DType> output_dtypes() const final;
  TensorLayout output_layout(size_t k) const final {
    return k == 0 ? TensorLayout("FHWC") : TensorLayout();
  }
  bool preshuffles() const final { return true; }  // DALI shuffles its clip list once
  std::string source_info(int64_t index) const final;
  void start(const Workspace& ws) final;
  void load(readers::LoadedSample& s, MemoryPool& pool) const final;

 protected:
  struct File {
    std::string path;
    int32_t label = 0;
    std::shared_ptr<const codecs::VideoIndex> index;  // null: the file could not be read
    std::string error;  // why not: a ValueError, or an IOError when `io`
    bool io = false;
    int64_t first = 0, end = 0;  // the frames the reader takes from it (its file list range)
  };

  // The files to read, with their labels and file-list ranges.
  virtual std::vector<readers::VideoEntry> entries() const = 0;
  // Refuses a file the reader does not take (readers.video: variable frame rates).
  virtual void check_file(const readers::VideoEntry& /*entry*/,
                          const codecs::VideoFile& /*video*/) const {}
  // The frames [first, end) of `entry` that the reader takes (first >= end: none, skipped).
  virtual std::pair<int64_t, int64_t> frame_range(const readers::VideoEntry& entry,
                                                  const codecs::VideoIndex& index) const = 0;
  // Appends the clips of file `file` (files_[file] is set, its range included).
  virtual void cut(int32_t file, std::vector<VideoClip>& out) const = 0;
  // The frames of `clip` in output order (options_.length of them).
  virtual void frames(const VideoClip& clip, std::vector<ClipFrame>& out) const = 0;
  // The error when no readable file gives a clip.
  virtual std::string no_clips_error(int64_t readable_files) const = 0;

  const OpSpec& spec() const { return spec_; }
  const std::vector<File>& files() const { return files_; }
  const VideoSourceOptions& options() const { return options_; }

 private:
  [[noreturn]] static void fail(const File& f);
  struct OpenVideo;
  std::unique_ptr<OpenVideo> acquire(int32_t file) const;
  void release(std::unique_ptr<OpenVideo> open) const;
  // Decodes the clip's frames into `out` (frames at `bytes` apart): on the CPU, or with NVDEC
  // into device memory on `stream`.
  void decode_cpu(const VideoClip& clip, const std::vector<ClipFrame>& frames, uint8_t* out,
                  int64_t bytes) const;
  void decode_gpu(const VideoClip& clip, const std::vector<ClipFrame>& frames, uint8_t* out,
                  int64_t bytes, StreamHandle stream) const;
  // The padding frame (h x w x 3 values of the output dtype), on the host.
  std::vector<uint8_t> fill_frame(int64_t h, int64_t w) const;
  // The small outputs (labels, frame numbers, timestamps) of a clip.
  void add_metadata(readers::LoadedSample& s, const VideoClip& clip,
                    const std::vector<ClipFrame>& frames, MemoryPool& pool,
                    StreamHandle stream) const;

  OpSpec spec_;
  VideoSourceOptions options_;
  readers::FileOptions file_options_;
  bool gpu_ = false;
  int device_ = 0;
  mutable MemoryPool bytes_pool_{make_host_allocator()};  // the files' bytes, on the host
  mutable std::mutex streams_mutex_;
  mutable std::vector<std::unique_ptr<CudaStream>> streams_;  // idle I/O-thread streams
  std::vector<File> files_;                                   // built once, then read-only
  std::vector<VideoClip> clips_;                              // the dataset: one sample per clip
  size_t max_idle_;
  mutable std::mutex idle_mutex_;
  mutable std::list<std::unique_ptr<OpenVideo>> idle_;  // most recently used first
};

// The arguments naming the files a video reader reads, the first of its schema: filenames,
// labels, file_root, file_list (the docs of labels and file_list are the reader's: what [] and
// a line's start and end mean differ).
std::vector<ArgSchema> video_file_args(std::string labels_doc, std::string file_list_doc);

// enable_frame_num (parse_frame_numbers reads it) and enable_timestamps.
std::vector<ArgSchema> video_metadata_args();

// Appends the loader's arguments to a video reader's schema (num_io_threads defaulting to 4:
// decoding runs on those threads).
void add_video_loader_args(OpSchema& schema);

// The outputs' names for a spec: video, then labels, frame_num, timestamps where given.
std::vector<std::string> video_output_names(bool labels, FrameNumbers frame_numbers,
                                            bool timestamps);

// image_type's value checked (RGB or YCbCr, any case): true for RGB. Errors name `op`.
bool parse_video_image_type(const std::string& op, const std::string& value);

}  // namespace stoker::ops
