// NeMo's ASR manifests (readers.nemo_asr): JSON lines, one utterance per line —
// {"audio_filepath": ..., "duration": seconds, "offset": seconds, "text": ...}; other keys are
// ignored. Parsed line by line with the streaming JSON parser (manifests of LibriSpeech-sized
// datasets hold a few hundred thousand lines).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::readers {

struct NemoEntry {
  std::string audio_filepath;  // as the manifest gives it
  std::string text;
  double duration = -1;  // seconds; -1 when the line has none (DALI's: the whole file)
  double offset = 0;     // seconds from the file's start
  int64_t index = 0;     // among its manifest's entries kept by the filters (DALI's idx)
};

struct NemoManifestOptions {
  double min_duration = 0;  // entries shorter are left out (0: none)
  double max_duration = 0;  // entries longer are left out (0: none)
};

// Appends the entries of one manifest's text (named `path` in errors) to `out` (which may hold
// earlier manifests' entries). Returns how many entries the duration limits left out. Throws
// ValueError naming the manifest and its line for a line that is not a JSON object, an entry
// without audio_filepath, or a key of the wrong type.
int64_t parse_nemo_manifest(std::string_view text, const std::string& path,
                            const NemoManifestOptions& options, std::vector<NemoEntry>& out);

}  // namespace stoker::readers
