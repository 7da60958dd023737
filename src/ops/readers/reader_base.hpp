// ReaderOperator: what every reader shares — the loader arguments (sharding, shuffling,
// padding, lazy_init), the SampleLoader, reader metadata and checkpoint state. A format only
// builds its index (the number of samples) and reads the samples a batch picked.
#pragma once

#include <mutex>
#include <optional>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/readers/sample_loader.hpp"

namespace stoker::ops {

// The loader's arguments, appended to every reader's schema.
std::vector<ArgSchema> loader_arg_schemas();

class ReaderOperator : public Operator {
 public:
  explicit ReaderOperator(const OpSpec& spec);

  // Called from the consumer's thread while the producer runs: uses only the index size and
  // the options, never the loader the producer advances.
  std::optional<ReaderMeta> reader_meta() const override;
  std::optional<std::string> save_state() const override;  // producer thread only
  void restore_state(const std::string& state) override;

 protected:
  // Builds the dataset index and returns its size (> 0). Called once, under a lock, at
  // construction or (lazy_init) at first use.
  virtual int64_t build_index() = 0;
  // Call at the end of a derived constructor: builds the index unless lazy_init.
  void init();
  // The dataset indices of this iteration's `ws.batch_size` samples.
  std::vector<int64_t> next_indices(const Workspace& ws);
  int64_t dataset_size() const;

 private:
  mutable std::mutex index_mutex_;
  int64_t size_ = -1;
  readers::LoaderOptions options_;
  std::optional<readers::SampleLoader> loader_;  // the producer's
  std::string pending_state_;
};

}  // namespace stoker::ops
