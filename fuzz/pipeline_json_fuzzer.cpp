// libFuzzer target: a serialized pipeline (Pipeline::from_json, what examples/cpp runs) must
// build, or fail with a stoker::Error that says what is wrong, for any input: never another
// exception (a JSON library's type error), a crash or a hang. Its arithmetic expressions are
// parsed too. The options are kept small (one thread, batches of at most 16, no GPU) so that
// a document asking for a million threads tests the parser, not the machine; documents naming
// absolute paths or ".." are skipped, and the rest run in an empty folder, so a reader given a
// fuzzed path finds nothing rather than indexing the disk.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "stoker/core/error.hpp"
#include "stoker/pipeline.hpp"

namespace {
// Runs the input in an empty folder and returns to the caller's afterwards (the replay opens
// the next corpus file by its relative path).
class InEmptyFolder {
 public:
  InEmptyFolder() {
    static const std::string dir = [] {
      char d[] = "/tmp/stoker-fuzz-XXXXXX";
      return std::string(mkdtemp(d) ? d : "/nonexistent-stoker-fuzz");
    }();
    if (getcwd(saved_, sizeof(saved_)) == nullptr || chdir(dir.c_str()) != 0) std::abort();
  }
  ~InEmptyFolder() {
    if (chdir(saved_) != 0) std::abort();
  }

 private:
  char saved_[4096] = {};
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find("\"/") != std::string::npos || text.find("..") != std::string::npos) return 0;
  InEmptyFolder folder;  // left after the pipeline (declared in the try below) is gone
  try {
    auto pipe = stoker::Pipeline::from_json(text, [](stoker::PipelineOptions& o) {
      o.num_threads = std::clamp(o.num_threads, -1, 2);
      o.batch_size = std::min(o.batch_size, 16);
      o.prefetch_queue_depth = std::min(o.prefetch_queue_depth, 2);
      o.gpu_queue_depth = std::min(o.gpu_queue_depth, 2);
      o.device_id.reset();
      o.trace.clear();
    });
    pipe->run();  // one batch: the operators' own argument checks run too
  } catch (const stoker::Error&) {
  }
  return 0;
}
