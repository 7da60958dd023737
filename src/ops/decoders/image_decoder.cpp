#include "stoker/ops/decoders/image_decoder.hpp"

#include "stoker/ops/decoders/image_decoder_base.hpp"
#include "stoker/ops/decoders/image_decoder_mixed.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

using decoders_detail::ImageDecoder;
using decoders_detail::Window;

class PeekImageShape final : public Operator {
 public:
  explicit PeekImageShape(const OpSpec& spec)
      : Operator(spec),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))),
        format_(decoders_detail::is_ycbcr(spec.arg<std::string>("image_type"))
                    ? codecs::ColorFormat::kRGB
                    : codecs::parse_color_format(spec.arg<std::string>("image_type"))) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Batch& out = add_output(ws, dtype_, std::vector<TensorShape>(size_t(n), TensorShape{3}), {});
    for_each_sample(ws, n, [&](int i, int) {
      auto view = in.sample(i);
      codecs::Decoder dec;  // reading a header needs no state worth keeping
      auto info = dec.info(static_cast<const uint8_t*>(view.data), size_t(view.shape[0]), format_,
                           {int64_t(1) << 62});
      const bool swap =
          spec_.arg<bool>("adjust_orientation") && codecs::orientation_swaps_axes(info.orientation);
      const int64_t v[3] = {swap ? info.width : info.height, swap ? info.height : info.width,
                            info.channels};
      visit_dtype<DType::kI32, DType::kI64, DType::kU32, DType::kU64, DType::kF32, DType::kF64>(
          dtype_, "peek_image_shape dtype", [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (int k = 0; k < 3; ++k) out.data_as<T>(i)[k] = T(v[k]);
          });
    });
  }

 private:
  DType dtype_;
  codecs::ColorFormat format_;
};

std::vector<ArgSchema> decoder_args() {
  return {
      {"output_type", ArgType::kString,
       "Colour format: 'RGB', 'BGR', 'GRAY', 'YCbCr' (ITU-R BT.601 studio range from the RGB "
       "decode, as color_space_conversion: Y = 16 + 0.257 R + 0.504 G + 0.098 B in 8-bit "
       "units) or 'ANY_DATA'.",
       std::string("RGB")},
      {"adjust_orientation", ArgType::kBool,
       "Apply the EXIF orientation of JPEG, PNG (eXIf), WebP (EXIF) and TIFF (Orientation) "
       "images (the image as a viewer shows it).",
       true},
      {"max_pixels", ArgType::kInt, "Largest image (width * height) accepted.", int64_t{1} << 27},
      {"strict", ArgType::kBool,
       "Raise on JPEGs that libjpeg-turbo decodes only with a warning (corrupt or truncated "
       "entropy-coded data, junk bytes before a marker). Default: return what libjpeg-turbo "
       "outputs, as DALI, PIL and torchvision do (a truncated image is grey below its data), "
       "counted in operator_stats()['decoded_with_warnings'] and pipe.error_stats().",
       false},
      {"dtype", ArgType::kDType,
       "uint8, uint16 or float32: values in the type's dynamic range (uint16 = uint8 * 257, "
       "float32 in [0, 1]); 16-bit PNGs keep their full precision in uint16 and float32.",
       std::string("uint8")},
  };
}

