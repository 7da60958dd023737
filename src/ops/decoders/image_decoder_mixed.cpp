// device="mixed" image decoders: nvJPEG's hardware decoder, its CUDA decoder and the CPU threads
// at once.
#include "stoker/ops/decoders/image_decoder_mixed.hpp"

#ifdef STOKER_HAVE_CUDA
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>

#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/ops/decoders/hw_share.hpp"
#include "stoker/ops/decoders/image_decoder_base.hpp"
#include "stoker/ops/decoders/other_formats_gpu.hpp"
#include "stoker/ops/decoders/thread_decoder_choice.hpp"

namespace stoker::ops::decoders_detail {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// device="mixed": each batch is split between the GPU's hardware JPEG decoder (nvJPEG's
// batched hardware backend, windows decoded as regions of interest) and the CPU threads. On the
// threads, a JPEG goes to nvJPEG's CUDA decoder (Huffman on the thread, the rest on the GPU) or
// to libjpeg-turbo (everything on the thread, then one copy to the device), whichever costs the
// threads less per image (measured, or fixed by cuda_decoder); the other formats, and anything
// nvJPEG refuses, decode with the CPU codecs, but for 8-bit JPEG 2000 and TIFF images as stored,
// which nvJPEG2000 and nvTIFF decode on the GPU where their libraries are found
// (OtherFormatsGpu). The hardware takes baseline JPEGs it reports as
// supported, for RGB/BGR uint8 output without EXIF rotation or DCT scaling; a batch it fails goes
// to the CPU. hw_decoder_load is the fraction of the batch offered to the hardware, or "auto":
// measured rates of the hardware and the threads set it so that they take equal time, or, when
// the consumer asks for batches more slowly than the engines alone decode them, so that the
// engines take what they can within that pace; probe batches check that the threads' part pays
// where the threads' decoding slows the engines' thread (HwShare).
//
// The threads' work runs in the CPU stage, an iteration ahead (prepare_on_host): the header
// pass, the split, libjpeg-turbo's share of the batch into pinned memory and the CUDA decoder's
// share into device staging, all in one pass over the pool. The mixed stage then only submits
// the hardware's share and copies the rest into place, so the engines and the CPU threads work
// on consecutive batches at once instead of meeting at a barrier every batch (and the pool,
// which serves one stage at a time, is not held by the mixed stage while the CPU stage waits).
// Without a prepared split (e.g. samples were replaced after it) run() does all of it itself.
class ImageDecoderMixed final : public ImageDecoder {
 public:
  ImageDecoderMixed(const OpSpec& spec, Window window)
      : ImageDecoder(spec, window),
        cuda_mode_(spec.arg<std::string>("cuda_decoder")),
        gpu_huffman_threshold_(spec.arg<int64_t>("hybrid_huffman_threshold")) {
    const auto load = spec.arg<std::string>("hw_decoder_load");
    if (load == "auto") {
      auto_ = true;
    } else {
      char* end = nullptr;
      load_ = std::strtod(load.c_str(), &end);
      STOKER_ENFORCE(end && *end == 0 && load_ >= 0 && load_ <= 1, ValueError, spec.schema->name,
                     ": hw_decoder_load must be 'auto' or a fraction in [0, 1], got '", load, "'");
    }
    STOKER_ENFORCE(cuda_mode_ == "auto" || cuda_mode_ == "on" || cuda_mode_ == "off", ValueError,
                   spec.schema->name, ": cuda_decoder must be 'auto', 'on' or 'off', got '",
                   cuda_mode_, "'");
  }

