// multi_paste: regions of several images pasted onto one zeroed HWC canvas, in order (a later
// region covers an earlier one), converted to the canvas's type by cast_value's rules
// (core/dtype.hpp). The CPU zeroes the canvas and copies the regions in order; the GPU
// (multi_paste_gpu.cu) gives each canvas pixel the last region covering it, or zero.
#pragma once

#include <algorithm>
#include <cstdint>

#include "stoker/core/cuda.hpp"
#include "stoker/core/dtype.hpp"

namespace stoker::kernels {

// A region of an input image (in_y, in_x, h, w) placed at (out_y, out_x) on the canvas;
// the caller keeps it inside both.
struct PasteRegion {
  const void* in = nullptr;
  int64_t in_width = 0;  // the input's width (its rows are in_width * channels elements)
  int64_t in_y = 0, in_x = 0, out_y = 0, out_x = 0, h = 0, w = 0;
};

// One canvas: h x w x c, its regions regions[first, first + count).
struct MultiPasteSample {
  void* out = nullptr;
  int64_t h = 0, w = 0, c = 0;
  int32_t first = 0, count = 0;
};

template <typename Out, typename In>
void multi_paste_cpu(const MultiPasteSample& s, const PasteRegion* regions) {
  Out* out = static_cast<Out*>(s.out);
  std::fill_n(out, s.h * s.w * s.c, Out(0));
  for (int32_t k = s.first; k < s.first + s.count; ++k) {
    const PasteRegion& r = regions[k];
    const In* in = static_cast<const In*>(r.in);
    for (int64_t y = 0; y < r.h; ++y) {
      const In* src = in + ((r.in_y + y) * r.in_width + r.in_x) * s.c;
      Out* dst = out + ((r.out_y + y) * s.w + r.out_x) * s.c;
      if constexpr (std::is_same_v<In, Out>) {
        std::copy_n(src, r.w * s.c, dst);
      } else {
        for (int64_t e = 0; e < r.w * s.c; ++e) dst[e] = cast_value<Out>(src[e]);
      }
    }
  }
}

// `samples` and `regions`: device arrays; `max_pixels`: the largest canvas's h * w. in and out:
// uint8, uint16, int16, int32 or float32. Returns the CUDA error of the launch (0: none).
int multi_paste_gpu(const MultiPasteSample* samples, const PasteRegion* regions, int n,
                    int64_t max_pixels, DType in, DType out, StreamHandle stream);

}  // namespace stoker::kernels
