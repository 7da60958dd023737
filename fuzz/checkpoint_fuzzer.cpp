// libFuzzer target: a checkpoint (Checkpoint::parse, then each reader state through
// SampleLoader::restore_state, what resuming a pipeline runs) must restore or fail with a
// stoker::ValueError for any text. The reader states are tried against a sequential loader,
// a globally shuffled, sharded, padded one and a buffer-shuffled one, so each path sees them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stoker/core/error.hpp"
#include "stoker/pipeline/checkpoint.hpp"
#include "stoker/readers/sample_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stoker::readers::LoaderOptions;
  using stoker::readers::SampleLoader;
  try {
    const auto c =
        stoker::pipeline::Checkpoint::parse(std::string(reinterpret_cast<const char*>(data), size));
    LoaderOptions global, buffer;
    global.shuffle = stoker::readers::ShuffleMode::kGlobal;
    global.num_shards = 3;
    global.shard_id = 1;
    global.pad_last_batch = true;
    global.batch_size = 4;
    buffer.shuffle = stoker::readers::ShuffleMode::kBuffer;
    buffer.initial_fill = 16;
    for (const auto& [name, state] : c.ops) {
      for (const LoaderOptions& o : {LoaderOptions{}, global, buffer}) {
        try {
          SampleLoader loader(1000, o);
          loader.restore_state(state);
          for (int i = 0; i < 8; ++i) loader.next();  // a restored loader goes on
        } catch (const stoker::ValueError&) {
        }
      }
    }
  } catch (const stoker::ValueError&) {
  }
  return 0;
}
