#include "stoker/ops/io/dump_image.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "stoker/ops/operator.hpp"

namespace stoker::ops {

std::string netpbm_ascii(const uint8_t* p, int64_t h, int64_t w, int64_t c) {
  std::string s = std::string(c == 1 ? "P2" : "P3") + "\n" + std::to_string(w) + " " +
                  std::to_string(h) + "\n255\n";
  s.reserve(s.size() + size_t(h * w * c) * 4 + size_t(h));
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t k = 0; k < w * c; ++k) {
      s += std::to_string(int(*p++));
      s += ' ';
    }
    s += '\n';
  }
  return s;
}

namespace {

constexpr const char* kOp = "dump_image";

class DumpImage : public Operator {
 public:
  explicit DumpImage(const OpSpec& spec)
      : Operator(spec), suffix_(spec.arg<std::string>("suffix")) {
    const auto layout = spec.arg<std::string>("input_layout");
    STOKER_ENFORCE(layout == "HWC", ValueError, kOp,
                   ": input_layout must be 'HWC' (DALI's dump_image writes HWC images only), "
                   "got '",
                   layout, "'");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
    check(in);
    for_each_sample(ws, in.size(), [&](int i, int) {
      write(i, in.data_as<const uint8_t>(i), in.shape(i));
      std::memcpy(out.data(i), in.data(i), in.sample(i).num_bytes());
    });
  }

 protected:
  // DALI's checks, for the whole batch before anything is written.
  static void check(const Batch& in) {
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, kOp, ": expected uint8 images, got ",
                   dtype_name(in.dtype()));
    for (int i = 0; i < in.size(); ++i) {
      const TensorShape& s = in.shape(i);
      STOKER_ENFORCE(s.ndim() == 3, ValueError, kOp, ": sample ", i,
                     " must be an HWC image (3 dimensions), got shape ", s.to_string());
      STOKER_ENFORCE(s[2] == 1 || s[2] == 3, ValueError, kOp, ": sample ", i, " has ", s[2],
                     " channels; only grey (1) and colour (3) images are written");
      STOKER_ENFORCE(s.volume() > 0, ValueError, kOp, ": sample ", i, " is an empty image (shape ",
                     s.to_string(), "): nothing to write");
    }
  }

  // "<sample>-<suffix>-0.ppm", as DALI names them (the trailing 0: its output index), in the
  // working folder; each iteration overwrites the last one's files.
  void write(int i, const uint8_t* data, const TensorShape& s) const {
    const std::string name = std::to_string(i) + "-" + suffix_ + "-0.ppm";
    const std::string text = netpbm_ascii(data, s[0], s[1], s[2]);
    std::ofstream f(name, std::ios::binary | std::ios::trunc);
    STOKER_ENFORCE(f.is_open(), IOError, kOp, ": cannot write '", name,
                   "': ", std::strerror(errno));
    f.write(text.data(), std::streamsize(text.size()));
    STOKER_ENFORCE(f.good(), IOError, kOp, ": writing '", name, "' failed");
  }

  std::string suffix_;
};

#ifdef STOKER_HAVE_CUDA
// The images come to the host (waiting for the stream, as DALI's does) to be written; the
// output is a device copy of the input.
class DumpImageGpu final : public DumpImage {
 public:
  using DumpImage::DumpImage;

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch& out = add_output(ws, in.dtype(), in.shapes(), in.layout());
    check(in);
    const int n = in.size();
    std::vector<std::vector<uint8_t>> host(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      host[size_t(i)].resize(in.sample(i).num_bytes());
      copy_to_host_async(host[size_t(i)].data(), in.data(i), host[size_t(i)].size(), ws.stream);
      copy_device_async(out.data(i), in.data(i), host[size_t(i)].size(), ws.stream);
    }
    synchronize_stream(ws.stream);
    for_each_sample(ws, n, [&](int i, int) { write(i, host[size_t(i)].data(), in.shape(i)); });
  }
};
#endif

}  // namespace

OpSchema dump_image_schema() {
  return {
      .name = "dump_image",
      .doc =
          "Writes each image of the batch (HWC uint8, 1 or 3 channels) to the working folder as "
          "an ASCII Netpbm file named '<sample>-<suffix>-0.ppm' (P3 for colour, P2 for grey, as "
          "DALI writes them; every iteration overwrites the files of the last) and passes the "
          "batch on unchanged. For debugging.",
      .inputs = {"data"},
      .outputs = {"data"},
      .args = {{"suffix", ArgType::kString, "Put into the file names: '<sample>-<suffix>-0.ppm'.",
                std::string()},
               {"input_layout", ArgType::kString, "The images' layout: only 'HWC' is supported.",
                std::string("HWC")}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<DumpImage>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<DumpImageGpu>(s); },
#endif
      .example = OpExample{},
  };
}

}  // namespace stoker::ops
