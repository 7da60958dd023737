// The image decoder operator's CPU backend, shared by the mixed backend
// (image_decoder_mixed.cpp): the header pass that chooses windows and output shapes, and the
// per-sample host decode. Internal to ops/decoders.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "stoker/codecs/decoder.hpp"
#include "stoker/codecs/exif.hpp"
#include "stoker/kernels/color/color_cpu.hpp"
#include "stoker/kernels/geometry/orient_cpu.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/geometry/crop_args.hpp"
#include "stoker/ops/operator.hpp"

namespace stoker::ops::decoders_detail {

// The decoders share one operator; they differ in the window they decode:
//   kFull: the whole image; kCrop: crop/crop_pos_x/y (as fn.crop); kRandomCrop: the
//   RandomResizedCrop window (as random_resized_crop, without the resize); kSlice: anchor and
//   shape inputs (as DALI's decoders.image_slice).
enum class Window { kFull, kCrop, kRandomCrop, kSlice };

inline bool is_ycbcr(std::string s) {
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
    limits_.strict = spec.arg<bool>("strict");
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
                    [&](int i, int thread) { decode_host(ws, in, plan, i, thread, out.data(i)); });
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

  std::map<std::string, double> stats() const override {
    return {{"decoded_with_warnings", double(decoded_with_warnings_.load())}};
  }

  // Decodes sample i into host memory `out` (its output shape, in dtype_), on pool thread
  // `thread`; a decode past corrupt data is counted and reported to ws.warnings.
  void decode_host(Workspace& ws, const Batch& in, const Plan& p, int i, int thread, void* out) {
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
    auto& dec = *decoders_[size_t(thread)];
    decode_window(dec, in.sample(i), info, win, p.scales[size_t(i)], bytes, sc, dst);
    if (!dec.warning().empty()) {
      ++decoded_with_warnings_;
      warn_sample(ws, i,
                  "corrupt JPEG data: " + dec.warning() + " (decoded anyway; strict=True raises)");
    }
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
        const CropWindow out = crop_window_arg(*this, ws, i, h, w);
        check_window_inside(out, h, w, spec_.schema->name);
        return out;
      }
      case Window::kRandomCrop: {
        auto area = spec_.arg<std::vector<double>>("random_area");
        auto aspect = spec_.arg<std::vector<double>>("random_aspect_ratio");
        STOKER_ENFORCE(area.size() == 2 && aspect.size() == 2, ValueError, spec_.schema->name,
                       ": random_area and random_aspect_ratio need two values each");
        auto rng = sample_rng(ws, i);
        return random_resized_crop_window(
            h, w, area[0], area[1], aspect[0], aspect[1],
            // At most kMaxAttempts tries (arg_limits.hpp).
            int(std::min(spec_.arg<int64_t>("num_attempts"), kMaxAttempts)), rng);
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
  std::atomic<int64_t> decoded_with_warnings_{0};
  std::mutex mutex_;
  std::vector<std::unique_ptr<codecs::Decoder>> decoders_;  // one per pool thread
  std::vector<Scratch> scratch_;                            // one per pool thread
};

}  // namespace stoker::ops::decoders_detail
