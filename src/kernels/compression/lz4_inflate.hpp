// LZ4 block decompression (the raw block format, no frame: what nvCOMP's batched LZ4 and
// lz4.block.compress(store_size=False) produce), on the host with liblz4 and on the GPU with
// nvCOMP. liblz4 is optional at build time (Debian liblz4-dev) and nvCOMP is opened at run time,
// so a build without either still builds and loads; each says whether it is there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "stoker/core/cuda.hpp"

namespace stoker::kernels {

// Whether this build has liblz4 (the host decompressor).
bool lz4_available();

// Decompresses one LZ4 block of `src_size` bytes into at most `capacity` bytes of `dst`.
// Returns the number of bytes produced, kLz4TooLarge when the block inflates to more than
// `capacity` bytes, kLz4Malformed when it is not a valid block. Never reads or writes outside
// the two ranges. Throws RuntimeError when liblz4 is not in this build.
inline constexpr int64_t kLz4Malformed = -1;
inline constexpr int64_t kLz4TooLarge = -2;
int64_t lz4_inflate_cpu(const uint8_t* src, size_t src_size, uint8_t* dst, size_t capacity);

// A batch of chunks for nvCOMP's batched LZ4: arrays of `n` entries in device memory.
struct NvcompLz4Batch {
  const void* const* src = nullptr;
  const size_t* src_sizes = nullptr;
  void* const* dst = nullptr;
  const size_t* capacities = nullptr;
  size_t* inflated_sizes = nullptr;  // written: each chunk's output bytes
  int* statuses = nullptr;           // written: nvcompStatus_t per chunk
  size_t n = 0;
  size_t max_capacity = 0;    // the largest entry of `capacities`
  size_t total_capacity = 0;  // their sum
};

// Why nvCOMP's batched LZ4 cannot be used ("" when it can): this build has no nvCOMP header or
// no CUDA, or libnvcomp cannot be opened (tried: $STOKER_NVCOMP_LIBRARY, libnvcomp.so.5, .so.4,
// .so, then PyPI's nvidia/libnvcomp/lib64 beside the folder holding stoker's library). Decided
// once per process.
std::string nvcomp_unavailable();

// Device scratch that nvcomp_lz4_inflate needs for the batch.
size_t nvcomp_lz4_temp_bytes(const NvcompLz4Batch& b);
// Decompresses the batch on `stream`. A chunk that inflates to fewer bytes than its capacity
// leaves the rest of its output as it was (the caller zeroes outputs first, as DALI fills the
// tails). Throws RuntimeError when nvCOMP refuses the call.
void nvcomp_lz4_inflate(const NvcompLz4Batch& b, void* temp, size_t temp_bytes,
                        StreamHandle stream);
// Writes each chunk's inflated size to `sizes` (device, n entries) on `stream` (nvCOMP reads
// the blocks; a malformed block's size is not meaningful).
void nvcomp_lz4_inflated_sizes(const NvcompLz4Batch& b, size_t* sizes, StreamHandle stream);

}  // namespace stoker::kernels
