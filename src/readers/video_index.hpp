// readers.video's dataset: which files, with which labels and frame ranges, and the sequences
// (first frame, frame count) cut from them, as DALI's video reader cuts them. No decoding here:
// the frame counts and rates come from the demuxed files (codecs::VideoFile).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stoker::readers {

struct VideoEntry {
  std::string path;
  int32_t label = 0;
  // Part of the file to read, as the file list gives it (seconds, or frame numbers with
  // file_list_frame_num; negative values count from the end); both 0: the whole file. Single
  // precision, as DALI reads them: -0.4 s is then a hair before -0.4, which decides floor().
  float start = 0, end = 0;
};

// DALI's file_list for videos: "<path> <label> [<start> [<end>]]" per line, paths as given
// (relative ones to the current folder, as in DALI), blank lines skipped, labels >= 0. A line
// whose start equals its end selects nothing and is skipped. Throws ValueError naming the line.
std::vector<VideoEntry> parse_video_file_list(const std::string& list_path);

struct FrameRangeOptions {
  bool frame_numbers = false;      // file_list_frame_num: start/end are frame numbers
  bool include_preceding = false;  // file_list_include_preceding_frame
};

// The frames [first, end) of an entry in a file of `frames` frames at `fps` frames per second.
// Times become frames as DALI computes them: ceil(start * fps) and floor(end * fps), or
// floor/ceil with include_preceding; negative ones add `frames`. Frame numbers are truncated
// towards zero (DALI's float-to-int conversion; its documentation says start rounds up).
// Throws ValueError naming the file when the range is empty-ordered or outside the file.
std::pair<int64_t, int64_t> video_frame_range(const VideoEntry& entry, int64_t frames, double fps,
                                              const FrameRangeOptions& options);

struct VideoSequence {
  int32_t file = 0;
  int64_t first = 0;   // first frame
  int32_t frames = 0;  // frames read: sequence_length, fewer for a padded one
};

struct SequenceOptions {
  int64_t length = 1;  // sequence_length
  int64_t step = -1;   // between sequence starts; < 0: length * stride (DALI's)
  int64_t stride = 1;  // between the frames of a sequence
  bool pad = false;    // pad_sequences: sequences running past the end are kept, shorter
};

// Appends the sequences of frames [first, end) of file `file`: starts first, first + step, ...
// while a whole sequence (1 + (length - 1) * stride frames) fits; with pad, then every later
// start before `end` too, with the frames that remain.
void cut_sequences(int32_t file, int64_t first, int64_t end, const SequenceOptions& options,
                   std::vector<VideoSequence>& out);

// experimental.readers.video's file_list ranges (DALI 2.4's new reader): start and end are
// timestamps in seconds (found among the frames' timestamps, rounded to a frame as `start_down`
// and `end_down` say) or frame numbers (negative ones from the end, rounded alike); the end is
// exclusive, and with include_end clamped to the file's frames. Both 0: the whole file.
struct ListRangeOptions {
  bool frame_numbers = false;  // file_list_format='frames'
  bool start_down = true;      // file_list_rounding: start rounded down (else up)
  bool end_down = false;       // ... end rounded down (else up)
  bool include_end = true;     // file_list_include_end
};
// From the arguments' names; throws ValueError naming a value it does not know.
ListRangeOptions parse_list_range_options(const std::string& format, const std::string& rounding,
                                          bool include_end);
// The frames [first, end) of `entry` in a file whose frames have timestamps `pts` (display
// order, time base num/den), computed as DALI 2.4 does, quirks included: a time past the last
// frame's becomes frame 0, and negative times are not counted from the end. The range may be
// empty (the reader skips the entry, as DALI does) or reach outside the file (frames there
// follow the padding, or fail with pad_mode 'none').
std::pair<int64_t, int64_t> video_list_range(const VideoEntry& entry,
                                             const std::vector<int64_t>& pts, int64_t tb_num,
                                             int64_t tb_den, const ListRangeOptions& options);

// decoders.video's choice of frames (DALI's): a list, or start/end or start/length with a
// stride; frames past the end are padded as pad_mode says.
enum class FramePadding { kNone, kConstant, kEdge, kReflect1001, kReflect101 };
// DALI's names: none, constant, edge (repeat), reflect_1001 (symmetric), reflect_101 (reflect).
FramePadding parse_frame_padding(const std::string& name);

struct FrameSelection {
  std::vector<int64_t> frames;  // used when `listed`
  bool listed = false;
  int64_t start = 0;
  int64_t end = -1;     // exclusive; -1: the video's end (unless `length`)
  int64_t length = -1;  // -1: up to `end`
  int64_t stride = 1;
  FramePadding pad = FramePadding::kConstant;
};

// The frame numbers to output for a video of `count` frames, in order; -1 for a frame of the
// constant padding. Past the end: pad 'none' drops the rest of a range (and refuses a listed
// frame), 'edge' repeats the last frame, the reflections mirror the frame numbers at the end
// (1001: ...n-2, n-1 | n-1, n-2...; 101: ...n-2, n-1 | n-2...). Throws ValueError for negative
// frames, a start past the end, a stride below 1.
std::vector<int64_t> select_frames(const FrameSelection& selection, int64_t count);

// experimental.readers.video's frame for position `frame` of a sample whose frames are
// [lo, end) (DALI's HandleBoundary): the frame itself inside; else 'edge' clamps to [lo, end),
// the reflections mirror about [0, end) (DALI's), 'constant' gives -1 and 'none' throws
// ValueError. Call with end > lo.
int64_t bound_frame(int64_t frame, int64_t lo, int64_t end, FramePadding pad);

}  // namespace stoker::readers
