// experimental.readers.fits: image HDUs from FITS files (cfitsio).
#pragma once

#include "stoker/ops/schema.hpp"

namespace stoker::ops {
OpSchema fits_reader_schema();
}  // namespace stoker::ops
