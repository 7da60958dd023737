#include "stoker/ops/decoders/image_decoder.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <type_traits>

#include "stoker/codecs/decoder.hpp"
#include "stoker/codecs/exif.hpp"
#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/kernels/color/color_cpu.hpp"
#include "stoker/kernels/geometry/orient_cpu.hpp"
#include "stoker/ops/geometry/crop_args.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops {
namespace {

// The decoders share one operator; they differ in the window they decode:
//   kFull: the whole image; kCrop: crop/crop_pos_x/y (as fn.crop); kRandomCrop: the
//   RandomResizedCrop window (as random_resized_crop, without the resize); kSlice: anchor and
//   shape inputs (as DALI's decoders.image_slice).
enum class Window { kFull, kCrop, kRandomCrop, kSlice };

bool is_ycbcr(std::string s) {
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s == "YCBCR";
}

class ImageDecoder : public Operator {
 public:
  ImageDecoder(const OpSpec& spec, Window window)
      : Operator(spec),
        window_(window),
        ycbcr_(is_ycbcr(spec.arg<std::string>("output_type"))),
        format_(ycbcr_ ? codecs::ColorFormat::kRGB
                       : codecs::parse_color_format(spec.arg<std::string>("output_type"))),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))),
        adjust_orientation_(spec.arg<bool>("adjust_orientation")) {
    limits_.max_pixels = spec.arg<int64_t>("max_pixels");
    STOKER_ENFORCE(dtype_ == DType::kU8 || dtype_ == DType::kU16 || dtype_ == DType::kF32,
                   TypeError, spec.schema->name, ": dtype must be uint8, uint16 or float32, got ",
                   dtype_name(dtype_));
    if (window == Window::kSlice) {
      auto policy = spec.arg<std::string>("out_of_bounds_policy");
      STOKER_ENFORCE(policy == "error" || policy == "trim_to_shape", ValueError, spec.schema->name,
                     ": out_of_bounds_policy must be 'error' or 'trim_to_shape', got '", policy,
                     "'");
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Plan plan = make_plan(ws, in);
    Batch& out = add_output(ws, dtype_, std::move(plan.shapes), "HWC");
    for_each_sample(ws, in.size(),
                    [&](int i, int thread) { decode_host(in, plan, i, thread, out.data(i)); });
  }

 protected:
  // What the header pass finds for every sample: the image, the window to decode (in the
  // oriented image), the DCT scale, the output shape.
  struct Plan {
    std::vector<codecs::ImageInfo> infos;
    std::vector<CropWindow> windows;
    std::vector<int> scales;
    std::vector<TensorShape> shapes;
  };

  // Reads every header (in parallel), choosing windows and output shapes.
  Plan make_plan(Workspace& ws, const Batch& in) {
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, spec_.schema->name,
                   ": expected encoded bytes (uint8), got ", dtype_name(in.dtype()));
    const int n = in.size();
    {
      std::lock_guard lock(mutex_);
      while (int(decoders_.size()) < ws.pool->num_threads()) {
        decoders_.push_back(std::make_unique<codecs::Decoder>());
        scratch_.emplace_back();
      }
    }
    Plan p;
    p.infos.resize(size_t(n));
    p.windows.resize(size_t(n));
    p.scales.assign(size_t(n), 1);
    p.shapes.resize(size_t(n));
    for_each_sample(ws, n, [&](int i, int thread) {
      auto view = in.sample(i);
      STOKER_ENFORCE(view.shape.ndim() == 1, ValueError,
                     "expected encoded bytes (a 1-D tensor), got shape ", view.shape.to_string());
      auto& info = p.infos[size_t(i)];
      info = decoders_[size_t(thread)]->info(static_cast<const uint8_t*>(view.data),
                                             size_t(view.shape[0]), format_, limits_);
      if (!adjust_orientation_) info.orientation = 1;
      const bool swap = codecs::orientation_swaps_axes(info.orientation);
      const int64_t h = swap ? info.width : info.height, w = swap ? info.height : info.width;
      auto& win = p.windows[size_t(i)];
      win = window(ws, i, h, w);
      if (info.format == codecs::ImageFormat::kJpeg && info.orientation == 1)
        p.scales[size_t(i)] = downscale(win);
      p.shapes[size_t(i)] = TensorShape{win.height, win.width, int64_t(info.channels)};
    });
    return p;
  }

  // Decodes sample i into host memory `out` (its output shape, in dtype_), on pool thread
  // `thread`.
  void decode_host(const Batch& in, const Plan& p, int i, int thread, void* out) {
    const auto& info = p.infos[size_t(i)];
    const auto& win = p.windows[size_t(i)];
    const int64_t samples = win.height * win.width * info.channels;
    // 8-bit results go straight into the output unless it is wider; 16-bit PNGs keep their
    // precision when the output is wider.
    const int bytes = dtype_ != DType::kU8 && info.bit_depth == 16 ? 2 : 1;
    auto& sc = scratch_[size_t(thread)];
    auto* dst = static_cast<uint8_t*>(out);
    if (dtype_ != DType::kU8) {
      sc.window.resize(size_t(samples * bytes));
      dst = sc.window.data();
    }
    decode_window(*decoders_[size_t(thread)], in.sample(i), info, win, p.scales[size_t(i)], bytes,
                  sc, dst);
    finish(dst, bytes, samples, out);
  }

 protected:
  struct Scratch {
    std::vector<uint8_t> stored, turned;  // the whole image as stored and re-oriented
    std::vector<uint8_t> window;          // the window, when the output needs converting
  };

  // The oriented window of one image into `dst` (win.height rows of win.width * channels
  // samples of `bytes` each: 2 only for 16-bit PNGs decoded at full precision).
  void decode_window(codecs::Decoder& dec, const TensorView& encoded, const codecs::ImageInfo& info,
                     const CropWindow& win, int scale, int bytes, Scratch& sc, uint8_t* dst) const {
    const auto* data = static_cast<const uint8_t*>(encoded.data);
    const size_t size = size_t(encoded.shape[0]);
    const int64_t c = info.channels;
    if (info.orientation == 1 && bytes == 1) {  // JPEG decodes just the window
      dec.decode_region(data, size, format_, info, win.y, win.x, win.height, win.width, dst,
                        win.width * c, limits_, scale);
      return;
    }
    // Decode whole, turn (EXIF orientation), then cut the window; pixels are moved as
    // c * bytes opaque bytes.
    const int64_t pixel = c * bytes;
    sc.stored.resize(size_t(info.height * info.width * pixel));
    if (bytes == 2)
      dec.decode16(data, size, format_, info, reinterpret_cast<uint16_t*>(sc.stored.data()),
                   info.width * c, limits_);
    else
      dec.decode(data, size, format_, info, sc.stored.data(), info.width * c, limits_);
    const uint8_t* image = sc.stored.data();
    int64_t iw = info.width;
    if (info.orientation != 1) {
      sc.turned.resize(sc.stored.size());
      kernels::orient_cpu(sc.stored.data(), info.height, info.width, pixel, info.orientation,
                          sc.turned.data());
      image = sc.turned.data();
      if (codecs::orientation_swaps_axes(info.orientation)) iw = info.height;
    }
    for (int64_t r = 0; r < win.height; ++r)
      std::memcpy(dst + r * win.width * pixel, image + ((win.y + r) * iw + win.x) * pixel,
                  size_t(win.width * pixel));
  }

  // Converts the decoded window (8-bit, or 16-bit with bytes == 2) to the output: YCbCr and
  // the dtype's dynamic range (uint16 0-65535, float32 0-1). `out` may be `src` (uint8).
  void finish(const uint8_t* src, int bytes, int64_t samples, void* out) const {
    if (dtype_ == DType::kU8 && !ycbcr_) return;  // decoded in place
    const double in_range = bytes == 2 ? 65535.0 : 255.0;
    visit_dtype<DType::kU8, DType::kU16, DType::kF32>(dtype_, "decoder dtype", [&](auto tag) {
      using Out = typename decltype(tag)::type;
      const double out_range =
          std::is_floating_point_v<Out> ? 1.0 : double(std::numeric_limits<Out>::max());
      const double k = out_range / in_range;
      auto convert = [&](const auto* in) {
        auto* o = static_cast<Out*>(out);
        if (!ycbcr_) return kernels::affine_cpu(in, samples, float(k), 0.f, o);
        auto m = kernels::rgb_to_ycbcr_bt601();
        for (auto& row : m)
          for (double& v : row) v *= k;
        auto off = kernels::kYCbCrOffset;
        for (double& v : off) v *= out_range / 255.0;
        kernels::color_matrix_cpu(in, samples / 3, m, off, o);
      };
      if (bytes == 2)
        convert(reinterpret_cast<const uint16_t*>(src));
      else
        convert(src);
    });
  }

  CropWindow window(const Workspace& ws, int i, int64_t h, int64_t w) const {
    switch (window_) {
      case Window::kFull:
        return {0, 0, h, w};
      case Window::kCrop: {
        auto win = crop_window_arg(*this, ws, i, h, w);
        CropWindow out = win ? *win : CropWindow{0, 0, h, w};
        check_window_inside(out, h, w, spec_.schema->name);
        return out;
      }
      case Window::kRandomCrop: {
        auto area = spec_.arg<std::vector<double>>("random_area");
        auto aspect = spec_.arg<std::vector<double>>("random_aspect_ratio");
        STOKER_ENFORCE(area.size() == 2 && aspect.size() == 2, ValueError, spec_.schema->name,
                       ": random_area and random_aspect_ratio need two values each");
        auto rng = sample_rng(ws, i);
        return random_resized_crop_window(h, w, area[0], area[1], aspect[0], aspect[1],
                                          int(spec_.arg<int64_t>("num_attempts")), rng);
      }
      case Window::kSlice:
        return slice_window(ws, i, h, w);
    }
    return {0, 0, h, w};
  }

  // With downscale_hint [h, w]: the largest DCT scale (8, 4, 2) that keeps the window at least
  // h x w pixels; the window becomes the downscaled one (coordinates floored). 1 otherwise.
  int downscale(CropWindow& win) const {
    if (!spec_.schema->find_arg("downscale_hint")) return 1;
    auto hint = spec_.arg<std::vector<int64_t>>("downscale_hint");
    if (hint.empty()) return 1;
    if (hint.size() == 1) hint.push_back(hint[0]);
    for (int d : {8, 4, 2}) {
      if (win.height / d >= hint[0] && win.width / d >= hint[1]) {
        win = {win.y / d, win.x / d, win.height / d, win.width / d};
        return d;
      }
    }
    return 1;
  }

  // anchor and shape (inputs 1 and 2) along `axes` (default [1, 0]: x then y), normalized or
  // in pixels; start and end are each rounded to the nearest pixel.
  CropWindow slice_window(const Workspace& ws, int i, int64_t h, int64_t w) const {
    auto anchor = sample_as_doubles(ws.input(1), i);
    auto shape = sample_as_doubles(ws.input(2), i);
    auto axes = spec_.arg<std::vector<int64_t>>("axes");
    STOKER_ENFORCE(anchor.size() == axes.size() && shape.size() == axes.size(), ValueError,
                   spec_.schema->name, ": anchor and shape need ", axes.size(),
                   " values (one per axis in `axes`), got ", anchor.size(), " and ", shape.size());
    const bool norm_a = spec_.arg<bool>("normalized_anchor");
    const bool norm_s = spec_.arg<bool>("normalized_shape");
    int64_t lo[2] = {0, 0}, hi[2] = {h, w};  // [y, x]
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t a = axes[k];
      STOKER_ENFORCE(a == 0 || a == 1, ValueError, spec_.schema->name,
                     ": axes may name 0 (height) and 1 (width), got ", a);
      const double extent = double(a == 0 ? h : w);
      const double start = norm_a ? anchor[k] * extent : anchor[k];
      const double len = norm_s ? shape[k] * extent : shape[k];
      lo[a] = std::llround(start);
      hi[a] = std::llround(start + len);
    }
    for (int a = 0; a < 2; ++a) {
      const int64_t extent = a == 0 ? h : w;
      if (spec_.arg<std::string>("out_of_bounds_policy") == "trim_to_shape") {
        lo[a] = std::clamp<int64_t>(lo[a], 0, extent);
        hi[a] = std::clamp<int64_t>(hi[a], lo[a], extent);
      }
      STOKER_ENFORCE(lo[a] >= 0 && hi[a] <= extent && hi[a] > lo[a], ValueError, spec_.schema->name,
                     ": the slice [", lo[a], ", ", hi[a], ") of axis ", a,
                     " does not fit the image's extent ", extent,
                     " (out_of_bounds_policy='trim_to_shape' cuts it to the image)");
    }
    return {lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]};
  }

  Window window_;
  bool ycbcr_;                  // output_type YCbCr: decoded as RGB, then converted
  codecs::ColorFormat format_;  // what the codecs decode
  DType dtype_;
  bool adjust_orientation_;
  codecs::DecodeLimits limits_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<codecs::Decoder>> decoders_;  // one per pool thread
  std::vector<Scratch> scratch_;                            // one per pool thread
};

