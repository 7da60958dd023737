// Executor: runs a validated graph of CPU operators. A producer thread runs iterations in
// order (operators in graph order, samples in parallel on the thread pool) and keeps up to
// `prefetch_queue_depth` finished batches ahead of the consumer.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stoker/ops/operator.hpp"
#include "stoker/pipeline/checkpoint.hpp"
#include "stoker/pipeline/graph.hpp"

namespace stoker::pipeline {

struct ExecutorOptions {
  int batch_size = 1;
  int num_threads = 1;
  int prefetch_queue_depth = 2;
  uint64_t seed = 0;
  size_t host_memory_budget = 0;
  std::string checkpoint;         // resume from this state (empty: start fresh)
  bool skip_bad_samples = false;  // on_error="skip"
};

struct ErrorStats {
  int64_t skipped = 0;              // samples replaced since the start
  std::vector<std::string> recent;  // the last few incidents (operator, sample, source, error)
};

class Executor {
 public:
  Executor(Graph graph, const ExecutorOptions& options);
  ~Executor();

  // Blocks for the next iteration's outputs. Throws EndOfData at the end of an external
  // source's epoch, or the failed iteration's error (with operator context).
  std::vector<Batch> pop();

  const Graph& graph() const { return graph_; }
  ops::Operator& op(int node) { return *ops_[size_t(node)]; }
  const ops::Operator& op(int node) const { return *ops_[size_t(node)]; }
  PoolStats host_stats() const { return host_pool_.stats(); }
  // The state after the last batch pop() returned (before the first: the starting state).
  Checkpoint checkpoint() const;
  ErrorStats error_stats() const;
  // Incidents since the last call (for warnings in Python).
  std::vector<std::string> take_incidents();

 private:
  struct Result {
    Checkpoint after;  // the state once this iteration was produced
    std::vector<Batch> outputs;
    bool end_of_data = false;
    std::exception_ptr error;
  };
  void producer_loop();
  Result run_iteration();
  // Runs nodes [0, count) for `batch` samples (replacement round `round`). With
  // skip_bad_samples, samples that fail with a data error are replaced by running the nodes
  // before and including the failing one again (recursively) for as many new samples.
  std::vector<std::vector<Batch>> run_nodes(size_t count, int batch, uint32_t& round,
                                            int64_t& replaced);
  void record_skips(const ops::OpSpec& spec, const std::map<int, std::string>& failed);
  Checkpoint snapshot() const;  // producer thread only (or before it starts)
  void restore(const std::string& text);

  Graph graph_;
  ExecutorOptions options_;
  std::vector<std::unique_ptr<ops::Operator>> ops_;
  MemoryPool host_pool_;
  ThreadPool thread_pool_;
  int64_t iteration_ = 0;

  static constexpr int kMaxSkipsPerBatch = 4;  // give up beyond 4 x batch_size replacements
  static constexpr size_t kRecentIncidents = 20;
  mutable std::mutex mutex_;
  Checkpoint delivered_;
  int64_t skipped_ = 0;
  std::vector<std::string> recent_, incidents_;
  std::condition_variable changed_;
  std::deque<Result> queue_;
  bool started_ = false;
  bool stop_ = false;
  bool failed_ = false;  // the producer stopped after an error
  std::string failure_;
  std::thread producer_;
};

}  // namespace stoker::pipeline
