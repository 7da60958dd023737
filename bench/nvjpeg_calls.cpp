// What nvJPEG's hardware decoder asks of the CUDA driver per image, for each way of calling it:
// output format, bitstreams in pinned host memory (NVJPEG_BACKEND_HARDWARE) or in device memory
// (NVJPEG_BACKEND_HARDWARE_DEVICE), the whole image or a window (as image_random_crop asks).
// Those calls are made on the loader's thread beside a training thread's kernel launches, and
// the driver's locks are shared within a process (docs/findings.md): fewer calls per image
// leave the training thread's launches alone. Counted through CUPTI's callbacks (libcupti is
// opened at run time), then each case's rate timed without them; one submitting thread, batches
// of 256, 4:2:0 JPEGs only (the formats' plane sizes assume it).
//   build-gpu/bench/stoker_bench_nvjpeg_calls DIR_OF_JPEGS [seconds per case, default 2]
// With --pace, one case decodes at a given rate for a while in this process, beside a training
// run in another (bench/fed_gap.py): what the engines' work costs the training when its CUDA
// calls go to another process's driver state, with (RGBI: nvJPEG's conversion kernel) or
// without (YUV: copies only) work on the GPU's SMs.
//   ... DIR_OF_JPEGS --pace IMAGES_PER_S rgbi|yuv SECONDS
#include <cupti_callbacks.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvjpeg.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "stoker/codecs/nvjpeg/nvjpeg_api.hpp"

using stoker::codecs::nvjpeg_detail::api;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kBatch = 256;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// -- CUPTI: every runtime and driver call of the process, by name, while counting -------------
struct Counts {
  std::map<std::string, long> runtime, driver, kernels;
};
Counts* g_counts = nullptr;

void CUPTIAPI on_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (!g_counts || d->callbackSite != CUPTI_API_ENTER) return;
  auto& m = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? g_counts->runtime : g_counts->driver;
  ++m[d->functionName];
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && d->symbolName &&
      std::string(d->functionName).find("Launch") != std::string::npos)
    ++g_counts->kernels[d->symbolName];
}