#ifdef STOKER_HAVE_CUDA
// device="mixed": each batch is split between the GPU's hardware JPEG decoder (nvJPEG's
// batched hardware backend, windows decoded as regions of interest) and the CPU threads
// (libjpeg-turbo and the other codecs, then one copy to the device). The hardware takes baseline
// JPEGs it reports as supported, for RGB/BGR uint8 output without EXIF rotation or DCT scaling;
// everything else, and any batch the hardware fails, goes to the CPU. hw_decoder_load is the
// fraction of the batch offered to the hardware, or "auto": measured rates of both sides set it
// so that they finish together.
class ImageDecoderMixed final : public ImageDecoder {
 public:
  ImageDecoderMixed(const OpSpec& spec, Window window) : ImageDecoder(spec, window) {
    const auto load = spec.arg<std::string>("hw_decoder_load");
    if (load == "auto") {
      auto_ = true;
    } else {
      char* end = nullptr;
      load_ = std::strtod(load.c_str(), &end);
      STOKER_ENFORCE(end && *end == 0 && load_ >= 0 && load_ <= 1, ValueError, spec.schema->name,
                     ": hw_decoder_load must be 'auto' or a fraction in [0, 1], got '", load, "'");
    }
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const auto t_start = std::chrono::steady_clock::now();
    Plan plan = make_plan(ws, in);
    Batch& out = add_output(ws, dtype_, plan.shapes, "HWC");
    if (n == 0) return;
    const double t_plan = seconds_since(t_start);
    if (!hw_tried_) {
      hw_tried_ = true;
      if (codecs::nvjpeg_hardware_available(ws.device_id, &hw_why_))
        hw_ = std::make_unique<codecs::NvjpegHardwareDecoder>(ws.device_id);
    }
    // Which samples the hardware can take, from the headers already read: baseline Huffman
    // 3-component JPEGs without 4:1:x chroma, shown as stored, not DCT-scaled. (nvJPEG's own
    // check would parse every stream again; a batch the engines still refuse goes to the CPU.)
    std::vector<codecs::NvjpegHardwareDecoder::Job> jobs(static_cast<size_t>(n));
    std::vector<char> eligible(static_cast<size_t>(n), 0);
    const bool colour =
        format_ == codecs::ColorFormat::kRGB || format_ == codecs::ColorFormat::kBGR;
    if (hw_ && dtype_ == DType::kU8 && !ycbcr_ && colour) {
      for (int i = 0; i < n; ++i) {
        const auto& info = plan.infos[size_t(i)];
        const auto& w = plan.windows[size_t(i)];
        const auto& sub = info.jpeg_subsampling;
        if (info.format != codecs::ImageFormat::kJpeg || info.orientation != 1 ||
            plan.scales[size_t(i)] != 1 || info.channels != 3 || !info.jpeg_baseline_huffman ||
            info.jpeg_components != 3 || sub == "411" || sub == "410" || sub == "other")
          continue;
        auto view = in.sample(i);
        jobs[size_t(i)] = {static_cast<const uint8_t*>(view.data),
                           size_t(view.shape[0]),
                           w.y,
                           w.x,
                           w.height,
                           w.width,
                           static_cast<uint8_t*>(out.data(i)),
                           w.width * 3};
        eligible[size_t(i)] = 1;
      }
    }
    // The split: the first `take` eligible samples go to the hardware.
    const double load = auto_ ? auto_load_ : load_;
    int take = int(std::lround(load * n)), hw_count = 0;
    std::vector<char> on_hw(static_cast<size_t>(n), 0);
    std::vector<codecs::NvjpegHardwareDecoder::Job> hw_jobs;
    for (int i = 0; i < n && hw_count < take; ++i)
      if (eligible[size_t(i)]) on_hw[size_t(i)] = 1, hw_jobs.push_back(jobs[size_t(i)]), ++hw_count;
    const auto t0 = std::chrono::steady_clock::now();
    bool hw_ok = !hw_jobs.empty();
    if (hw_ok) {
      try {
        hw_->decode(hw_jobs, format_ == codecs::ColorFormat::kBGR, ws.stream);
        hw_done_.record(ws.stream);
      } catch (const RuntimeError&) {  // the engines refused the batch: the CPU decodes it
        hw_ok = false;
        std::fill(on_hw.begin(), on_hw.end(), 0);
        hw_fallbacks_ += 1;
      }
    }
    const double t_submit = seconds_since(t0);
    const int cpu_count = n - (hw_ok ? hw_count : 0);
    decode_on_cpu(ws, in, plan, on_hw, out);
    const double t_cpu = seconds_since(t0);
    if (hw_ok && auto_) {
      hw_done_.synchronize();  // only to measure: the next batch is planned meanwhile anyway
      balance(hw_count, seconds_since(t0), cpu_count, t_cpu);
    }
    std::lock_guard lock(stats_mutex_);
    hw_images_ += hw_ok ? hw_count : 0;
    cpu_images_ += cpu_count;
    seconds_plan_ += t_plan, seconds_hw_submit_ += t_submit, seconds_cpu_ += t_cpu - t_submit;
    seconds_total_ += seconds_since(t_start);
  }

