#include "stoker/ops/decoders/inflate.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "stoker/kernels/compression/lz4_inflate.hpp"
#include "stoker/ops/arg_limits.hpp"
#include "stoker/ops/operator.hpp"

#ifdef STOKER_HAVE_CUDA
#include "stoker/kernels/memory/fill_gpu.hpp"
#endif

namespace stoker::ops {
namespace {

constexpr const char* kOp = "decoders.inflate";

// One compressed chunk: bytes [offset, offset + size) of its sample's input, inflated into
// output chunk `index` of that sample.
struct Chunk {
  int sample = 0;
  int64_t index = 0;
  int64_t offset = 0;
  int64_t size = 0;
};

struct Plan {
  std::vector<TensorShape> shapes;  // per output sample
  std::vector<size_t> chunk_bytes;  // per sample: the bytes of one inflated chunk
  std::vector<Chunk> chunks;
  TensorLayout layout;
};

class Inflate : public Operator {
 public:
  explicit Inflate(const OpSpec& spec)
      : Operator(spec),
        dtype_(dtype_from_name(spec.arg<std::string>("dtype"))),
        layout_(spec.arg<std::string>("layout")),
        axis_(spec.arg<std::string>("sequence_axis_name")),
        chunked_(spec.given("chunk_offsets") || spec.given("chunk_sizes")) {
    auto alg = spec.arg<std::string>("algorithm");
    std::transform(alg.begin(), alg.end(), alg.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    STOKER_ENFORCE(alg == "lz4", ValueError, kOp, ": unknown algorithm '",
                   spec.arg<std::string>("algorithm"), "' (LZ4 is the only one)");
    STOKER_ENFORCE(axis_.size() == 1, ValueError, kOp,
                   ": sequence_axis_name must be a single character, got '", axis_, "'");
  }

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Plan plan = make_plan(ws, in);
    Batch& out = add_output(ws, dtype_, plan.shapes, plan.layout);
    std::vector<std::vector<const Chunk*>> by_sample(static_cast<size_t>(in.size()));
    for (const Chunk& c : plan.chunks) by_sample[size_t(c.sample)].push_back(&c);
    for_each_sample(ws, in.size(), [&](int i, int) {
      for (const Chunk* c : by_sample[size_t(i)])
        inflate_chunk(*c, in.data_as<const uint8_t>(i), static_cast<uint8_t*>(out.data(i)),
                      plan.chunk_bytes[size_t(i)]);
    });
  }

 protected:
  // DALI's checks and shapes (its inflate_params.h), for the whole batch.
  Plan make_plan(const Workspace& ws, const Batch& in) const {
    const int n = in.size();
    STOKER_ENFORCE(in.dtype() == DType::kU8, TypeError, kOp,
                   ": the input must be compressed bytes, a 1-D uint8 tensor per sample; got ",
                   dtype_name(in.dtype()));
    Plan p;
    size_t ndim = 0;
    for (int i = 0; i < n; ++i) {
      STOKER_ENFORCE(in.shape(i).ndim() == 1, ValueError, kOp,
                     ": the input must be a 1-D uint8 tensor per sample; sample ", i, " has shape ",
                     in.shape(i).to_string());
      const int64_t bytes = in.shape(i).volume();
      STOKER_ENFORCE(bytes > 0, ValueError, kOp, ": sample ", i, " is empty (0 bytes)");
      std::vector<int64_t> shape;
      for (double v : list_arg(ws, "shape", i)) {
        STOKER_ENFORCE(v >= 0, ValueError, kOp, ": the shape of sample ", i,
                       " has a negative extent (", int64_t(v), ")");
        shape.push_back(int64_t(std::min(v, double(INT64_MAX / 2))));  // larger: refused below
      }
      check_arg_elements(kOp, "shape", shape, i);
      if (i == 0) ndim = shape.size();
      STOKER_ENFORCE(shape.size() == ndim, ValueError, kOp, ": the shape of sample ", i, " has ",
                     shape.size(), " extents but that of sample 0 has ", ndim,
                     " (all samples have the same number)");
      TensorShape chunk(shape);
      p.chunk_bytes.push_back(size_t(chunk.volume()) * dtype_size(dtype_));
      const int64_t count = chunks_of(ws, i, bytes, p.chunks);
      if (chunked_) shape.insert(shape.begin(), count);
      p.shapes.emplace_back(shape);
    }
    if (!layout_.empty()) {
      STOKER_ENFORCE(n == 0 || layout_.size() == ndim, ValueError, kOp, ": the layout '", layout_,
                     "' has ", layout_.size(), " dimensions but the shape has ", ndim);
      p.layout = TensorLayout(chunked_ ? axis_ + layout_ : layout_);
    }
    return p;
  }