  bool prepares_on_host() const override { return true; }
  std::shared_ptr<void> prepare_on_host(Workspace& ws) override {
    const Batch& in = ws.input(0);
    auto split = make_split(ws, in);
    if (split->n == 0) return split;
    const auto t = Clock::now();
    std::vector<Side> threads_share = split->side;
    for (auto& s : threads_share)
      if (s == Side::kHw) s = Side::kSkip;
    split->host = decode_on_threads(ws, in, split->plan, threads_share, split->jobs,
                                    /*cuda_to_staging=*/true);
    split->host_seconds = seconds_since(t);
    split->host_decoded = true;
    return split;
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int n = in.size();
    const auto t_start = Clock::now();
    if (auto_) {
      std::lock_guard lock(stats_mutex_);
      share_.started(std::chrono::duration<double>(t_start.time_since_epoch()).count());
    }
    auto split = std::static_pointer_cast<Split>(ws.prepared);
    if (!split || split->n != n || (n > 0 && split->first != in.data(0)))
      split = make_split(ws, in);  // not prepared (or for another batch): all of it here
    Batch& out = add_output(ws, dtype_, split->plan.shapes, "HWC");
    if (n == 0) return;
    std::vector<Job>& jobs = split->jobs;
    std::vector<Job> hw_jobs;
    for (int i = 0; i < n; ++i) {
      jobs[size_t(i)].out = static_cast<uint8_t*>(out.data(i));
      if (split->side[size_t(i)] == Side::kHw) hw_jobs.push_back(jobs[size_t(i)]);
    }
    // nvJPEG's copies of the hardware share's streams to the device are DMA only from pinned
    // memory: the executor gives readers feeding this operator pinned buffers; other inputs
    // are gathered into pinned memory first (in parallel), not staged by the driver.
    std::shared_ptr<Buffer> pinned_streams;
    const bool input_pinned = all_pinned(in);
    if (!hw_jobs.empty() && !input_pinned) pinned_streams = gather_pinned(ws, hw_jobs);
    // What the threads decode here: their share, unless the CPU stage did it. They run on the
    // pool while this thread submits the hardware share (nvJPEG's hardware call holds its
    // thread while the engines work).
    std::vector<Side> here = split->side;
    for (auto& s : here)
      if (s == Side::kHw || s == Side::kOther || split->host_decoded) s = Side::kSkip;
    const bool any_here =
        std::any_of(here.begin(), here.end(), [](Side s) { return s != Side::kSkip; });
    const bool any_cuda = std::count(here.begin(), here.end(), Side::kCuda) > 0;
    if (any_cuda) cuda_->begin(ws.stream);
    const auto t0 = Clock::now();
    ThreadDecodes threads;
    std::future<double> threads_done;
    if (any_here)
      threads_done = std::async(std::launch::async, [&] {
        threads = decode_on_threads(ws, in, split->plan, here, jobs);
        return seconds_since(t0);
      });
    bool hw_ok = !hw_jobs.empty();
    double t_hw = 0, t_hw_wait = 0;
    if (hw_ok) {
      try {
        t_hw_wait = hw_->decode(hw_jobs, format_ == codecs::ColorFormat::kBGR, ws.stream);
      } catch (const RuntimeError&) {  // the engines refused the batch: the CPU decodes it
        hw_ok = false;
        std::lock_guard lock(stats_mutex_);
        hw_fallbacks_ += 1;
      }
      t_hw = seconds_since(t0);
      if (pinned_streams) pinned_streams->record_stream(ws.stream);
      // Reused only after the engines' reads, all queued by now: one event for the batch's
      // buffers (an event per sample at release, each polled by the readers, was ~2 driver
      // calls per image on top of nvJPEG's: the training thread's launches wait on them).
      if (input_pinned) in.record_use(ws.stream);
    }
    std::vector<int> others;  // JPEG 2000 and TIFF images for their GPU decoders
    for (int i = 0; i < n; ++i)
      if (split->side[size_t(i)] == Side::kOther) others.push_back(i);
    const auto other = others.empty()
                           ? OtherFormatsGpu::Result{}
                           : others_.decode(others, in, split->plan.infos, jobs, out, ws.stream);
    const double t_threads = any_here ? threads_done.get() : 0.0;
    const auto t_join = Clock::now();
    // The CUDA decoder's work, here or ahead, before the uploads (which may replace a refused
    // decode). Its inputs and staging are guarded by the same events (decode_on_threads).
    for (const auto* d : {&threads, &split->host})
      if (d->cuda_done) d->cuda_done->wait_on(ws.stream);
    upload(ws, split->host, out);
    upload(ws, threads, out);
    const int hw_count = int(hw_jobs.size());
    const int threads_n = n - hw_count - int(others.size());  // the threads' share
    // What the engines failed and the other formats' decoders refused, on the CPU (later on
    // the stream than anything those queued for the same samples).
    if ((!hw_ok && hw_count > 0) || !other.refused.empty()) {
      std::vector<Side> redo(static_cast<size_t>(n), Side::kSkip);
      for (int i = 0; i < n; ++i)
        if (!hw_ok && split->side[size_t(i)] == Side::kHw) redo[size_t(i)] = Side::kCpu;
      for (int i : other.refused) redo[size_t(i)] = Side::kCpu;
      upload(ws, decode_on_threads(ws, in, split->plan, redo, jobs), out);
    }
    // The threads' side: the CPU stage's decodes when it did them, else this batch's threads.
    // A probe of the threads' decoders is no measure of the threads' rate (the losing decoder,
    // first use's allocations): the hardware's share learns nothing from it.
    if (hw_ok && auto_ && !split->decoder_probe) {
      if (split->host_decoded)  // the CPU stage's time on it: headers and decoding
        balance(n, hw_count, t_hw, threads_n, split->plan_seconds + split->host_seconds,
                seconds_since(t_start), split->share_tag);
      else
        balance(n, hw_count, t_hw, threads_n, t_threads, seconds_since(t_start), split->share_tag);
    }
    if (!split->warmup_probe) learn_thread_costs(split->host), learn_thread_costs(threads);
    const double t_finish = seconds_since(t_join);
    std::lock_guard lock(stats_mutex_);
    const int cuda_n = threads.cuda_decoded + split->host.cuda_decoded;
    hw_images_ += hw_ok ? hw_count : 0;
    cuda_images_ += cuda_n;
    j2k_images_ += other.jpeg2000, j2k_refused_ += other.jpeg2000_refused;
    tiff_images_ += other.tiff, tiff_refused_ += other.tiff_refused;
    cuda_fallbacks_ += threads.cuda_refused + split->host.cuda_refused;
    cpu_images_ += n - (hw_ok ? hw_count : 0) - cuda_n - other.jpeg2000 - other.tiff;
    ahead_images_ += split->host_decoded ? threads_n : 0;
    seconds_ahead_ += split->host_decoded ? split->host_seconds : 0.0;
    seconds_plan_ += split->plan_seconds, seconds_finish_ += t_finish;
    seconds_hw_submit_ += t_hw, seconds_hw_wait_ += t_hw_wait, seconds_threads_ += t_threads;
    seconds_total_ += seconds_since(t_start);
  }