  std::map<std::string, double> stats() const override {
    std::lock_guard lock(stats_mutex_);
    return {{"hw_images", double(hw_images_)},
            {"cpu_images", double(cpu_images_)},
            {"hw_load", auto_ ? auto_load_ : load_},
            {"hw_available", hw_ ? 1.0 : 0.0},
            {"hw_batch_fallbacks", double(hw_fallbacks_)},
            // Where the GPU stage's thread spent its time in this operator (seconds).
            {"seconds_headers", seconds_plan_},
            {"seconds_hw_submit", seconds_hw_submit_},
            {"seconds_cpu_decode", seconds_cpu_},
            {"seconds_total", seconds_total_}};
  }

 private:
  static double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  // The samples not on the hardware: decoded on the pool into pinned staging, then copied.
  void decode_on_cpu(Workspace& ws, const Batch& in, const Plan& plan,
                     const std::vector<char>& on_hw, Batch& out) {
    const int n = in.size();
    std::vector<size_t> offset(static_cast<size_t>(n), 0);
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      offset[size_t(i)] = total;
      if (!on_hw[size_t(i)]) total += out.sample(i).num_bytes();
    }
    if (total == 0) return;
    auto staging = ws.pinned_pool->acquire(total);
    auto* base = static_cast<uint8_t*>(staging->data());
    for_each_sample(ws, n, [&](int i, int thread) {
      if (!on_hw[size_t(i)]) decode_host(in, plan, i, thread, base + offset[size_t(i)]);
    });
    for (int i = 0; i < n; ++i)
      if (!on_hw[size_t(i)])
        copy_to_device_async(out.data(i), base + offset[size_t(i)], out.sample(i).num_bytes(),
                             ws.stream);
    staging->record_stream(ws.stream);
  }

  // "auto": the hardware's share that makes both sides finish together, from this batch's
  // rates, smoothed over batches.
  void balance(int hw_n, double t_hw, int cpu_n, double t_cpu) {
    if (hw_n > 0 && t_hw > 0) hw_rate_ = 0.7 * hw_rate_ + 0.3 * (hw_n / t_hw);
    if (cpu_n > 0 && t_cpu > 0) cpu_rate_ = 0.7 * cpu_rate_ + 0.3 * (cpu_n / t_cpu);
    if (hw_rate_ > 0 && cpu_rate_ > 0) {
      std::lock_guard lock(stats_mutex_);
      auto_load_ = std::clamp(hw_rate_ / (hw_rate_ + cpu_rate_), 0.05, 1.0);
    }
  }

  bool auto_ = false;
  double load_ = 1.0;
  double auto_load_ = 0.8;  // until measured: both sides get work, so both get measured
  double hw_rate_ = 0, cpu_rate_ = 0;
  bool hw_tried_ = false;
  std::string hw_why_;
  std::unique_ptr<codecs::NvjpegHardwareDecoder> hw_;
  CudaEvent hw_done_;
  mutable std::mutex stats_mutex_;
  int64_t hw_images_ = 0, cpu_images_ = 0, hw_fallbacks_ = 0;
  double seconds_plan_ = 0, seconds_hw_submit_ = 0, seconds_cpu_ = 0, seconds_total_ = 0;
};
#endif

