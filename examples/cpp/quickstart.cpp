// Example: the training pipeline from C++ through stoker's public API.
//   stoker_example_quickstart /data/imagenet/train [iterations]
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "stoker/pipeline.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s IMAGE_FOLDER [ITERATIONS]\n", argv[0]);
    return 2;
  }
  if (!std::filesystem::is_directory(argv[1])) {
    std::printf("no folder %s: skipped\n", argv[1]);
    return 77;
  }
  int iterations = argc > 2 ? std::atoi(argv[2]) : 3;
  try {
    stoker::PipelineBuilder b({.batch_size = 8, .num_threads = 2, .seed = 42});
    auto read =
        b.add("readers.file", {}, {{"file_root", std::string(argv[1])}, {"random_shuffle", true}},
              {}, {.name = "Reader"});
    auto img = b.add("decoders.image", {read[0]});
    auto crop = b.add("random_resized_crop", {img[0]}, {{"size", std::vector<int64_t>{224, 224}}});
    auto flip = b.add("random.coin_flip");
    auto out = b.add("crop_mirror_normalize", {crop[0]},
                     {{"mean", std::vector<double>{123.675, 116.28, 103.53}},
                      {"std", std::vector<double>{58.395, 57.12, 57.375}},
                      {"dtype", std::string("float16")}},
                     {{"mirror", flip[0]}});
    b.set_outputs({out[0], read[1]});
    auto pipe = b.build();
    std::printf("%lld images\n", static_cast<long long>(pipe->reader_meta("Reader").epoch_size));
    for (int it = 0; it < iterations; ++it) {
      auto batch = pipe->run();
      const stoker::Batch& images = batch[0];
      std::printf("batch %d: %d samples of %s %s, first label %d (%s)\n", it, images.size(),
                  images.shape(0).to_string().c_str(),
                  std::string(stoker::dtype_name(images.dtype())).c_str(),
                  batch[1].data_as<int32_t>(0)[0], images.source_info(0).c_str());
    }
  } catch (const stoker::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