  std::map<std::string, double> stats() const override {
    auto out = ImageDecoder::stats();  // the threads' libjpeg-turbo decodes past warnings
    bool hw = false, cuda = false, j2k = false, tiff = false;
    const codecs::NvjpegCudaDecoder* cuda_decoder = nullptr;
    {
      std::lock_guard open(open_mutex_);  // the decoders open on the first batch
      hw = hw_ != nullptr, cuda = cuda_ != nullptr, cuda_decoder = cuda_.get();
      j2k = others_.has_jpeg2000(), tiff = others_.has_tiff();
    }
    if (cuda) {
      // The CUDA decoder's thread time by phase: where its time per image goes.
      const auto p = cuda_decoder->phase_seconds();
      out["seconds_cuda_host"] = p.seconds[codecs::kPhaseHost];
      out["seconds_cuda_wait"] = p.seconds[codecs::kPhaseWait];
      out["seconds_cuda_transfer"] = p.seconds[codecs::kPhaseTransfer];
      out["seconds_cuda_device"] = p.seconds[codecs::kPhaseDevice];
    }
    std::lock_guard lock(stats_mutex_);
    out.merge(std::map<std::string, double>{
        {"hw_images", double(hw_images_)},
        {"cuda_images", double(cuda_images_)},
        // JPEG 2000s and TIFFs nvJPEG2000 and nvTIFF decoded, those they left to the CPU.
        {"j2k_images", double(j2k_images_)},
        {"j2k_refused", double(j2k_refused_)},
        {"j2k_available", j2k ? 1.0 : 0.0},
        {"tiff_images", double(tiff_images_)},
        {"tiff_refused", double(tiff_refused_)},
        {"tiff_available", tiff ? 1.0 : 0.0},
        {"cpu_images", double(cpu_images_)},
        // Of cpu_images and cuda_images, those decoded in the CPU stage ahead of the mixed
        // stage.
        {"threads_images_ahead", double(ahead_images_)},
        {"hw_load", auto_ ? share_.share() : load_},
        // "auto": the part of the balance's threads' share they get (its probes' finding).
        {"hw_threads_scale", auto_ ? share_.threads_scale() : 0.0},
        {"hw_load_probes", double(share_.probes())},
        {"hw_available", hw ? 1.0 : 0.0},
        {"cuda_available", cuda ? 1.0 : 0.0},
        {"hw_batch_fallbacks", double(hw_fallbacks_)},
        {"cuda_refused", double(cuda_fallbacks_)},
        // Thread-seconds per image on the threads' two decoders (0: not measured yet).
        {"thread_seconds_per_cuda_image", choice_.cuda_cost()},
        {"thread_seconds_per_cpu_image", choice_.cpu_cost()},
        // Seconds: the header pass and the threads' share decoded ahead (CPU stage); then, in the
        // mixed stage, the hardware call, the threads' work there, uploads, and all of run().
        {"seconds_headers", seconds_plan_},
        {"seconds_threads_ahead", seconds_ahead_},
        {"seconds_hw_submit", seconds_hw_submit_},
        // Of seconds_hw_submit: waiting for the stream's earlier work before the engines.
        {"seconds_hw_wait", seconds_hw_wait_},
        {"seconds_threads", seconds_threads_},
        {"seconds_finish", seconds_finish_},
        {"seconds_total", seconds_total_}});
    return out;
  }

