// NvjpegCudaDecoder on a GPU (skipped without one): which decodes enlarge a slot's buffers (the
// times cuda_decoder="auto" leaves out of the CUDA decoder's cost per image), its phase times. The
// pixels are compared with the CPU decoder's in python/tests/test_gpu_decoders.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/core/memory.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::codecs {
namespace {

struct Image {
  std::vector<uint8_t> jpeg;
  int64_t h, w;
};

Image encoded(int64_t h, int64_t w) {
  auto src = testing::random_image_u8(h, w, 3, uint32_t(h + w));
  return {testing::encode_jpeg(src.data(), h, w, 3, {.quality = 90}), h, w};
}

TEST(NvjpegCudaDecoderGpu, SaysWhichDecodesEnlargedTheSlotsBuffersAndTimesThePhases) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  std::string why;
  if (!nvjpeg_cuda_available(0, &why)) GTEST_SKIP() << "nvJPEG unavailable: " << why;
  const Image small = encoded(48, 64), large = encoded(150, 200);
  auto device = make_device_allocator(0);
  const size_t bytes = size_t(large.h * large.w * 3);
  void* out = device->allocate(bytes);
  for (const int64_t threshold : {int64_t(1) << 40, int64_t(0)}) {  // Huffman on host, on GPU
    SCOPED_TRACE(threshold == 0 ? "GPU-hybrid" : "hybrid");
    std::vector<bool> grew;
    {
      NvjpegCudaDecoder dec(0, /*slots=*/1, threshold);
      auto decode = [&](const Image& im) {
        NvjpegJob job{im.jpeg.data(), im.jpeg.size(), 0, 0, im.h, im.w, static_cast<uint8_t*>(out),
                      im.w * 3};
        bool g = true;
        EXPECT_TRUE(dec.decode(job, /*bgr=*/false, 0, &g));
        grew.push_back(g);
      };
      // The slot's two pinned pages take turns (images 0, 2, 4, 6, 8 on one, the others on
      // the other): each grows on its first image and on the first image larger than any it
      // held, so the large image 6 fits where image 4 was and image 7 enlarges the other page.
      for (const Image* im :
           {&small, &small, &small, &small, &large, &small, &large, &large, &small})
        decode(*im);
      if (const auto done = dec.mark({0})) done->synchronize();
      const auto phases = dec.phase_seconds();
      for (double seconds : phases.seconds) EXPECT_GE(seconds, 0.0);
      EXPECT_GT(phases.seconds[kPhaseHost], 0.0);  // nine images parsed
      EXPECT_GT(phases.seconds[kPhaseDevice], 0.0);
    }  // the decoder's slots finish before `out` is freed
    EXPECT_EQ(grew, (std::vector<bool>{true, true, false, false, true, false, false, true, false}));
  }
  device->deallocate(out, bytes);
}

}  // namespace
}  // namespace stoker::codecs