  // Appends sample i's chunks (from chunk_offsets and/or chunk_sizes, the one missing inferred
  // as densely packed; the whole sample without either) and returns their number.
  int64_t chunks_of(const Workspace& ws, int i, int64_t bytes, std::vector<Chunk>& out) const {
    if (!chunked_) {
      out.push_back({i, 0, 0, bytes});
      return 1;
    }
    const bool has_off = spec_.given("chunk_offsets"), has_size = spec_.given("chunk_sizes");
    std::vector<int64_t> off, size;
    if (has_off)
      for (double v : list_arg(ws, "chunk_offsets", i)) {
        off.push_back(int64_t(v));
        STOKER_ENFORCE(v >= 0, ValueError, kOp, ": chunk offsets must not be negative; sample ", i,
                       " has ", off.back());
        STOKER_ENFORCE(off.back() < bytes, ValueError, kOp, ": chunk offset ", off.back(),
                       " of sample ", i, " is past its last byte (the sample has ", bytes,
                       " bytes)");
      }
    if (has_size)
      for (double v : list_arg(ws, "chunk_sizes", i)) {
        size.push_back(int64_t(v));
        STOKER_ENFORCE(v > 0, ValueError, kOp, ": chunk sizes must be positive; sample ", i,
                       " has ", size.back());
        STOKER_ENFORCE(size.back() <= bytes, ValueError, kOp, ": chunk size ", size.back(),
                       " of sample ", i, " exceeds the sample's ", bytes, " bytes");
      }
    if (has_off && has_size) {
      STOKER_ENFORCE(off.size() == size.size(), ValueError, kOp, ": sample ", i, " has ",
                     off.size(), " chunk_offsets but ", size.size(), " chunk_sizes");
      for (size_t k = 0; k < off.size(); ++k)
        STOKER_ENFORCE(off[k] + size[k] <= bytes, ValueError, kOp, ": chunk ", k, " of sample ", i,
                       " (offset ", off[k], ", size ", size[k], ") ends past the sample's ", bytes,
                       " bytes");
    } else if (has_off) {
      for (size_t k = 0; k < off.size(); ++k) {
        const int64_t end = k + 1 < off.size() ? off[k + 1] : bytes;
        STOKER_ENFORCE(end > off[k], ValueError, kOp,
                       ": without chunk_sizes the chunk_offsets must increase strictly; those "
                       "of sample ",
                       i, " do not");
        size.push_back(end - off[k]);
      }
    } else {
      int64_t at = 0;
      for (int64_t s : size) off.push_back(at), at += s;
      STOKER_ENFORCE(at <= bytes, ValueError, kOp, ": the chunk_sizes of sample ", i, " add up to ",
                     at, " bytes, more than the sample's ", bytes);
    }
    for (size_t k = 0; k < off.size(); ++k) out.push_back({i, int64_t(k), off[k], size[k]});
    return int64_t(off.size());
  }

  // Inflates one chunk on the host into its place in `out` (zero-filling what the block does
  // not, as DALI's gpu backend does).
  void inflate_chunk(const Chunk& c, const uint8_t* in, uint8_t* out, size_t cap) const {
    uint8_t* dst = out + size_t(c.index) * cap;
    const uint8_t* src = in + c.offset;
    const int64_t got = kernels::lz4_inflate_cpu(src, size_t(c.size), dst, cap);
    STOKER_ENFORCE(got != kernels::kLz4TooLarge, ValueError, kOp, ": chunk ", c.index,
                   " inflates to more than the ", cap,
                   " bytes of an output chunk (`shape` and `dtype` give its size)");
    STOKER_ENFORCE(got >= 0, ValueError, kOp, ": chunk ", c.index, " (bytes ", c.offset, " to ",
                   c.offset + c.size, " of the sample) is not a valid LZ4 block");
    if (size_t(got) < cap) std::memset(dst + got, 0, cap - size_t(got));
  }

