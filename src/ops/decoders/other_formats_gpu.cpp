#include "stoker/ops/decoders/other_formats_gpu.hpp"

#ifdef STOKER_HAVE_CUDA
#include "stoker/core/error.hpp"

namespace stoker::ops::decoders_detail {

void OtherFormatsGpu::open(int device) {
  // A library that fails to open leaves its format to the CPU threads.
  if (codecs::nvjpeg2k_available(device)) {
    try {
      j2k_ = std::make_unique<codecs::Nvjpeg2kDecoder>(device);
    } catch (const RuntimeError&) {
    }
  }
  if (codecs::nvtiff_available(device)) {
    try {
      tiff_ = std::make_unique<codecs::NvtiffDecoder>(device);
    } catch (const RuntimeError&) {
    }
  }
}

bool OtherFormatsGpu::takes(const codecs::ImageInfo& info, codecs::ColorFormat format, DType dtype,
                            bool ycbcr) const {
  const bool lib = (info.format == codecs::ImageFormat::kJpeg2000 && j2k_) ||
                   (info.format == codecs::ImageFormat::kTiff && tiff_);
  // (Only images whose channels are the output's: the libraries convert none.)
  return lib && dtype == DType::kU8 && !ycbcr && format != codecs::ColorFormat::kBGR &&
         info.orientation == 1 && info.bit_depth == 8 && info.channels >= 1 &&
         info.channels <= 4 && info.stored_channels == info.channels;
}

OtherFormatsGpu::Result OtherFormatsGpu::decode(const std::vector<int>& samples, const Batch& in,
                                                const std::vector<codecs::ImageInfo>& infos,
                                                std::vector<codecs::NvjpegJob>& jobs, Batch& out,
                                                StreamHandle stream) {
  Result r;
  bool queued = false;
  for (int i : samples) {
    auto& job = jobs[size_t(i)];
    job.out = static_cast<uint8_t*>(out.data(i));
    const int channels = int(out.shape(i)[2]);
    const auto& info = infos[size_t(i)];
    const bool j2k = info.format == codecs::ImageFormat::kJpeg2000;
    const bool done = j2k ? j2k_->decode(job, channels, info.height, info.width, stream)
                          : tiff_->decode(job, channels, info.height, info.width, stream);
    queued = queued || j2k;  // (even refused, it may have queued reads; nvTIFF's are done)
    if (done) {
      (j2k ? r.jpeg2000 : r.tiff) += 1;
    } else {
      (j2k ? r.jpeg2000_refused : r.tiff_refused) += 1;
      r.refused.push_back(i);
    }
  }
  // nvJPEG2000 reads the streams while it decodes: reused only after the stream's work.
  if (queued) in.record_use(stream);
  return r;
}

}  // namespace stoker::ops::decoders_detail
#endif  // STOKER_HAVE_CUDA
