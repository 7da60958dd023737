#include "stoker/ops/decoders/image_decoder.hpp"

#include <mutex>

#include "stoker/codecs/image_format.hpp"
#include "stoker/codecs/jpeg/jpeg_decoder.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class ImageDecoder final : public Operator {
 public:
  explicit ImageDecoder(const OpSpec& spec)
      : Operator(spec), format_(codecs::parse_color_format(spec.arg<std::string>("output_type"))) {
    limits_.max_pixels = spec.arg<int64_t>("max_pixels");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError,
                   "decoders.image: expected encoded bytes (uint8), got ", dtype_name(in.dtype()));
    const int n = in.size();
    const int threads = ws.pool->num_threads();
    {
      std::lock_guard lock(mutex_);
      while (int(decoders_.size()) < threads)
        decoders_.push_back(std::make_unique<codecs::JpegDecoder>());
    }
    // Setup: read every header (in parallel) to size the outputs, then allocate the batch
    // contiguously and decode straight into it.
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    const int64_t channels = codecs::color_channels(format_);
    for_each_sample(ws, n, [&](int i, int thread) {
      auto view = in.sample(i);
      STOKER_ENFORCE(view.shape.ndim() == 1, ValueError,
                     "expected encoded bytes (a 1-D tensor), got shape ", view.shape.to_string());
      auto* data = static_cast<const uint8_t*>(view.data);
      size_t size = size_t(view.shape[0]);
      auto format = codecs::detect_format(data, size);
      STOKER_ENFORCE(format != codecs::ImageFormat::kUnknown, ValueError,
                     "not a recognised image format (first bytes: ",
                     codecs::leading_bytes_hex(data, size), ")");
      STOKER_ENFORCE(format == codecs::ImageFormat::kJpeg, ValueError, codecs::format_name(format),
                     " images are not supported by decoders.image yet (supported: JPEG)");
      auto info = decoders_[size_t(thread)]->read_header(data, size, limits_);
      shapes[size_t(i)] = TensorShape{info.height, info.width, channels};
    });
    Batch& out = add_output(ws, DType::kU8, std::move(shapes), "HWC");
    for_each_sample(ws, n, [&](int i, int thread) {
      auto view = in.sample(i);
      const auto& s = out.shape(i);
      decoders_[size_t(thread)]->decode(static_cast<const uint8_t*>(view.data),
                                        size_t(view.shape[0]), format_, out.data_as<uint8_t>(i),
                                        s[1] * s[2], limits_);
    });
  }

 private:
  codecs::ColorFormat format_;
  codecs::JpegLimits limits_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<codecs::JpegDecoder>> decoders_;  // one per pool thread
};

}  // namespace

OpSchema image_decoder_schema() {
  return {
      .name = "decoders.image",
      .doc =
          "Decodes images to HWC uint8. JPEG via libjpeg-turbo (islow IDCT, fancy "
          "upsampling: identical to libjpeg-turbo's djpeg and PIL); Adobe CMYK/YCCK is "
          "converted to RGB as R = C*K/255. Truncated or corrupt data raises an error "
          "naming the sample and file (harmless warnings such as extraneous bytes before a "
          "marker are tolerated). Images above `max_pixels` are refused before any "
          "allocation. Other formats raise an error naming the format.",
      .inputs = {"encoded"},
      .outputs = {"images"},
      .args = {{"output_type", ArgType::kString, "Colour format: 'RGB', 'BGR' or 'GRAY'.",
                std::string("RGB")},
               {"max_pixels", ArgType::kInt, "Largest image (width * height) accepted.",
                int64_t{1} << 27}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ImageDecoder>(s); },
  };
}

}  // namespace stoker::ops