  DType dtype_;
  std::string layout_, axis_;
  bool chunked_;
};

#ifdef STOKER_HAVE_CUDA
// nvCOMP's batched LZ4 on the stage's stream, all chunks of the batch in one call, outputs
// zeroed first so that short chunks end in zeros. Without libnvcomp at run time: the input comes
// to the host, liblz4 inflates it there and the result goes up (waiting for the stream).
class InflateGpu final : public Inflate {
 public:
  explicit InflateGpu(const OpSpec& spec)
      : Inflate(spec), check_sizes_(spec.arg<bool>("check_output_size")) {}

  void run(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Plan plan = make_plan(ws, in);
    Batch& out = add_output(ws, dtype_, plan.shapes, plan.layout);
    if (plan.chunks.empty()) return;  // nvCOMP refuses empty batches
    if (!kernels::nvcomp_unavailable().empty()) return on_host(ws, in, plan, out);
    size_t total = 0;
    for (int i = 0; i < out.size(); ++i) total += out.sample(i).num_bytes();
    cuda_check(kernels::fill_bytes_gpu(out.data(0), total, 0, ws.stream), "decoders.inflate: zero");
    const size_t n = plan.chunks.size();
    // Descriptor arrays, one upload: sources, their sizes, destinations, capacities.
    std::vector<uint64_t> d(4 * n);
    size_t max_cap = 0, total_cap = 0;
    for (size_t k = 0; k < n; ++k) {
      const Chunk& c = plan.chunks[k];
      const size_t cap = plan.chunk_bytes[size_t(c.sample)];
      d[k] = uint64_t(reinterpret_cast<uintptr_t>(in.data_as<const uint8_t>(c.sample) + c.offset));
      d[n + k] = uint64_t(c.size);
      d[2 * n + k] = uint64_t(reinterpret_cast<uintptr_t>(
          static_cast<uint8_t*>(out.data(c.sample)) + size_t(c.index) * cap));
      d[3 * n + k] = cap;
      max_cap = std::max(max_cap, cap), total_cap += cap;
    }
    auto desc = upload(ws, d);
    auto results = ws.device_pool->acquire_on(n * (sizeof(size_t) + sizeof(int)), ws.stream);
    const auto* a = static_cast<const uint64_t*>(desc->data());
    kernels::NvcompLz4Batch b{
        .src = reinterpret_cast<const void* const*>(a),
        .src_sizes = reinterpret_cast<const size_t*>(a + n),
        .dst = reinterpret_cast<void* const*>(a + 2 * n),
        .capacities = reinterpret_cast<const size_t*>(a + 3 * n),
        .inflated_sizes = static_cast<size_t*>(results->data()),
        .statuses = reinterpret_cast<int*>(static_cast<size_t*>(results->data()) + n),
        .n = n,
        .max_capacity = max_cap,
        .total_capacity = total_cap};
    if (check_sizes_) check_sizes(ws, b, plan);
    const size_t temp_bytes = kernels::nvcomp_lz4_temp_bytes(b);
    auto temp = ws.device_pool->acquire_on(std::max<size_t>(temp_bytes, 1), ws.stream);
    kernels::nvcomp_lz4_inflate(b, temp->data(), temp_bytes, ws.stream);
  }

 private:
  // check_output_size: every chunk's inflated size, read back (waiting for the stream).
  void check_sizes(Workspace& ws, const kernels::NvcompLz4Batch& b, const Plan& plan) const {
    kernels::nvcomp_lz4_inflated_sizes(b, b.inflated_sizes, ws.stream);
    std::vector<size_t> sizes(b.n);
    copy_to_host_async(sizes.data(), b.inflated_sizes, b.n * sizeof(size_t), ws.stream);
    synchronize_stream(ws.stream);
    for (size_t k = 0; k < b.n; ++k) {
      const Chunk& c = plan.chunks[k];
      const size_t cap = plan.chunk_bytes[size_t(c.sample)];
      STOKER_ENFORCE(sizes[k] <= cap, ValueError, kOp, ": sample ", c.sample, ": chunk ", c.index,
                     " inflates to ", sizes[k], " bytes, more than the ", cap,
                     " bytes of an output chunk (`shape` and `dtype` give its size)");
    }
  }

