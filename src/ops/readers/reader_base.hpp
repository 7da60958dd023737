// Readers: one operator, ReaderOperator, runs every format. It owns what all readers share —
// the loader arguments (sharding, shuffling, padding, lazy_init), the SampleLoader, reader
// metadata, checkpoint state and the read-ahead — and a ReaderSource that knows one format:
// how to index the dataset and how to load one sample.
//
// Read-ahead: samples are loaded on the reader's own I/O threads (`num_io_threads`), up to
// `prefetch_queue_depth` batches ahead of the batch being produced, in the loader's order,
// in groups of consecutive samples (whose ranges are fetched together).
// run() only moves loaded samples into the outputs, so file reads, page faults and container
// parsing stay off the compute threads. The loader therefore runs ahead of what was
// delivered; a second loader that follows the delivered samples gives the checkpoint state.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/readers/data_file.hpp"
#include "stoker/readers/prefetcher.hpp"
#include "stoker/readers/sample_loader.hpp"

namespace stoker::ops {

// The loader's arguments, appended to every reader's schema.
std::vector<ArgSchema> loader_arg_schemas();

// One container format.
//
// Formats whose samples are byte ranges of container files (TFRecord, RecordIO, tar) list
// them with ranges() and build outputs from their bytes with parse(): the reader then fetches
// the ranges of a group of consecutive samples together (readers::read_ranges: one large read
// for consecutive records). Others (a file per sample, LMDB) implement load() instead.
class ReaderSource {
 public:
  virtual ~ReaderSource() = default;
  // Builds the dataset index and returns its size (> 0). Called once, under a lock, at build
  // or (lazy_init) at first use, before any other call.
  virtual int64_t build_index() = 0;
  // The dtype of each output (after build_index).
  virtual std::vector<DType> output_dtypes() const = 0;
  // DALI's dataset-order conventions for this format (see readers::SampleLoader): whether
  // random_shuffle also permutes the list once (file lists), and the first sample of each
  // container file, in index order (shuffle_after_epoch then shuffles files).
  virtual bool preshuffles() const { return false; }
  virtual std::vector<int64_t> file_starts() const { return {}; }
  // The layout of output k ("" when none).
  virtual TensorLayout output_layout(size_t /*k*/) const { return {}; }
  // Where sample `index` comes from (path, record, offset), for errors and Batch::source_info.
  virtual std::string source_info(int64_t index) const = 0;

  // The methods below are called concurrently from the I/O threads: they must only read the
  // index. Errors are thrown; the pipeline adds the sample and its source.

  // Appends the byte ranges sample `index` needs; false when the format does not read ranges.
  virtual bool ranges(int64_t /*index*/, std::vector<readers::FileRange>& /*out*/) const {
    return false;
  }
  // Fills sample.outputs from the bytes of its ranges (in the order ranges() gave them).
  virtual void parse(readers::LoadedSample& /*sample*/,
                     std::span<const readers::FileBytes> /*bytes*/, MemoryPool& /*pool*/) const {}
  // Fills sample.outputs (one per output) for sample.index. By default: reads its ranges
  // and parses them.
  virtual void load(readers::LoadedSample& sample, MemoryPool& pool) const;

  // Called once before the first load, on the thread that runs the reader, with its workspace:
  // a gpu reader (its schema's make_gpu) takes its device here and loads its outputs into
  // device memory (load()'s pool is then ws.device_pool). Default: nothing.
  virtual void start(const Workspace& /*ws*/) {}

  // Called on a compute thread when the loaded sample becomes sample i of an iteration, where
  // per-sample arguments are known (readers.numpy's region of interest). Default: nothing.
  virtual void finish(readers::LoadedSample& /*sample*/, const Operator& /*op*/,
                      const Workspace& /*ws*/, int /*i*/) const {}
};

class ReaderOperator final : public Operator {
 public:
  ReaderOperator(const OpSpec& spec, std::unique_ptr<ReaderSource> source);
  ~ReaderOperator() override;  // stops the I/O threads before the source goes

  void run(Workspace& ws) override;
  // Called from the consumer's thread while the producer runs: uses only the index size and
  // the options, never the loader the producer advances.
  std::optional<ReaderMeta> reader_meta() const override;
  std::optional<std::string> save_state() const override;  // producer thread only
  void restore_state(const std::string& state) override;

 private:
  int64_t dataset_size() const;
  // options_ with the index's file_starts (call dataset_size() first).
  readers::LoaderOptions loader_options() const;
  void start(const Workspace& ws);
  // Loads a group of consecutive draws (I/O threads).
  void load_group(std::span<readers::LoadedSample> group, MemoryPool& pool) const;

  mutable std::mutex index_mutex_;
  mutable int64_t size_ = -1;
  mutable std::vector<int64_t> file_starts_;
  readers::LoaderOptions options_;
  std::unique_ptr<ReaderSource> source_;
  std::vector<DType> dtypes_;
  int io_threads_ = 1;
  int depth_batches_ = 1;
  // The loader the I/O threads draw from (ahead), and the one that follows what run()
  // delivered (the checkpoint state).
  std::optional<readers::SampleLoader> ahead_;
  std::optional<readers::SampleLoader> delivered_;
  std::string pending_state_;
  std::unique_ptr<readers::Prefetcher> prefetcher_;
};

// The file access options of the reader arguments dont_use_mmap and read_ahead.
readers::FileOptions file_options(const OpSpec& spec);

// make_cpu for a reader whose source is constructed from the spec.
template <typename Source>
std::unique_ptr<Operator> make_reader(const OpSpec& spec) {
  return std::make_unique<ReaderOperator>(spec, std::make_unique<Source>(spec));
}

}  // namespace stoker::ops