class PeekImageShape final : public Operator {
 public:
  explicit PeekImageShape(const OpSpec& spec)
      : Operator(spec), dtype_(dtype_from_name(spec.arg<std::string>("dtype"))) {}
  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    Batch& out = add_output(ws, dtype_, std::vector<TensorShape>(size_t(n), TensorShape{3}), {});
    for_each_sample(ws, n, [&](int i, int) {
      auto view = in.sample(i);
      codecs::Decoder dec;  // reading a header needs no state worth keeping
      auto info = dec.info(static_cast<const uint8_t*>(view.data), size_t(view.shape[0]),
                           codecs::ColorFormat::kAnyData, {int64_t(1) << 62});
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
};

std::vector<ArgSchema> decoder_args() {
  return {
      {"output_type", ArgType::kString,
       "Colour format: 'RGB', 'BGR', 'GRAY', 'YCbCr' (ITU-R BT.601 studio range from the RGB "
       "decode, as color_space_conversion: Y = 16 + 0.257 R + 0.504 G + 0.098 B in 8-bit "
       "units) or 'ANY_DATA'.",
       std::string("RGB")},
      {"adjust_orientation", ArgType::kBool,
       "Apply the EXIF orientation of JPEGs (the image as a viewer shows it).", true},
      {"max_pixels", ArgType::kInt, "Largest image (width * height) accepted.", int64_t{1} << 27},
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
    "(P1-P6). GRAY from colour uses L = (19595 R + 38470 G + 7471 B + 32768) >> 16 (PIL's "
    "weights); ANY_DATA keeps the image's channels (gray 1, gray+alpha 2, colour 3, with alpha "
    "4; JPEG: 1 or 3). Truncated or corrupt data raises an error naming the sample and file "
    "(harmless JPEG warnings such as extraneous bytes before a marker are tolerated). Images "
    "above `max_pixels` are refused before any allocation. Other formats raise an error naming "
    "the format. With adjust_orientation (default) a JPEG's EXIF orientation is applied, as "
    "PIL's ImageOps.exif_transpose does (orientations 5-8 swap height and width); windows are "
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
          [window](const OpSpec& sp) { return std::make_unique<ImageDecoderMixed>(sp, window); },
#endif
  };
  for (auto& a : extra) s.args.push_back(std::move(a));
  s.args.push_back(
      {"hw_decoder_load", ArgType::kString,
       "device='mixed': the fraction of each batch offered to the GPU's hardware JPEG decoder "
       "(0 to 1), or 'auto' (default): the split that makes the hardware and the CPU threads "
       "finish together, from measured rates. JPEGs the hardware cannot take (progressive, "
       "CMYK, EXIF-rotated, other output types) and other formats decode on the CPU. Hardware "
       "decoding uses its own IDCT and chroma upsampling: pixels differ slightly from "
       "libjpeg-turbo's (mean absolute difference about 1 level).",
       std::string("auto"), false, false, /*number_as_string=*/true});
  return s;
}

}  // namespace

OpSchema image_decoder_schema() {
  return decoder_schema("decoders.image",
                        "Decodes images to HWC (uint8 unless `dtype` says otherwise).",
                        Window::kFull, {}, {"encoded"});
}

OpSchema image_crop_decoder_schema() {
  return decoder_schema(
      "decoders.image_crop",
      "Decodes a window of each image to HWC uint8: `crop` ([h, w]) or crop_h/crop_w, placed "
      "by crop_pos_x/crop_pos_y as fn.crop does (anchor floor(pos * (extent - crop) + 0.5)). "
      "JPEGs decode only the rows and iMCU columns the window needs; the pixels equal the "
      "window of a full decode.",
      Window::kCrop,
      [] {
        auto a = crop_arg_schemas();
        a.push_back(downscale_hint_arg());
        return a;
      }(),
      {"encoded"});
}

OpSchema image_random_crop_decoder_schema() {
  return decoder_schema(
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
}

OpSchema image_slice_decoder_schema() {
  return decoder_schema(
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
}

OpSchema peek_image_shape_schema() {
  return {
      .name = "peek_image_shape",
      .doc =
          "The [height, width, channels] of each encoded image, from its header alone "
          "(channels as stored: ANY_DATA's count). With adjust_orientation, EXIF orientations "
          "5-8 swap height and width.",
      .inputs = {"encoded"},
      .outputs = {"shape"},
      .args = {{"dtype", ArgType::kDType, "int32, int64, uint32, uint64, float32 or float64.",
                std::string("int64")},
               {"adjust_orientation", ArgType::kBool, "Report the EXIF-oriented size.", true}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<PeekImageShape>(s); },
  };
}

}  // namespace stoker::ops