 private:
  using Job = codecs::NvjpegJob;
  // Who decodes a sample: the engines, nvJPEG's CUDA decoder on a thread, the CPU codecs on a
  // thread, nvJPEG2000 or nvTIFF from the mixed stage's thread, or nobody in this pass.
  enum class Side : char { kSkip, kCpu, kHw, kCuda, kOther };

  // What the threads decoded: host decodes in one pinned staging buffer (each at its offset,
  // `staged`) for upload; the CUDA decoder wrote its samples on the device, into their place in
  // the output, or, decoding ahead, into device staging (at `device_offset`, `on_device`),
  // complete once the stream waited for `cuda_done`.
  struct ThreadDecodes {
    std::shared_ptr<Buffer> staging;
    std::vector<size_t> offset;
    std::vector<char> staged;
    std::shared_ptr<Buffer> device_staging;
    std::vector<size_t> device_offset;
    std::vector<char> on_device;
    std::shared_ptr<CudaEvent> cuda_done;  // null: the CUDA decoder queued nothing
    int cuda_decoded = 0, cuda_refused = 0;
    double cpu_seconds = 0, cuda_seconds = 0;  // thread time, summed over samples
    int cpu_timed = 0, cuda_timed = 0;
  };

  // A batch's header pass and split (jobs without their output pointers), and what the CPU
  // stage decoded of it.
  struct Split {
    int n = 0;
    const void* first = nullptr;  // the first sample's bytes: which batch this is
    Plan plan;
    std::vector<Side> side;
    std::vector<Job> jobs;       // kHw, kCuda and kOther samples
    bool warmup_probe = false;   // the CUDA decoder's first batch: its costs are not learned
    bool decoder_probe = false;  // cuda_decoder="auto" tried both decoders on the threads
    bool host_decoded = false;   // kCpu samples are in `host`
    ThreadDecodes host;
    double plan_seconds = 0, host_seconds = 0;
    int64_t share_tag = -1;  // "auto": the HwShare offer's
  };