const char* kDecoderDoc =
    " JPEG via libjpeg-turbo (islow IDCT, fancy upsampling: identical to libjpeg-turbo's "
    "djpeg and PIL); Adobe CMYK/YCCK is converted to RGB as R = C*K/255. PNG via libpng, all "
    "colour types and depths, interlaced or not, as PIL and stb_image decode it: no gamma "
    "correction, 16-bit samples reduced to their high byte, palettes expanded, tRNS as alpha "
    "(RGB/BGR/GRAY drop alpha without compositing). BMP (1-32 bit, bit fields, RLE) and Netpbm "
    "(P1-P6). WebP via libwebp, lossy and lossless, with alpha (ANY_DATA: RGBA) or without "
    "(RGB); of an animation, its first frame as composed on the canvas, as DALI. TIFF via "
    "libtiff: the first page, strips or tiles, chunky or planar, any compression libtiff reads, "
    "8/16-bit gray, gray+alpha, RGB(A) and palettes (CMYK, bilevel and the other kinds through "
    "libtiff's RGBA conversion); 16-bit samples (and palettes' 16-bit "
    "colours) kept with dtype UINT16/FLOAT, else rounded to 8 bits. JPEG 2000 (JP2 and raw "
    "codestreams) via OpenJPEG: 1-4 components (sYCC converted, subsampled components "
    "repeated), samples of up to 8 bits in 8, of 9-16 bits kept as stored in 16 (as DALI's "
    "OpenCV reader); windows decode only the code-blocks they cover. GRAY from colour uses L = "
    "(19595 R + 38470 G + 7471 B + 32768) >> 16 (PIL's "
    "weights); ANY_DATA keeps the image's channels (gray 1, gray+alpha 2, colour 3, with alpha "
    "4; JPEG: 1 or 3). Truncated or corrupt data raises an error naming the sample and file "
    "(harmless JPEG warnings such as extraneous bytes before a marker are tolerated). Images "
    "above `max_pixels` are refused before any allocation. Other formats raise an error naming "
    "the format. With adjust_orientation (default) the EXIF orientation of a JPEG, PNG, WebP or "
    "TIFF is applied, as PIL's ImageOps.exif_transpose does (orientations 5-8 swap height and "
    "width); windows are "
    "in the oriented image.";

ArgSchema downscale_hint_arg() {
  return {"downscale_hint", ArgType::kIntList,
          "[h, w] (or one value) the window will be resized to: JPEGs whose window is at least "
          "2, 4 or 8 times that large in both dimensions are decoded at 1/2, 1/4 or 1/8 in the "
          "DCT domain (libjpeg's scaling; the window shrinks accordingly, its coordinates "
          "floored). Much faster for large photos, but not the same pixels as decoding whole "
          "and resizing: off (empty) by default.",
          std::vector<int64_t>{}};
}

OpSchema decoder_schema(std::string name, std::string doc, Window window,
                        std::vector<ArgSchema> extra, std::vector<std::string> inputs) {
  OpSchema s{
      .name = std::move(name),
      .doc = std::move(doc) + kDecoderDoc,
      .inputs = std::move(inputs),
      .outputs = {"images"},
      .args = decoder_args(),
      .make_cpu = [window](const OpSpec& sp) { return std::make_unique<ImageDecoder>(sp, window); },
#ifdef STOKER_HAVE_CUDA
      .make_mixed =
          [window](const OpSpec& sp) {
            return decoders_detail::make_mixed_image_decoder(sp, window);
          },
#endif
  };
  for (auto& a : extra) s.args.push_back(std::move(a));
  s.example = OpExample{.args = {}, .dtype = "uint8", .layout = ""};  // encoded bytes
  s.args.push_back(
      {"hw_decoder_load", ArgType::kString,
       "device='mixed': the fraction of each batch offered to the GPU's hardware JPEG decoder "
       "(0 to 1), or 'auto' (default): the split that makes the hardware and the CPU threads "
       "finish together, from measured rates; when batches are asked for more slowly than the "
       "hardware alone decodes them (training paced by the GPU), the hardware takes what it can "
       "within that pace, sparing the CPU; probe batches now and then try giving the threads "
       "half their share or none, and keep what is faster (where the threads' decoding slows "
       "the hardware's feed). JPEGs the hardware cannot take (progressive, "
       "4:1:1, EXIF-rotated, other output types) go to the threads, with the rest of the "
       "batch. nvJPEG decodes with its own IDCT and chroma upsampling: pixels differ slightly "
       "from libjpeg-turbo's (mean absolute difference about 1 level).",
       std::string("auto"), false, false, /*number_as_string=*/true});
  s.args.push_back(
      {"cuda_decoder", ArgType::kString,
       "device='mixed': how the CPU threads decode their share of JPEGs (RGB/BGR uint8, shown "
       "as stored): 'on' with nvJPEG's CUDA decoder (Huffman decoding on the thread, or on the "
       "GPU above hybrid_huffman_threshold; the rest on the GPU), 'off' with libjpeg-turbo "
       "then a copy to the GPU, or 'auto' (default): whichever costs a thread less per image, "
       "measured while running. Streams nvJPEG refuses, CMYK, and other formats always decode "
       "on the CPU.",
       std::string("auto")});
  s.args.push_back({"hybrid_huffman_threshold", ArgType::kInt,
                    "device='mixed': JPEGs (baseline or progressive) whose decoded rows cover "
                    "more pixels than this have their Huffman decoding done on the GPU when the "
                    "CUDA decoder takes them, not on a CPU thread.",
                    int64_t(1000000)});
  return s;
}

}  // namespace

