// nvJPEG's hardware decoder alone, to find what limits it inside the mixed decoder: images/s
// for 1 or 2 submitting threads (each with its own decoding state on the one shared handle),
// with and without CPU threads decoding with libjpeg-turbo at the same time, and how long the
// batched call holds its thread against how long the engines still work after it returns.
// A watchdog aborts the run after 100 s (two hardware states were once seen to hang).
//   build-gpu/bench/stoker_bench_nvjpeg DIR_OF_JPEGS [seconds per case, default 3]
//   (JPEGs found recursively under DIR)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "stoker/codecs/decoder.hpp"
#include "stoker/codecs/nvjpeg/nvjpeg_decoder.hpp"
#include "stoker/core/cuda.hpp"
#include "stoker/core/memory.hpp"

using namespace stoker;
using Clock = std::chrono::steady_clock;

namespace {

struct Image {
  std::vector<uint8_t> bytes;
  std::shared_ptr<Buffer> pinned;  // the same bytes in pinned memory (as readers deliver them)
  codecs::ImageInfo info;
};

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Result {
  double images_per_s = 0, call_ms = 0, tail_ms = 0;
};

// `submitters` threads decode batches of `batch` images on the engines for `seconds` while
// `busy` threads decode the same files with libjpeg-turbo.
Result run_case(const std::vector<Image>& images, int batch, int submitters, int busy,
                double seconds) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> decoded{0};
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> call_us{0}, tail_us{0};
  std::vector<std::thread> threads;
  for (int b = 0; b < busy; ++b) {
    threads.emplace_back([&, b] {
      codecs::Decoder dec;
      std::vector<uint8_t> out;
      for (size_t k = size_t(b); !stop; k = (k + 1) % images.size()) {
        const auto& im = images[k];
        out.resize(size_t(im.info.height * im.info.width * 3));
        dec.decode(im.bytes.data(), im.bytes.size(), codecs::ColorFormat::kRGB, im.info, out.data(),
                   im.info.width * 3, {});
      }
    });
  }
  const auto t0 = Clock::now();
  for (int s = 0; s < submitters; ++s) {
    threads.emplace_back([&, s] {
      codecs::NvjpegHardwareDecoder hw(0);
      CudaStream stream(0);
      MemoryPool device(make_device_allocator(0));
      std::vector<codecs::NvjpegJob> jobs(static_cast<size_t>(batch));
      std::vector<std::shared_ptr<Buffer>> outs;
      for (int i = 0; i < batch; ++i) {
        const auto& im = images[size_t((s * batch + i) % int(images.size()))];
        outs.push_back(device.acquire(size_t(im.info.height * im.info.width * 3)));
        jobs[size_t(i)] = {static_cast<const uint8_t*>(im.pinned->data()),
                           im.bytes.size(),
                           0,
                           0,
                           im.info.height,
                           im.info.width,
                           static_cast<uint8_t*>(outs.back()->data()),
                           im.info.width * 3};
      }
      hw.decode(jobs, false, stream.get());  // warm-up
      stream.synchronize();
      while (since(t0) < seconds) {
        const auto a = Clock::now();
        hw.decode(jobs, false, stream.get());
        const auto b = Clock::now();
        stream.synchronize();
        call_us += int64_t(1e6 * std::chrono::duration<double>(b - a).count());
        tail_us += int64_t(1e6 * since(b));
        ++calls;
        decoded += batch;
      }
    });
  }
  for (size_t k = size_t(busy); k < threads.size(); ++k) threads[k].join();
  const double elapsed = since(t0);
  stop = true;
  for (int b = 0; b < busy; ++b) threads[size_t(b)].join();
  Result r;
  r.images_per_s = double(decoded) / elapsed;
  r.call_ms = calls ? double(call_us) / 1e3 / double(calls) : 0;
  r.tail_ms = calls ? double(tail_us) / 1e3 / double(calls) : 0;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OF_JPEGS [seconds]\n", argv[0]);
    return 2;
  }
  std::string why;
  if (!cuda_available() || !codecs::nvjpeg_hardware_available(0, &why)) {
    std::printf("no hardware JPEG decoder: %s\n", why.c_str());
    return 0;
  }
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(100));
    std::fprintf(stderr, "watchdog: no progress for 100 s, aborting (hang?)\n");
    std::abort();
  }).detach();
  std::vector<Image> images;
  codecs::Decoder dec;
  MemoryPool pinned(make_pinned_allocator());
  for (const auto& e : std::filesystem::recursive_directory_iterator(argv[1])) {
    if (e.path().extension() != ".jpg") continue;
    std::ifstream f(e.path(), std::ios::binary);
    Image im;
    im.bytes.assign(std::istreambuf_iterator<char>(f), {});
    im.info = dec.info(im.bytes.data(), im.bytes.size(), codecs::ColorFormat::kRGB, {});
    im.pinned = pinned.acquire(im.bytes.size());
    std::copy(im.bytes.begin(), im.bytes.end(), static_cast<uint8_t*>(im.pinned->data()));
    images.push_back(std::move(im));
  }
  double kb = 0;
  for (const auto& im : images) kb += double(im.bytes.size()) / 1e3;
  std::printf("nvJPEG hardware decoder, %zu JPEGs of %.0f KB on average, %.0f s per case\n",
              images.size(), kb / double(images.size()), seconds);
  std::printf(
      "| batch | submitting threads | libjpeg-turbo threads busy | images/s | call ms | "
      "engines after the call ms |\n|---:|---:|---:|---:|---:|---:|\n");
  for (int batch : {64, 256})
    for (int submitters : {1, 2})
      for (int busy : {0, 12}) {
        auto r = run_case(images, batch, submitters, busy, seconds);
        std::printf("| %d | %d | %d | %.0f | %.2f | %.2f |\n", batch, submitters, busy,
                    r.images_per_s, r.call_ms, r.tail_ms);
        std::fflush(stdout);
      }
  return 0;
}
