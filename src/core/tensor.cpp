#include "stoker/core/tensor.hpp"

#include <algorithm>

#include "stoker/core/batch.hpp"

namespace stoker {

Tensor Tensor::allocate(MemoryPool& pool, DType dtype, TensorShape shape, TensorLayout layout) {
  STOKER_ENFORCE(shape.volume() >= 0, ValueError, "negative extent in shape ", shape.to_string());
  auto buf = pool.acquire(size_t(shape.bytes(dtype_size(dtype))));
  TensorView v{buf->data(), std::move(shape), dtype, std::move(layout), pool.kind()};
  return Tensor(std::move(buf), std::move(v));
}

Batch Batch::allocate(MemoryPool& pool, DType dtype, std::vector<TensorShape> shapes,
                      TensorLayout layout) {
  return allocate_impl(pool, nullptr, dtype, std::move(shapes), std::move(layout));
}

Batch Batch::allocate_on(StreamHandle stream, MemoryPool& pool, DType dtype,
                         std::vector<TensorShape> shapes, TensorLayout layout) {
  return allocate_impl(pool, &stream, dtype, std::move(shapes), std::move(layout));
}

Batch Batch::allocate_impl(MemoryPool& pool, const StreamHandle* stream, DType dtype,
                           std::vector<TensorShape> shapes, TensorLayout layout) {
  Batch b = with_samples(int(shapes.size()), dtype, std::move(layout), pool.kind());
  size_t esize = dtype_size(dtype);
  size_t total = 0;
  for (auto& s : shapes) {
    STOKER_ENFORCE(s.volume() >= 0, ValueError, "negative extent in shape ", s.to_string());
    STOKER_ENFORCE(!__builtin_add_overflow(total, size_t(s.bytes(esize)), &total), ValueError,
                   "a batch of ", shapes.size(), " samples would have more bytes than 2^64 - 1");
  }
  auto buf = stream ? pool.acquire_on(total, *stream) : pool.acquire(total);
  auto* p = static_cast<uint8_t*>(buf->data());
  for (size_t i = 0; i < shapes.size(); ++i) {
    size_t bytes = size_t(shapes[i].bytes(esize));
    b.samples_[i] = Sample{buf, p, std::move(shapes[i]), {}};
    p += bytes;
  }
  return b;
}

Batch Batch::with_samples(int n, DType dtype, TensorLayout layout, MemoryKind memory) {
  Batch b;
  b.samples_.resize(size_t(n));
  b.dtype_ = dtype;
  b.layout_ = std::move(layout);
  b.memory_ = memory;
  return b;
}

TensorView Batch::sample(int i) const {
  const auto& s = samples_.at(size_t(i));
  return TensorView{s.data, s.shape, dtype_, layout_, memory_};
}

BatchView Batch::view() const {
  BatchView v{{}, dtype_, layout_};
  v.samples.reserve(samples_.size());
  for (int i = 0; i < size(); ++i) v.samples.push_back(sample(i));
  return v;
}

Tensor Batch::sample_tensor(int i) const { return Tensor(owner(i), sample(i)); }

void Batch::set_sample(int i, std::shared_ptr<Buffer> owner, void* data, TensorShape shape) {
  auto& s = samples_.at(size_t(i));
  s.owner = std::move(owner);
  s.data = data;
  s.shape = std::move(shape);
}

std::vector<TensorShape> Batch::shapes() const {
  std::vector<TensorShape> out;
  out.reserve(samples_.size());
  for (const auto& s : samples_) out.push_back(s.shape);
  return out;
}

bool Batch::is_uniform() const {
  for (size_t i = 1; i < samples_.size(); ++i) {
    if (!(samples_[i].shape == samples_[0].shape)) return false;
  }
  return true;
}

bool Batch::is_contiguous() const {
  size_t esize = dtype_size(dtype_);
  for (size_t i = 1; i < samples_.size(); ++i) {
    const auto& prev = samples_[i - 1];
    auto* end = static_cast<uint8_t*>(prev.data) + size_t(prev.shape.volume()) * esize;
    if (samples_[i].owner != prev.owner || samples_[i].data != end) return false;
  }
  return true;
}

size_t Batch::total_bytes() const {
  size_t n = 0;
  for (auto& s : samples_) n += size_t(s.shape.volume()) * dtype_size(dtype_);
  return n;
}

Batch Batch::select(const std::vector<int>& keep) const {
  Batch b = with_samples(0, dtype_, layout_, memory_);
  b.ready_ = ready_;
  for (int i : keep) b.samples_.push_back(samples_.at(size_t(i)));
  return b;
}

void Batch::append(const Batch& other) {
  STOKER_ENFORCE(other.dtype_ == dtype_, TypeError, "cannot append a ", dtype_name(other.dtype_),
                 " batch to a ", dtype_name(dtype_), " batch");
  samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
}

void Batch::record_stream(StreamHandle stream) const {
  const Buffer* last = nullptr;
  for (const auto& s : samples_) {
    if (s.owner && s.owner.get() != last) s.owner->record_stream(stream);
    last = s.owner.get();
  }
}

void Batch::record_use(StreamHandle stream) const {
  if (std::none_of(samples_.begin(), samples_.end(), [](const auto& s) { return bool(s.owner); }))
    return;
  auto done = std::make_shared<CudaEvent>();
  done->record(stream);
  const Buffer* last = nullptr;
  for (const auto& s : samples_) {
    if (s.owner && s.owner.get() != last) s.owner->record_use(done);
    last = s.owner.get();
  }
}

void Batch::copy_source_info(const Batch& other) {
  for (int i = 0; i < size() && i < other.size(); ++i)
    samples_[size_t(i)].source_info = other.source_info(i);
}

}  // namespace stoker
