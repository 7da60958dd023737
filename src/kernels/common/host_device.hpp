// STOKER_HD marks functions compiled for both the host and the device: the GPU kernels' value
// arithmetic, shared with the CPU references their tests compare against.
#pragma once

#if defined(__CUDACC__)
#define STOKER_HD __host__ __device__
#else
#define STOKER_HD
#endif
