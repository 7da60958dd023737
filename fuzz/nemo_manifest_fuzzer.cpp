// libFuzzer target: a NeMo manifest must give entries or a stoker::ValueError; every entry kept
// has a path, a finite non-negative offset and duration (-1: none given) within the limits the
// first byte picks, and indices that count the kept entries (else the target traps).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/readers/nemo_manifest.hpp"

using namespace stoker::readers;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  NemoManifestOptions o;
  o.min_duration = (data[0] & 15) * 0.25;
  o.max_duration = (data[0] >> 4) * 0.5;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<NemoEntry> entries;
  try {
    parse_nemo_manifest(text, "fuzz.json", o, entries);
  } catch (const stoker::ValueError&) {
    return 0;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const NemoEntry& e = entries[i];
    if (e.audio_filepath.empty() || e.index != int64_t(i)) __builtin_trap();
    if (!std::isfinite(e.offset) || e.offset < 0 || !std::isfinite(e.duration) ||
        (e.duration < 0 && e.duration != -1))
      __builtin_trap();
    if ((o.min_duration > 0 && e.duration < o.min_duration) ||
        (o.max_duration > 0 && e.duration > o.max_duration))
      __builtin_trap();
  }
  return 0;
}
