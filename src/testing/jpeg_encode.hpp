// Test helpers: encode JPEGs with libjpeg-turbo, and locate the shared test data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stoker::testing {

struct JpegEncodeOptions {
  int quality = 90;
  bool subsample_420 = true;
  bool progressive = false;
};

// Encodes an interleaved u8 image with 1 (gray) or 3 (RGB) channels.
std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int64_t h, int64_t w, int64_t c,
                                 const JpegEncodeOptions& options = {});

// Rewrites the frame size in a JPEG's SOF marker (to make bogus headers).
void patch_jpeg_size(std::vector<uint8_t>& jpeg, uint16_t height, uint16_t width);

// The shared data folder ($STOKER_SHARED_DATA, else ../shared/data from the source tree), or
// nothing when absent (tests that need it skip).
std::optional<std::string> shared_data_dir();

std::vector<uint8_t> read_file(const std::string& path);

}  // namespace stoker::testing