OpSchema image_decoder_schema() {
  auto s = decoder_schema("decoders.image",
                          "Decodes images to HWC (uint8 unless `dtype` says otherwise).",
                          Window::kFull, {}, {"encoded"});
  s.deprecated_names = {"image_decoder", "experimental.decoders.image"};
  return s;
}

OpSchema image_crop_decoder_schema() {
  auto s = decoder_schema(
      "decoders.image_crop",
      "Decodes a window of each image to HWC uint8: `crop` ([h, w]) or crop_h/crop_w, placed "
      "by crop_pos_x/crop_pos_y and rounding as fn.crop reads them. "
      "JPEGs decode only the rows and iMCU columns the window needs; the pixels equal the "
      "window of a full decode.",
      Window::kCrop,
      [] {
        auto a = crop_arg_schemas();
        a.push_back(downscale_hint_arg());
        return a;
      }(),
      {"encoded"});
  s.example->args = {{"crop", std::vector<double>{2, 2}}};
  s.deprecated_names = {"image_decoder_crop", "experimental.decoders.image_crop"};
  return s;
}

OpSchema image_random_crop_decoder_schema() {
  auto s = decoder_schema(
      "decoders.image_random_crop",
      "Decodes a RandomResizedCrop window of each image (chosen from the header by "
      "torchvision's algorithm, as random_resized_crop does, without the resize) to HWC "
      "uint8. JPEGs decode only the rows and iMCU columns the window needs.",
      Window::kRandomCrop,
      {downscale_hint_arg(),
       {"random_area", ArgType::kFloatList, "Range of the window's area fraction.",
        std::vector<double>{0.08, 1.0}},
       {"random_aspect_ratio", ArgType::kFloatList, "Range of width/height.",
        std::vector<double>{3.0 / 4.0, 4.0 / 3.0}},
       {"num_attempts", ArgType::kInt, "Tries before the centred fallback.", int64_t{10}}},
      {"encoded"});
  s.random = true;
  s.deprecated_names = {"image_decoder_random_crop", "experimental.decoders.image_random_crop"};
  return s;
}

OpSchema image_slice_decoder_schema() {
  auto s = decoder_schema(
      "decoders.image_slice",
      "Decodes the slice given by the `anchor` and `shape` inputs (per sample, one value per "
      "entry of `axes`; default axes [1, 0]: x then y, as DALI) to HWC uint8. Start and end "
      "(anchor + shape) are each rounded to the nearest pixel.",
      Window::kSlice,
      {{"axes", ArgType::kIntList, "Axes of anchor and shape (0 height, 1 width).",
        std::vector<int64_t>{1, 0}},
       {"normalized_anchor", ArgType::kBool, "Anchor as fractions of the extents.", true},
       {"normalized_shape", ArgType::kBool, "Shape as fractions of the extents.", true},
       {"out_of_bounds_policy", ArgType::kString, "'error' or 'trim_to_shape'.",
        std::string("error")}},
      {"encoded", "anchor", "shape"});
  s.deprecated_names = {"image_decoder_slice", "experimental.decoders.image_slice"};
  return s;
}

OpSchema peek_image_shape_schema() {
  return {
      .name = "peek_image_shape",
      .doc =
          "The [height, width, channels] of each encoded image, from its header alone, as "
          "decoders.image would output it for `image_type` (channels 3 for RGB, as in DALI; "
          "ANY_DATA: as stored). With adjust_orientation, EXIF orientations 5-8 swap height and "
          "width.",
      .inputs = {"encoded"},
      .outputs = {"shape"},
      .args = {{"dtype", ArgType::kDType, "int32, int64, uint32, uint64, float32 or float64.",
                std::string("int64")},
               {"adjust_orientation", ArgType::kBool, "Report the EXIF-oriented size.", true},
               {"image_type", ArgType::kString,
                "The colour format whose channel count is reported: 'RGB', 'BGR', 'YCbCr', "
                "'GRAY' or 'ANY_DATA'.",
                std::string("RGB")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<PeekImageShape>(s); },
      .example = OpExample{.args = {}, .dtype = "uint8", .layout = ""},
      .deprecated_names = {"experimental.peek_image_shape"},
  };
}

}  // namespace stoker::ops