  static bool all_pinned(const Batch& in) {
    for (int i = 0; i < in.size(); ++i)
      if (!in.owner(i) || in.owner(i)->kind() != MemoryKind::kPinned) return false;
    return true;
  }

  // Opens nvJPEG's decoders on first use (from the CPU or the mixed stage, whichever is first).
  void open_gpu_decoders(Workspace& ws) {
    std::lock_guard lock(open_mutex_);
    if (gpu_tried_) return;
    gpu_tried_ = true;
    DeviceGuard guard(ws.device_id);  // the CPU stage's thread has no device of its own
    if (codecs::nvjpeg_hardware_available(ws.device_id, &hw_why_))
      hw_ = std::make_unique<codecs::NvjpegHardwareDecoder>(ws.device_id);
    if (cuda_mode_ != "off" && codecs::nvjpeg_cuda_available(ws.device_id, &cuda_why_))
      cuda_ = std::make_unique<codecs::NvjpegCudaDecoder>(ws.device_id, ws.pool->num_threads(),
                                                          gpu_huffman_threshold_);
    others_.open(ws.device_id);
  }

  // Sample i's window as a GPU decoder's job, `channels` interleaved (its output comes later).
  static Job job_of(const Batch& in, int i, const CropWindow& w, int channels) {
    auto view = in.sample(i);
    return {static_cast<const uint8_t*>(view.data),
            size_t(view.shape[0]),
            w.y,
            w.x,
            w.height,
            w.width,
            nullptr,
            w.width * channels};
  }

  // The header pass, then who decodes what.
  std::shared_ptr<Split> make_split(Workspace& ws, const Batch& in) {
    const auto t = Clock::now();
    auto sp = std::make_shared<Split>();
    Split& s = *sp;
    s.n = in.size();
    s.plan = make_plan(ws, in);
    if (s.n == 0) return sp;
    s.first = in.data(0);
    open_gpu_decoders(ws);
    s.jobs.resize(size_t(s.n));
    s.side.assign(size_t(s.n), Side::kCpu);
    // Which samples nvJPEG may take, from the headers already read (nvJPEG's own check would
    // parse every stream again; whatever it still refuses goes to the CPU).
    std::vector<char> hw_ok_here(size_t(s.n), 0);
    const bool colour =
        format_ == codecs::ColorFormat::kRGB || format_ == codecs::ColorFormat::kBGR;
    if ((hw_ || cuda_) && dtype_ == DType::kU8 && !ycbcr_ && colour) {
      for (int i = 0; i < s.n; ++i) {
        const auto& info = s.plan.infos[size_t(i)];
        const auto& w = s.plan.windows[size_t(i)];
        // 3-component Huffman JPEGs shown as stored, not DCT-scaled.
        if (info.format != codecs::ImageFormat::kJpeg || info.orientation != 1 ||
            s.plan.scales[size_t(i)] != 1 || info.channels != 3 || info.jpeg_components != 3 ||
            info.jpeg_arithmetic)
          continue;
        s.jobs[size_t(i)] = job_of(in, i, w, 3);
        if (cuda_) s.side[size_t(i)] = Side::kCuda;  // unless the hardware takes it
        // The engines: baseline only, without 4:1:x chroma.
        const auto& sub = info.jpeg_subsampling;
        hw_ok_here[size_t(i)] =
            hw_ && info.jpeg_baseline_huffman && sub != "411" && sub != "410" && sub != "other";
      }
    }
    // The split: the first `take` samples the hardware can take go to it.
    int take = int(std::lround(load_ * s.n));
    if (auto_) {
      // The measured share moves a little every batch; the hardware's batch size follows it
      // only when it moved by kTakeStep samples or more, because each new size re-initialises
      // nvJPEG's batch state after waiting for the stream (see NvjpegHardwareDecoder). A
      // share of 1 (the engines take all, under a slower consumer) is taken whole: within
      // kTakeStep of the last size, a few images per batch would stay on the threads for good.
      std::lock_guard lock(stats_mutex_);
      const HwShare::Offer offer = share_.next();
      s.share_tag = offer.tag;
      take = int(std::lround(offer.share * s.n));
      if (last_take_ >= 0 && last_take_ <= s.n && std::abs(take - last_take_) < kTakeStep &&
          take < s.n)
        take = last_take_;
      last_take_ = take;
    }
    for (int i = 0, taken = 0; i < s.n && taken < take; ++i)
      if (hw_ok_here[size_t(i)]) s.side[size_t(i)] = Side::kHw, ++taken;
    // 8-bit JPEG 2000s and TIFFs as stored. Not under on_error="skip" (ws.failures, set in the
    // CPU stage): what the GPU refuses is decoded in the mixed stage, which cannot skip a
    // sample; the CPU stage decodes them all then, as before.
    for (int i = 0; i < s.n && !ws.failures; ++i) {
      const auto& info = s.plan.infos[size_t(i)];
      if (!others_.takes(info, format_, dtype_, ycbcr_)) continue;
      s.jobs[size_t(i)] = job_of(in, i, s.plan.windows[size_t(i)], info.channels);
      s.side[size_t(i)] = Side::kOther;
    }
    choose_thread_decoders(s);
    s.plan_seconds = seconds_since(t);
    return sp;
  }