struct Cupti {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableDomain) enable = nullptr;
  bool ok = false;
  Cupti() {
    void* lib = nullptr;
    for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
      if ((lib = dlopen(name, RTLD_NOW))) break;
    if (!lib) return;
    subscribe = reinterpret_cast<decltype(subscribe)>(dlsym(lib, "cuptiSubscribe"));
    enable = reinterpret_cast<decltype(enable)>(dlsym(lib, "cuptiEnableDomain"));
    CUpti_SubscriberHandle sub;
    ok = subscribe && enable && subscribe(&sub, on_call, nullptr) == CUPTI_SUCCESS &&
         enable(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS &&
         enable(1, sub, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
  }
};

// -- the images and one case --------------------------------------------------------------------
struct Image {
  std::vector<unsigned char> bytes;
  unsigned char* pinned = nullptr;
  unsigned char* device = nullptr;
  int width = 0, height = 0;
};

struct Case {
  const char* backend_name;
  nvjpegBackend_t backend;
  const char* format_name;
  nvjpegOutputFormat_t format;
  bool window;
};

// The output planes of `format` for a w x h region of a 4:2:0 image.
nvjpegImage_t planes(nvjpegOutputFormat_t f, int w, int h, unsigned char* base) {
  nvjpegImage_t out{};
  const unsigned cw = unsigned(w + 1) / 2, ch = unsigned(h + 1) / 2;
  auto at = [&](size_t off) { return base + off; };
  switch (f) {
    case NVJPEG_OUTPUT_RGBI:
      out.channel[0] = base, out.pitch[0] = unsigned(w) * 3;
      break;
    case NVJPEG_OUTPUT_RGB:
      for (int c = 0; c < 3; ++c) out.channel[c] = at(size_t(c) * w * h), out.pitch[c] = unsigned(w);
      break;
    case NVJPEG_OUTPUT_YUV:
      out.channel[0] = base, out.pitch[0] = unsigned(w);
      out.channel[1] = at(size_t(w) * h), out.pitch[1] = cw;
      out.channel[2] = at(size_t(w) * h + size_t(cw) * ch), out.pitch[2] = cw;
      break;
    case NVJPEG_OUTPUT_NV12:
      out.channel[0] = base, out.pitch[0] = unsigned(w);
      out.channel[1] = at(size_t(w) * h), out.pitch[1] = cw * 2;
      break;
    default:
      break;
  }
  return out;
}

struct Outcome {
  std::string error;
  double images_per_s = 0, call_ms = 0;
  Counts counts;
  int counted_images = 0;
};

Outcome run(const Case& c, std::vector<Image>& images, unsigned char* out_base, size_t out_stride,
            double seconds, const Cupti& cupti, double pace = 0) {
  Outcome r;
  nvjpegHandle_t handle = nullptr;
  if (api().create_ex(c.backend, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &handle) !=
      NVJPEG_STATUS_SUCCESS) {
    r.error = "no handle for this backend";
    return r;
  }
  nvjpegJpegState_t state = nullptr;
  api().state_create(handle, &state);
  cudaStream_t stream;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const bool on_device = c.backend == NVJPEG_BACKEND_HARDWARE_DEVICE;
  std::vector<nvjpegDecodeParams_t> params(kBatch);
  std::vector<const unsigned char*> data(kBatch);
  std::vector<size_t> lengths(kBatch);
  std::vector<nvjpegImage_t> outs(kBatch);
  nvjpegJpegStream_t parsed = nullptr;
  api().stream_create(handle, &parsed);
  for (int i = 0; i < kBatch; ++i) {
    auto& im = images[size_t(i) % images.size()];
    api().params_create(handle, &params[size_t(i)]);
    api().params_set_format(params[size_t(i)], c.format);
    // A centred window of about half the area, as a random resized crop takes.
    const int w = c.window ? im.width * 7 / 10 : im.width, h = c.window ? im.height * 7 / 10 : im.height;
    if (c.window)
      api().params_set_roi(params[size_t(i)], (im.width - w) / 2 & ~1, (im.height - h) / 2 & ~1, w, h);
    data[size_t(i)] = on_device ? im.device : im.pinned;
    lengths[size_t(i)] = im.bytes.size();
    outs[size_t(i)] = planes(c.format, w, h, out_base + size_t(i) * out_stride);
    int unsupported = 1;
    if (api().stream_parse(handle, im.bytes.data(), im.bytes.size(), 0, 0, parsed) !=
            NVJPEG_STATUS_SUCCESS ||
        api().batched_supported_ex(handle, parsed, params[size_t(i)], &unsupported) !=
            NVJPEG_STATUS_SUCCESS ||
        unsupported != 0) {
      r.error = "not supported";
    }
  }
  auto decode = [&] {
    const auto s = api().batched_ex(handle, state, data.data(), lengths.data(), outs.data(),
                                    params.data(), stream);
    cuda_check(cudaStreamSynchronize(stream), "decoding");
    return s;
  };
  if (r.error.empty()) {
    if (api().batched_init(handle, state, kBatch, 1, c.format) != NVJPEG_STATUS_SUCCESS ||
        decode() != NVJPEG_STATUS_SUCCESS || decode() != NVJPEG_STATUS_SUCCESS) {
      r.error = "decoding failed";
    }
  }
  if (r.error.empty()) {
    // Counted: three batches.
    if (cupti.ok && pace == 0) {
      g_counts = &r.counts;
      for (int k = 0; k < 3; ++k) decode();
      g_counts = nullptr;
      r.counted_images = 3 * kBatch;
    }
    long decoded = 0;
    double call = 0;
    const auto t0 = Clock::now();
    auto due = t0;
    while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
      if (pace > 0) {  // a batch every kBatch / pace seconds
        std::this_thread::sleep_until(due);
        due += std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(kBatch / pace));
      }
      const auto a = Clock::now();
      api().batched_ex(handle, state, data.data(), lengths.data(), outs.data(), params.data(),
                       stream);
      call += std::chrono::duration<double>(Clock::now() - a).count();
      cuda_check(cudaStreamSynchronize(stream), "decoding");
      decoded += kBatch;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    r.images_per_s = double(decoded) / elapsed;
    r.call_ms = 1e3 * call / double(decoded / kBatch);
  }
  cudaStreamSynchronize(stream);
  for (auto p : params) api().params_destroy(p);
  api().stream_destroy(parsed);
  api().state_destroy(state);
  api().destroy(handle);
  cudaStreamDestroy(stream);
  return r;
}

std::string top(const std::map<std::string, long>& m, int images, int n) {
  std::vector<std::pair<long, std::string>> v;
  for (const auto& [k, c] : m) v.emplace_back(c, k);
  std::sort(v.rbegin(), v.rend());
  std::string s;
  for (int i = 0; i < int(v.size()) && i < n; ++i) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s %.2f", i ? ", " : "", v[size_t(i)].second.substr(0, 40).c_str(),
                  double(v[size_t(i)].first) / images);
    s += buf;
  }
  return s;
}

