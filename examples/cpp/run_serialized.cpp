// Example: a pipeline defined and saved in Python (pipe.serialize("pipe.json")), run from C++
// without Python.
//   stoker_example_run_serialized pipe.json [iterations]
// Prints each output of each batch: samples, the first sample's shape, the element type and a
// checksum of the bytes (python/tests/test_serialize.py compares it with Python's batches).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "stoker/pipeline.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PIPELINE.json [ITERATIONS]\n", argv[0]);
    return 2;
  }
  std::ifstream f(argv[1]);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream text;
  text << f.rdbuf();
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 3;
  try {
    auto pipe = stoker::Pipeline::from_json(text.str());
    for (int it = 0; it < iterations; ++it) {
      auto outputs = pipe->run();
      for (size_t k = 0; k < outputs.size(); ++k) {
        const stoker::Batch& b = outputs[k];
        // Sums of the bytes and of byte x position (mod 2^64), over the samples in order.
        uint64_t sum = 0, weighted = 0, position = 0;
        for (int i = 0; i < b.size(); ++i) {
          const auto* p = static_cast<const uint8_t*>(b.data(i));
          for (size_t j = 0; j < b.sample(i).num_bytes(); ++j, ++position) {
            sum += p[j];
            weighted += uint64_t(p[j]) * position;
          }
        }
        std::printf(
            "batch %d output %zu: %d samples, %s %s, checksum %llu %llu\n", it, k, b.size(),
            b.shape(0).to_string().c_str(), std::string(stoker::dtype_name(b.dtype())).c_str(),
            static_cast<unsigned long long>(sum), static_cast<unsigned long long>(weighted));
      }
    }
  } catch (const stoker::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