  // cuda_decoder="auto": the threads' JPEGs go to whichever decoder costs a thread less per
  // image (ThreadDecoderChoice says when probe batches measure both).
  void choose_thread_decoders(Split& split) {
    if (!cuda_ || cuda_mode_ != "auto") return;
    std::lock_guard lock(stats_mutex_);
    const ThreadDecoderChoice::Batch b = choice_.next();
    int k = 0;
    for (auto& s : split.side)
      if (s == Side::kCuda && !choice_.to_cuda(b, k++)) s = Side::kCpu;
    split.warmup_probe = b.warmup;
    split.decoder_probe = b.probe && k > 0;  // a batch without CUDA candidates probed nothing
  }

  // Copies the jobs' encoded streams into one pinned buffer (on the pool) and points the jobs
  // at the copies.
  static std::shared_ptr<Buffer> gather_pinned(Workspace& ws, std::vector<Job>& jobs) {
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

  // Decodes the samples with side kCpu or kCuda on the pool (kCuda ones nvJPEG refuses are
  // decoded on the host instead); host decodes go to pinned staging. The CUDA decoder writes to
  // its jobs' `out`, or with `cuda_to_staging` to device staging (the CPU stage, before the
  // outputs exist); its work is complete once a stream waited for d.cuda_done, which also
  // guards the staging and the JPEGs' buffers (a prepared split may be dropped unrun).
  ThreadDecodes decode_on_threads(Workspace& ws, const Batch& in, const Plan& plan,
                                  const std::vector<Side>& side, std::vector<Job>& jobs,
                                  bool cuda_to_staging = false) {
    const int n = in.size();
    ThreadDecodes d;
    d.offset.assign(size_t(n), 0);
    d.staged.assign(size_t(n), 0);
    size_t total = 0, device_total = 0;
    if (cuda_to_staging) d.device_offset.assign(size_t(n), 0), d.on_device.assign(size_t(n), 0);
    for (int i = 0; i < n; ++i) {
      d.offset[size_t(i)] = total;
      const size_t bytes = size_t(plan.shapes[size_t(i)].volume()) * dtype_size(dtype_);
      if (side[size_t(i)] == Side::kCpu || side[size_t(i)] == Side::kCuda) total += bytes;
      if (cuda_to_staging && side[size_t(i)] == Side::kCuda) {
        d.device_offset[size_t(i)] = device_total;
        device_total += (bytes + 255) / 256 * 256;
      }
    }
    if (total == 0) return d;
    if (device_total > 0) {
      // acquire() returns memory whose earlier users' work is done (each use is guarded by an
      // event, this one's by d.cuda_done): the slots' streams may write it at once.
      d.device_staging = ws.device_pool->acquire(device_total);
      auto* dev = static_cast<uint8_t*>(d.device_staging->data());
      for (int i = 0; i < n; ++i)
        if (side[size_t(i)] == Side::kCuda) jobs[size_t(i)].out = dev + d.device_offset[size_t(i)];
    }
    d.staging = ws.pinned_pool->acquire(total);
    auto* base = static_cast<uint8_t*>(d.staging->data());
    struct PerThread {
      double cpu_s = 0, cuda_s = 0;
      int cpu_n = 0, cuda_n = 0, refused = 0;
      int cuda_timed = 0;  // of cuda_n + refused, those timed in cuda_s
    };
    std::vector<PerThread> per(size_t(ws.pool->num_threads()));
    const bool bgr = format_ == codecs::ColorFormat::kBGR;
    // The slots (one per pool thread) the CUDA decoder queued work on, decoded or not.
    auto cuda_slots = [&] {
      std::vector<int> slots;
      for (size_t k = 0; k < per.size(); ++k)
        if (per[k].cuda_n + per[k].refused > 0) slots.push_back(int(k));
      return slots;
    };
    try {
      for_each_sample(ws, n, [&](int i, int thread) {
        const Side s = side[size_t(i)];
        if (s != Side::kCpu && s != Side::kCuda) return;
        auto& p = per[size_t(thread)];
        const auto t = Clock::now();
        // An image that enlarged its slot's buffers (nvJPEG allocates pinned and device memory
        // then, several times a warm decode's time) is no cost to learn "auto"'s choice from.
        bool grew = false;
        if (s == Side::kCuda && cuda_->decode(jobs[size_t(i)], bgr, thread, &grew)) {
          ++p.cuda_n;
          if (!grew) p.cuda_s += seconds_since(t), ++p.cuda_timed;
          if (cuda_to_staging) d.on_device[size_t(i)] = 1;  // distinct bytes per sample
          return;
        }
        if (s == Side::kCuda) ++p.refused;
        decode_host(ws, in, plan, i, thread, base + d.offset[size_t(i)]);
        d.staged[size_t(i)] = 1;  // distinct bytes per sample: no race
        // A refused image costs the CUDA decoder's side its attempt and the host's decode.
        if (s == Side::kCpu)
          p.cpu_s += seconds_since(t), ++p.cpu_n;
        else if (!grew)
          p.cuda_s += seconds_since(t), ++p.cuda_timed;
      });
    } catch (...) {
      // The pass failed (every sample was tried): what the slots queued still writes to the
      // staging or the outputs and reads the inputs, which are released on the way out.
      if (cuda_) {
        if (const auto done = cuda_->mark(cuda_slots())) done->synchronize();
      }
      throw;
    }
    for (const auto& p : per) {
      d.cpu_seconds += p.cpu_s, d.cuda_seconds += p.cuda_s;
      d.cpu_timed += p.cpu_n, d.cuda_timed += p.cuda_timed;
      d.cuda_decoded += p.cuda_n, d.cuda_refused += p.refused;
    }
    if (cuda_) d.cuda_done = cuda_->mark(cuda_slots());
    if (d.cuda_done) {
      // nvJPEG parses without copying, and with Huffman on the GPU its transfer copies the
      // JPEG's bytes to the device asynchronously, from the reader's (pinned) buffers: they
      // are reused only after those copies (the reader refilled one under queued copies:
      // another image's bytes, now and then, under GPU load). The staging, likewise, even if
      // this split is dropped before the mixed stage copies it.
      if (d.device_staging) d.device_staging->record_use(d.cuda_done);
      for (int i = 0; i < n; ++i)
        if (side[size_t(i)] == Side::kCuda && in.owner(i)) in.owner(i)->record_use(d.cuda_done);
    }
    return d;
  }

  // Copies the threads' samples to their places in `out`, on the stage's stream (after it
  // waited for d.cuda_done): one copy per run of consecutive samples (the threads take the
  // batch's tail, so usually one or a few copies rather than one per image).
  static void upload(Workspace& ws, const ThreadDecodes& d, Batch& out) {
    // The staged samples of one buffer (`at` their offsets in it), copied with `copy`.
    auto copy_staged = [&](const Buffer& from, const std::vector<char>& staged,
                           const std::vector<size_t>& at, auto copy) {
      auto* base = static_cast<uint8_t*>(from.data());
      std::vector<CopyPiece> pieces;
      for (int i = 0; i < out.size(); ++i)
        if (staged[size_t(i)])
          pieces.push_back({out.data(i), base + at[size_t(i)], out.sample(i).num_bytes()});
      for (const CopyPiece& p : merge_adjacent_copies(pieces))
        copy(p.dst, p.src, p.bytes, ws.stream);
    };
    if (d.staging) {
      copy_staged(*d.staging, d.staged, d.offset, copy_to_device_async);
      d.staging->record_stream(ws.stream);
    }
    if (d.device_staging) {
      copy_staged(*d.device_staging, d.on_device, d.device_offset, copy_device_async);
      d.device_staging->record_stream(ws.stream);
    }
  }

  // The threads' cost per image of each decoder, smoothed over batches.
  void learn_thread_costs(const ThreadDecodes& d) {
    std::lock_guard lock(stats_mutex_);
    choice_.learn(d.cpu_seconds, d.cpu_timed, d.cuda_seconds, d.cuda_timed);
  }

  // "auto" (HwShare): this batch's measurements; the share for the next batches.
  void balance(int n, int hw_n, double t_hw, int threads_n, double t_threads, double busy,
               int64_t tag) {
    std::lock_guard lock(stats_mutex_);
    share_.finished(n, hw_n, t_hw, threads_n, t_threads, busy, tag);
  }

  bool auto_ = false;
  double load_ = 1.0;
  std::string cuda_mode_;  // cuda_decoder: "auto", "on" or "off"
  int64_t gpu_huffman_threshold_;
  mutable std::mutex open_mutex_;
  bool gpu_tried_ = false;
  std::string hw_why_, cuda_why_;
  std::unique_ptr<codecs::NvjpegHardwareDecoder> hw_;
  std::unique_ptr<codecs::NvjpegCudaDecoder> cuda_;
  OtherFormatsGpu others_;  // decodes from the mixed stage only
  // Shared by the CPU stage (prepare_on_host) and the mixed stage (run), and stats().
  mutable std::mutex stats_mutex_;
  HwShare share_;  // offers to the splits (either stage), measurements from the mixed stage
  static constexpr int kTakeStep = 8;
  int last_take_ = -1;          // the hardware's share of the last batch, in samples ("auto")
  ThreadDecoderChoice choice_;  // cuda_decoder="auto"
  int64_t hw_images_ = 0, cuda_images_ = 0, cpu_images_ = 0, ahead_images_ = 0;
  int64_t hw_fallbacks_ = 0, cuda_fallbacks_ = 0;
  int64_t j2k_images_ = 0, j2k_refused_ = 0, tiff_images_ = 0, tiff_refused_ = 0;
  double seconds_plan_ = 0, seconds_ahead_ = 0, seconds_hw_submit_ = 0, seconds_hw_wait_ = 0;
  double seconds_threads_ = 0;
  double seconds_finish_ = 0, seconds_total_ = 0;
};

}  // namespace

std::unique_ptr<Operator> make_mixed_image_decoder(const OpSpec& spec, Window window) {
  return std::make_unique<ImageDecoderMixed>(spec, window);
}

}  // namespace stoker::ops::decoders_detail
#endif  // STOKER_HAVE_CUDA
