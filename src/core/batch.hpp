// Batch: an owning list of samples of one dtype and layout, each with its own shape (ragged).
// Samples are stored contiguously in one buffer when the batch is allocated here; samples
// adopted from elsewhere keep their own buffers. A uniform batch is a special case, not a
// second code path. Every sample carries `source_info` (file, record) for error messages.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "stoker/core/tensor.hpp"

namespace stoker {

// A non-owning view of a batch: one TensorView per sample (what kernels take).
struct BatchView {
  std::vector<TensorView> samples;
  DType dtype = DType::kU8;
  TensorLayout layout;
  int size() const { return int(samples.size()); }
  const TensorView& operator[](int i) const { return samples[size_t(i)]; }
};

class Batch {
 public:
  Batch() = default;
  // Allocates all samples contiguously (in order) in one buffer from `pool`.
  static Batch allocate(MemoryPool& pool, DType dtype, std::vector<TensorShape> shapes,
                        TensorLayout layout = {});
  // The same for work on `stream`: a recycled block is made safe for that stream on the
  // device (MemoryPool::acquire_on), not by blocking the host.
  static Batch allocate_on(StreamHandle stream, MemoryPool& pool, DType dtype,
                           std::vector<TensorShape> shapes, TensorLayout layout = {});
  // An empty batch of `n` samples to be filled with set_sample().
  static Batch with_samples(int n, DType dtype, TensorLayout layout = {},
                            MemoryKind memory = MemoryKind::kHost);

  int size() const { return int(samples_.size()); }
  DType dtype() const { return dtype_; }
  const TensorLayout& layout() const { return layout_; }
  void set_layout(TensorLayout l) { layout_ = std::move(l); }
  MemoryKind memory() const { return memory_; }

  const TensorShape& shape(int i) const { return samples_.at(size_t(i)).shape; }
  // Every sample's shape (e.g. for an output shaped like this batch).
  std::vector<TensorShape> shapes() const;
  void* data(int i) const { return samples_.at(size_t(i)).data; }
  template <typename T>
  T* data_as(int i) const {
    return sample(i).template as<T>();
  }
  TensorView sample(int i) const;
  // Views of every sample; valid while this batch (or its buffers) lives.
  BatchView view() const;
  // A Tensor that shares ownership of sample i's memory.
  Tensor sample_tensor(int i) const;
  const std::shared_ptr<Buffer>& owner(int i) const { return samples_.at(size_t(i)).owner; }
  // Points sample i at memory kept alive by `owner`.
  void set_sample(int i, std::shared_ptr<Buffer> owner, void* data, TensorShape shape);

  // All samples have the same shape (true for an empty batch).
  bool is_uniform() const;
  // All samples lie back to back, in order, in one buffer.
  bool is_contiguous() const;
  // Number of sample dimensions (all samples have the same), or -1 for an empty batch.
  int sample_ndim() const { return samples_.empty() ? -1 : samples_[0].shape.ndim(); }
  size_t total_bytes() const;

  const std::string& source_info(int i) const { return samples_.at(size_t(i)).source_info; }
  void set_source_info(int i, std::string info) {
    samples_.at(size_t(i)).source_info = std::move(info);
  }
  // A batch of the samples `keep` (in that order), sharing their memory.
  Batch select(const std::vector<int>& keep) const;
  // Appends the samples of `other` (same dtype), sharing their memory.
  void append(const Batch& other);
  // Copies source_info from `other` (same size), as operators do from their first input.
  void copy_source_info(const Batch& other);

  // Device batches: the event after which the samples' contents are complete (null: ready
  // now). Consumers make their stream wait on it before reading.
  const std::shared_ptr<CudaEvent>& ready_event() const { return ready_; }
  void set_ready_event(std::shared_ptr<CudaEvent> e) { ready_ = std::move(e); }
  // Marks every sample buffer as used by work on `stream` (Buffer::record_stream).
  void record_stream(StreamHandle stream) const;
  // Marks every sample buffer as used by the work queued on `stream` so far and by nothing
  // queued later: one event recorded now guards them all (Buffer::record_use). For batches of
  // many buffers (a reader's samples) whose last GPU use is already queued.
  void record_use(StreamHandle stream) const;

 private:
  static Batch allocate_impl(MemoryPool& pool, const StreamHandle* stream, DType dtype,
                             std::vector<TensorShape> shapes, TensorLayout layout);
  struct Sample {
    std::shared_ptr<Buffer> owner;
    void* data = nullptr;
    TensorShape shape;
    std::string source_info;
  };
  std::vector<Sample> samples_;
  DType dtype_ = DType::kU8;
  TensorLayout layout_;
  MemoryKind memory_ = MemoryKind::kHost;
  std::shared_ptr<CudaEvent> ready_;
};

}  // namespace stoker