  void on_host(Workspace& ws, const Batch& in, const Plan& plan, Batch& out) const {
    STOKER_ENFORCE(kernels::lz4_available(), RuntimeError, kOp, ": nvCOMP cannot be used (",
                   kernels::nvcomp_unavailable(), ") and this stoker has no liblz4 either");
    std::vector<std::vector<uint8_t>> src(size_t(in.size())), dst(size_t(in.size()));
    for (int i = 0; i < in.size(); ++i) {
      src[size_t(i)].resize(in.sample(i).num_bytes());
      dst[size_t(i)].resize(out.sample(i).num_bytes());
      copy_to_host_async(src[size_t(i)].data(), in.data(i), src[size_t(i)].size(), ws.stream);
    }
    synchronize_stream(ws.stream);
    std::vector<std::vector<const Chunk*>> by_sample(static_cast<size_t>(in.size()));
    for (const Chunk& c : plan.chunks) by_sample[size_t(c.sample)].push_back(&c);
    for_each_sample(ws, in.size(), [&](int i, int) {
      for (const Chunk* c : by_sample[size_t(i)])
        inflate_chunk(*c, src[size_t(i)].data(), dst[size_t(i)].data(),
                      plan.chunk_bytes[size_t(i)]);
    });
    for (int i = 0; i < in.size(); ++i)
      if (!dst[size_t(i)].empty())
        copy_to_device_async(out.data(i), dst[size_t(i)].data(), dst[size_t(i)].size(), ws.stream);
    synchronize_stream(ws.stream);  // the host vectors go away with this call
  }

  bool check_sizes_;
};
#endif

}  // namespace

OpSchema inflate_schema() {
  return {
      .name = "decoders.inflate",
      .doc =
          "Decompresses LZ4 blocks (raw blocks, no frame: what nvCOMP's LZ4 and "
          "lz4.block.compress(data, store_size=False) write) into tensors of the given `shape` "
          "and `dtype`, as DALI's. The input is a 1-D uint8 tensor per sample, one block, or "
          "several when `chunk_offsets` and/or `chunk_sizes` say where they are: then `shape` "
          "is that of one inflated chunk and the output gains an outer axis of chunks, named "
          "`sequence_axis_name` in the layout. A block inflating to fewer bytes than the shape "
          "holds leaves zeros after its data (as DALI's); one inflating to more, or a "
          "malformed one, is an error on the cpu backend. cpu: liblz4; gpu: nvCOMP (opened at "
          "run time; without it the gpu backend inflates on the host).",
      .inputs = {"data"},
      .outputs = {"output"},
      .args = {{"shape", ArgType::kIntList,
                "The shape of one inflated sample (or chunk, with chunk_offsets/chunk_sizes); "
                "every sample's has the same number of extents.",
                std::nullopt, /*per_sample=*/true},
               {"dtype", ArgType::kDType, "The inflated data's type.", std::string("uint8")},
               optional_arg("chunk_offsets", ArgType::kIntList,
                            "Where each compressed chunk of a sample starts; without "
                            "chunk_sizes each chunk ends where the next starts (the last at "
                            "the sample's end)."),
               optional_arg("chunk_sizes", ArgType::kIntList,
                            "The byte size of each compressed chunk of a sample; without "
                            "chunk_offsets the chunks follow one another from the sample's "
                            "start."),
               {"algorithm", ArgType::kString, "The compression: 'LZ4' (any case) only.",
                std::string("LZ4")},
               {"layout", ArgType::kString,
                "The layout of an inflated chunk (as many letters as `shape` has extents); "
                "with chunks, `sequence_axis_name` is put in front.",
                std::string()},
               {"sequence_axis_name", ArgType::kString,
                "The layout letter of the chunk axis (used only with `layout` and chunks).",
                std::string("F")},
               {"check_output_size", ArgType::kBool,
                "gpu backend: check before inflating that every chunk fits its output (waits "
                "for the GPU). The cpu backend always checks: it costs nothing there.",
                false}},
      .make_cpu = [](const OpSpec& s) { return std::make_unique<Inflate>(s); },
#ifdef STOKER_HAVE_CUDA
      .make_gpu = [](const OpSpec& s) { return std::make_unique<InflateGpu>(s); },
#endif
      .example =
          OpExample{.args = {{"shape", std::vector<int64_t>{4}}}, .dtype = "uint8", .layout = ""},
      .deprecated_names = {"experimental.inflate"},
  };
}

}  // namespace stoker::ops