double per_image(const std::map<std::string, long>& m, int images) {
  long t = 0;
  for (const auto& [k, c] : m) t += c;
  return images ? double(t) / images : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool paced = argc == 6 && std::string(argv[2]) == "--pace";
  if (argc < 2 || (argc > 3 && !paced)) {
    std::fprintf(stderr,
                 "usage: %s DIR_OF_JPEGS [seconds per case]\n"
                 "       %s DIR_OF_JPEGS --pace IMAGES_PER_S rgbi|yuv SECONDS\n",
                 argv[0], argv[0]);
    return 2;
  }
  if (!api().error.empty()) {
    std::printf("no nvJPEG: %s\n", api().error.c_str());
    return 0;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU\n");
    return 0;
  }
  const double seconds = paced ? std::atof(argv[5]) : argc > 2 ? std::atof(argv[2]) : 2.0;
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(300));
    std::fprintf(stderr, "watchdog: 300 s, aborting (hang?)\n");
    std::abort();
  }).detach();
  Cupti cupti;  // before any CUDA call is counted; subscribing after cuInit is fine
  nvjpegHandle_t probe = nullptr;
  api().create_ex(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &probe);
  std::vector<Image> images;
  size_t largest = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(argv[1])) {
    if (int(images.size()) == kBatch) break;
    if (e.path().extension() != ".jpg") continue;
    std::ifstream f(e.path(), std::ios::binary);
    Image im;
    im.bytes.assign(std::istreambuf_iterator<char>(f), {});
    int comps = 0, widths[NVJPEG_MAX_COMPONENT], heights[NVJPEG_MAX_COMPONENT];
    nvjpegChromaSubsampling_t css;
    if (api().get_image_info(probe, im.bytes.data(), im.bytes.size(), &comps, &css, widths,
                             heights) != NVJPEG_STATUS_SUCCESS ||
        css != NVJPEG_CSS_420 || comps != 3)
      continue;
    im.width = widths[0], im.height = heights[0];
    cuda_check(cudaMallocHost(reinterpret_cast<void**>(&im.pinned), im.bytes.size()), "pinned");
    std::copy(im.bytes.begin(), im.bytes.end(), im.pinned);
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&im.device), im.bytes.size()), "device");
    cuda_check(cudaMemcpy(im.device, im.bytes.data(), im.bytes.size(), cudaMemcpyHostToDevice),
               "upload");
    largest = std::max(largest, size_t(im.width) * size_t(im.height) * 3);
    images.push_back(std::move(im));
  }
  if (images.empty()) {
    std::printf("no 4:2:0 JPEGs under %s\n", argv[1]);
    return 1;
  }
  unsigned char* out = nullptr;
  cuda_check(cudaMalloc(reinterpret_cast<void**>(&out), largest * kBatch), "outputs");
  if (paced) {
    const bool yuv = std::string(argv[4]) == "yuv";
    const Case c{"pinned host", NVJPEG_BACKEND_HARDWARE, yuv ? "YUV planar" : "RGBI",
                 yuv ? NVJPEG_OUTPUT_YUV : NVJPEG_OUTPUT_RGBI, false};
    const auto r = run(c, images, out, largest, seconds, cupti, std::atof(argv[3]));
    std::printf("%s at a pace of %s images/s for %.0f s: %s%.0f images/s\n", c.format_name, argv[3],
                seconds, r.error.empty() ? "" : r.error.c_str(), r.images_per_s);
    return r.error.empty() ? 0 : 1;
  }
  double kb = 0;
  for (const auto& im : images) kb += double(im.bytes.size()) / 1e3;
  std::printf("nvJPEG %d.%d hardware decoder, batches of %d from %zu 4:2:0 JPEGs of %.0f KB, "
              "%.0f s per case; CUDA calls per image %s\n\n",
              NVJPEG_VER_MAJOR, NVJPEG_VER_MINOR, kBatch, images.size(), kb / double(images.size()),
              seconds, cupti.ok ? "(CUPTI)" : "not counted (no libcupti)");
  std::printf("| bitstreams | output | region | images/s | call ms | runtime calls/image | "
              "driver calls/image | runtime calls (per image) | kernels (per image) |\n"
              "|---|---|---|---:|---:|---:|---:|---|---|\n");
  for (auto [bname, backend] : {std::pair{"pinned host", NVJPEG_BACKEND_HARDWARE},
                                std::pair{"device", NVJPEG_BACKEND_HARDWARE_DEVICE}})
    for (auto [fname, format] : {std::pair{"RGBI", NVJPEG_OUTPUT_RGBI},
                                 std::pair{"RGB planar", NVJPEG_OUTPUT_RGB},
                                 std::pair{"YUV planar", NVJPEG_OUTPUT_YUV},
                                 std::pair{"NV12", NVJPEG_OUTPUT_NV12}})
      for (bool window : {false, true}) {
        const Case c{bname, backend, fname, format, window};
        const auto r = run(c, images, out, largest, seconds, cupti);
        if (!r.error.empty()) {
          std::printf("| %s | %s | %s | %s |||||\n", bname, fname, window ? "window" : "whole",
                      r.error.c_str());
        } else {
          std::printf("| %s | %s | %s | %.0f | %.2f | %.2f | %.2f | %s | %s |\n", bname, fname,
                      window ? "window" : "whole", r.images_per_s, r.call_ms,
                      per_image(r.counts.runtime, r.counted_images),
                      per_image(r.counts.driver, r.counted_images),
                      top(r.counts.runtime, r.counted_images, 5).c_str(),
                      top(r.counts.kernels, r.counted_images, 2).c_str());
        }
        std::fflush(stdout);
      }
  return 0;
}
