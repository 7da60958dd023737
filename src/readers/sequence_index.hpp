// readers.sequence's dataset: folders of frames stored as image files (one folder per stream),
// found and ordered as DALI's sequence loader finds them (GatherExtractedStreams). Cutting the
// streams into sequences is readers::cut_sequences (video_index.hpp): DALI cuts both alike.
#pragma once

#include <string>
#include <vector>

namespace stoker::readers {

struct FrameStream {
  std::string folder;               // root/<name>
  std::vector<std::string> frames;  // its frame files, in order
};

// The streams of `root`: every entry root/<sub>/<file> (DALI's glob "root/*/*": one level, no
// names starting with '.') whose file name ends with an image extension (default_image_filters,
// case-insensitive), that is not a folder. All paths are sorted bytewise (std::sort, as DALI),
// which orders the streams by folder name + '/' ("a b" < "a.b" < "a") and each stream's frames
// by file name. Throws IOError when root is not a folder, ValueError when it holds no frames.
std::vector<FrameStream> index_frame_streams(const std::string& root);

}  // namespace stoker::readers
