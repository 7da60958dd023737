// Pipeline checkpoints: the iteration counter (which keys every random stream) and the state
// of every stateful operator (readers), as text:
//
//   stoker-checkpoint v1
//   seed 42
//   iteration 17
//   op Reader v1 2 13 40 0
//
// A pipeline built from a checkpoint yields exactly the batches the original would have
// yielded after the last batch it delivered. External sources are not covered: their data
// comes from Python and is the caller's to resume.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stoker::pipeline {

struct Checkpoint {
  uint64_t seed = 0;
  int64_t iteration = 0;
  std::vector<std::pair<std::string, std::string>> ops;  // operator name -> state

  std::string to_text() const;
  // Throws ValueError naming the line when the text is not a checkpoint.
  static Checkpoint parse(const std::string& text);
};

}  // namespace stoker::pipeline
