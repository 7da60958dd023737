#include "stoker/ops/decoders/image_decoder.hpp"

#include <mutex>

#include "stoker/codecs/decoder.hpp"
#include "stoker/codecs/exif.hpp"
#include "stoker/kernels/geometry/orient_cpu.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

class ImageDecoder final : public Operator {
 public:
  explicit ImageDecoder(const OpSpec& spec)
      : Operator(spec),
        format_(codecs::parse_color_format(spec.arg<std::string>("output_type"))),
        adjust_orientation_(spec.arg<bool>("adjust_orientation")) {
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
        decoders_.push_back(std::make_unique<codecs::Decoder>());
      scratch_.resize(size_t(threads));
    }
    // Setup: read every header (in parallel) to size the outputs, then allocate the batch
    // contiguously and decode straight into it.
    std::vector<codecs::ImageInfo> infos(static_cast<size_t>(n));
    std::vector<TensorShape> shapes(static_cast<size_t>(n));
    for_each_sample(ws, n, [&](int i, int thread) {
      auto view = in.sample(i);
      STOKER_ENFORCE(view.shape.ndim() == 1, ValueError,
                     "expected encoded bytes (a 1-D tensor), got shape ", view.shape.to_string());
      auto& info = infos[size_t(i)];
      info = decoders_[size_t(thread)]->info(static_cast<const uint8_t*>(view.data),
                                             size_t(view.shape[0]), format_, limits_);
      if (!adjust_orientation_) info.orientation = 1;
      const bool swap = codecs::orientation_swaps_axes(info.orientation);
      shapes[size_t(i)] = TensorShape{swap ? info.width : info.height,
                                      swap ? info.height : info.width, int64_t(info.channels)};
    });
    Batch& out = add_output(ws, DType::kU8, std::move(shapes), "HWC");
    for_each_sample(ws, n, [&](int i, int thread) {
      auto view = in.sample(i);
      const auto& info = infos[size_t(i)];
      const auto* data = static_cast<const uint8_t*>(view.data);
      const size_t size = size_t(view.shape[0]);
      const int64_t row = info.width * info.channels;
      if (info.orientation == 1) {
        decoders_[size_t(thread)]->decode(data, size, format_, info, out.data_as<uint8_t>(i), row,
                                          limits_);
        return;
      }
      // EXIF orientation: decode as stored, then turn into the output.
      auto& scratch = scratch_[size_t(thread)];
      scratch.resize(size_t(row * info.height));
      decoders_[size_t(thread)]->decode(data, size, format_, info, scratch.data(), row, limits_);
      kernels::orient_cpu(scratch.data(), info.height, info.width, info.channels, info.orientation,
                          out.data_as<uint8_t>(i));
    });
  }

 private:
  codecs::ColorFormat format_;
  bool adjust_orientation_;
  codecs::DecodeLimits limits_;
  std::vector<std::vector<uint8_t>> scratch_;  // per pool thread, for re-oriented images
  std::mutex mutex_;
  std::vector<std::unique_ptr<codecs::Decoder>> decoders_;  // one per pool thread
};

}  // namespace

OpSchema image_decoder_schema() {
  return {
      .name = "decoders.image",
      .doc =
          "Decodes images to HWC uint8. JPEG via libjpeg-turbo (islow IDCT, fancy "
          "upsampling: identical to libjpeg-turbo's djpeg and PIL); Adobe CMYK/YCCK is "
          "converted to RGB as R = C*K/255. PNG via libpng, all colour types and depths, "
          "interlaced or not, as PIL and stb_image decode it: no gamma correction, 16-bit "
          "samples reduced to their high byte, palettes expanded, tRNS as alpha (RGB/BGR/GRAY "
          "drop alpha without compositing). GRAY from colour uses L = (19595 R + 38470 G + "
          "7471 B + 32768) >> 16 (PIL's weights); ANY_DATA keeps the image's channels (gray "
          "1, gray+alpha 2, colour 3, with alpha 4; JPEG: 1 or 3). Truncated or corrupt data "
          "raises an error naming the sample and file (harmless JPEG warnings such as "
          "extraneous bytes before a marker are tolerated). Images above `max_pixels` are "
          "refused before any allocation. Other formats raise an error naming the format. "
          "With adjust_orientation (default) a JPEG's EXIF orientation is applied, as PIL's "
          "ImageOps.exif_transpose does (orientations 5-8 swap height and width).",
      .inputs = {"encoded"},
      .outputs = {"images"},
      .args = {{"output_type", ArgType::kString,
                "Colour format: 'RGB', 'BGR', 'GRAY' or 'ANY_DATA'.", std::string("RGB")},
               {"adjust_orientation", ArgType::kBool,
                "Apply the EXIF orientation of JPEGs (the image as a viewer shows it).", true},
               {"max_pixels", ArgType::kInt, "Largest image (width * height) accepted.",
                int64_t{1} << 27}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<ImageDecoder>(s); },
  };
}

}  // namespace stoker::ops
