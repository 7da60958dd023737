// libFuzzer target: FITS files (stoker's header walk, then cfitsio behind FitsFile: plain and
// tile-compressed images, gzip-compressed files) must give images or a stoker::ValueError for
// any input: no signal from cfitsio (it divides by header values), no allocation a header
// asks for beyond its limits. Decodes what is small enough, as the reader would.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/core/error.hpp"
#include "stoker/readers/fits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker::readers;
  if (!fits_available()) return 0;
  try {
    FitsFile file({data, size}, "fuzz");
    for (int hdu = 1; hdu <= 4; ++hdu) {
      try {
        const FitsImage img = file.image(hdu);
        if (img.bytes() > (size_t(1) << 24)) continue;  // small: many executions per second
        std::vector<uint8_t> out(img.bytes());
        file.read(img, out.data());
      } catch (const stoker::ValueError&) {
      }
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
