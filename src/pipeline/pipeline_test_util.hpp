// What the pipeline's tests share: a folder of small JPEGs, the training pipeline they build
// and run, and a run's outputs as bytes.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "stoker/pipeline.hpp"
#include "stoker/testing/image_reference.hpp"
#include "stoker/testing/jpeg_encode.hpp"

namespace stoker::pipeline_testing {
namespace fs = std::filesystem;

// A folder of class sub-folders with small random JPEGs.
class JpegFolder {
 public:
  explicit JpegFolder(int per_class, int classes = 2) {
    root_ = fs::temp_directory_path() /
            ("stoker_pipe_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(root_);
    for (int c = 0; c < classes; ++c) {
      fs::create_directories(root_ / ("class" + std::to_string(c)));
      for (int i = 0; i < per_class; ++i) {
        int64_t h = 20 + 3 * i, w = 30 + 5 * c;
        auto px = testing::random_image_u8(h, w, 3, uint32_t(100 * c + i));
        auto jpeg = testing::encode_jpeg(px.data(), h, w, 3);
        std::ofstream f(
            root_ / ("class" + std::to_string(c)) / ("img" + std::to_string(i) + ".jpg"),
            std::ios::binary);
        f.write(reinterpret_cast<const char*>(jpeg.data()), std::streamsize(jpeg.size()));
      }
    }
  }
  ~JpegFolder() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
  static inline int counter_ = 0;
};

inline std::unique_ptr<Pipeline> train_pipeline(const std::string& root, int threads, int depth,
                                         int batch = 4) {
  PipelineBuilder b(
      {.batch_size = batch, .num_threads = threads, .seed = 1234, .prefetch_queue_depth = depth});
  auto r = b.add("readers.file", {}, {{"file_root", root}, {"random_shuffle", true}}, {},
                 {.name = "Reader"});
  auto img = b.add("decoders.image", {r[0]});
  auto crop = b.add("random_resized_crop", {img[0]}, {{"size", std::vector<int64_t>{16, 16}}});
  auto coin = b.add("random.coin_flip");
  auto out = b.add("crop_mirror_normalize", {crop[0]},
                   {{"mean", std::vector<double>{128}},
                    {"std", std::vector<double>{64}},
                    {"dtype", std::string("float16")}},
                   {{"mirror", coin[0]}});
  b.set_outputs({out[0], r[1]});
  return b.build();
}

inline std::vector<uint8_t> flatten(const std::vector<Batch>& outs) {
  std::vector<uint8_t> v;
  for (auto& b : outs)
    for (int i = 0; i < b.size(); ++i) {
      auto* p = static_cast<const uint8_t*>(b.data(i));
      v.insert(v.end(), p, p + b.sample(i).num_bytes());
    }
  return v;
}
}  // namespace stoker::pipeline_testing
