// device="mixed" image decoders: nvJPEG's hardware decoder and the CPU threads at once.
#include "stoker/ops/decoders/image_decoder_mixed.hpp"

#ifdef STOKER_HAVE_CUDA
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/ops/decoders/image_decoder_base.hpp"

namespace stoker::ops::decoders_detail {
namespace {

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
    // The hardware share's streams are gathered into pinned memory first (in parallel), so
    // nvJPEG's copies to the device are DMA, not staged by the driver.
    std::shared_ptr<Buffer> pinned_streams;
    if (!hw_jobs.empty() && pinned_bitstreams()) pinned_streams = gather_pinned(ws, hw_jobs);
    // The CPU share decodes on the pool while this thread submits the hardware share (nvJPEG's
    // hardware call holds its thread while the engines work): both sides run at once.
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<char> on_cpu(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) on_cpu[size_t(i)] = !on_hw[size_t(i)];
    HostDecodes cpu_part;
    auto cpu_done = std::async(std::launch::async, [&] {
      cpu_part = decode_on_host(ws, in, plan, on_cpu, out);
      return seconds_since(t0);
    });
    bool hw_ok = !hw_jobs.empty();
    double t_hw = 0;
    if (hw_ok) {
      try {
        hw_->decode(hw_jobs, format_ == codecs::ColorFormat::kBGR, ws.stream);
      } catch (const RuntimeError&) {  // the engines refused the batch: the CPU decodes it
        hw_ok = false;
        std::lock_guard lock(stats_mutex_);
        hw_fallbacks_ += 1;
      }
      t_hw = seconds_since(t0);
      if (pinned_streams) pinned_streams->record_stream(ws.stream);
    }
    const double t_cpu = cpu_done.get();
    upload(ws, cpu_part, on_cpu, out);
    if (!hw_ok && !hw_jobs.empty())
      upload(ws, decode_on_host(ws, in, plan, on_hw, out), on_hw, out);
    const int cpu_count = n - (hw_ok ? hw_count : 0);
    if (hw_ok && auto_) balance(hw_count, t_hw, n - hw_count, t_cpu);
    std::lock_guard lock(stats_mutex_);
    hw_images_ += hw_ok ? hw_count : 0;
    cpu_images_ += cpu_count;
    seconds_plan_ += t_plan, seconds_hw_submit_ += t_hw, seconds_cpu_ += t_cpu;
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

  // STOKER_NVJPEG_PINNED=0 hands nvJPEG the streams where they are (pageable memory).
  static bool pinned_bitstreams() {
    static const bool on = [] {
      const char* v = std::getenv("STOKER_NVJPEG_PINNED");
      return !(v && std::string(v) == "0");
    }();
    return on;
  }

  // Copies the jobs' encoded streams into one pinned buffer (on the pool) and points the jobs
  // at the copies.
  static std::shared_ptr<Buffer> gather_pinned(
      Workspace& ws, std::vector<codecs::NvjpegHardwareDecoder::Job>& jobs) {
    std::vector<size_t> at(jobs.size());
    size_t total = 0;
    for (size_t k = 0; k < jobs.size(); ++k) at[k] = total, total += (jobs[k].size + 63) / 64 * 64;
    auto buf = ws.pinned_pool->acquire(total);
    auto* base = static_cast<uint8_t*>(buf->data());
    ws.pool->parallel_for(int64_t(jobs.size()), [&](int64_t k, int) {
      std::memcpy(base + at[size_t(k)], jobs[size_t(k)].data, jobs[size_t(k)].size);
      jobs[size_t(k)].data = base + at[size_t(k)];
    });
    return buf;
  }

  // Samples decoded on the host: one pinned staging buffer, each sample at its offset.
  struct HostDecodes {
    std::shared_ptr<Buffer> staging;
    std::vector<size_t> offset;
  };

  // Decodes the samples with `which[i]` set on the pool into pinned staging.
  HostDecodes decode_on_host(Workspace& ws, const Batch& in, const Plan& plan,
                             const std::vector<char>& which, const Batch& out) {
    const int n = in.size();
    HostDecodes d;
    d.offset.assign(size_t(n), 0);
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      d.offset[size_t(i)] = total;
      if (which[size_t(i)]) total += out.sample(i).num_bytes();
    }
    if (total == 0) return d;
    d.staging = ws.pinned_pool->acquire(total);
    auto* base = static_cast<uint8_t*>(d.staging->data());
    for_each_sample(ws, n, [&](int i, int thread) {
      if (which[size_t(i)]) decode_host(in, plan, i, thread, base + d.offset[size_t(i)]);
    });
    return d;
  }

  // Copies host-decoded samples to their places in `out`, on the stage's stream.
  static void upload(Workspace& ws, const HostDecodes& d, const std::vector<char>& which,
                     Batch& out) {
    if (!d.staging) return;
    auto* base = static_cast<uint8_t*>(d.staging->data());
    for (int i = 0; i < out.size(); ++i)
      if (which[size_t(i)])
        copy_to_device_async(out.data(i), base + d.offset[size_t(i)], out.sample(i).num_bytes(),
                             ws.stream);
    d.staging->record_stream(ws.stream);
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
  mutable std::mutex stats_mutex_;
  int64_t hw_images_ = 0, cpu_images_ = 0, hw_fallbacks_ = 0;
  double seconds_plan_ = 0, seconds_hw_submit_ = 0, seconds_cpu_ = 0, seconds_total_ = 0;
};

}  // namespace

std::unique_ptr<Operator> make_mixed_image_decoder(const OpSpec& spec, Window window) {
  return std::make_unique<ImageDecoderMixed>(spec, window);
}

}  // namespace stoker::ops::decoders_detail
#endif  // STOKER_HAVE_CUDA
